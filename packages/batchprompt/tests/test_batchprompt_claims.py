"""The claims' verdicts on small hand-made metrics: ties do not pass, SmolLM2's accuracy loss
fails the BPE+SEAS claim, and the generated task's premise is a claim that can fail."""

from iclr24_batchprompt.claims import make_claims
from iclr24_batchprompt.experiment import PRESETS

from iclr24_common import Metrics

PRESET = PRESETS["default"]  # batch sizes 1, 4, 16; SEAS at 16; 5 votes; sentiment


def _metrics(single=(0.94, 0.94, 0.91), bs16=(0.47, 0.41, 0.50), seas=(0.53, 0.56, 0.53)):
    m = Metrics()
    for s in range(3):
        m.update(s, {"llm/bs1/v1/acc": single[s], "llm/bs1/v1/prompt_tokens": 9000 + 10 * s,
                     "llm/bs1/v1/calls": 32, "llm/bs16/seas/acc": seas[s],
                     "llm/bs16/seas/prompt_tokens": 4000 + s, "llm/bs16/first_half_acc": 0.5,
                     "llm/bs16/second_half_acc": 0.4})  # fmt: skip
        for b in (4, 16):
            for v in range(1, PRESET.votes + 1):
                m.update(s, {f"llm/bs{b}/v{v}/acc": bs16[s], f"llm/bs{b}/v{v}/calls": 2 * v,
                             f"llm/bs{b}/v{v}/prompt_tokens": 900 * v + s})  # fmt: skip
    return m


def _verdicts(m: Metrics) -> dict[str, str]:
    return {c.id: c.verdict for c in make_claims(m, PRESET)}


def test_smollm2_like_numbers():
    assert _verdicts(_metrics()) == {
        "batching-saves-tokens": "holds",
        "naive-batching-costs-accuracy": "holds",
        "bpe-seas-vs-single": "fails",  # -0.4: far outside 1 accuracy point
        "generated-task-solvable": "holds",
    }


def test_ties_do_not_pass():
    same = (0.80, 0.82, 0.81)
    v = _verdicts(_metrics(single=same, bs16=same, seas=same))
    assert v["naive-batching-costs-accuracy"] == "fails"  # no loss is not a loss
    assert v["generated-task-solvable"] == "fails"  # 0.81 on average: below 0.9 by more than 2 SE


def test_competitive_within_one_point_holds():
    v = _verdicts(_metrics(seas=(0.94, 0.95, 0.91)))
    assert v["bpe-seas-vs-single"] == "holds"

"""The claims' verdicts on small hand-made metrics: the LLM must reach the optimum in every
seed and be no worse than the stronger search within 1 unit; a prompt gain needs a point."""

from iclr24_opro.claims import make_claims
from iclr24_opro.experiment import PRESETS

from iclr24_common import Metrics


def _metrics(llm_found=(1, 1, 1), llm_excess=(0, 0, 0), local_excess=(0, 0, 0),
             opro=(0.75, 0.79, 0.71), human=(0.75, 0.79, 0.71)) -> Metrics:  # fmt: skip
    m = Metrics()
    for s in range(3):
        for task, value, judged in (("linreg", "excess_loss", "excess_loss"),
                                    ("tsp", "gap", "excess_length")):  # fmt: skip
            for b, found, ex in (("llm", llm_found[s], llm_excess[s]), ("random", 0, 300.0 + s),
                                 ("local", 1, local_excess[s])):  # fmt: skip
                m.update(s, {f"{task}/{b}/{judged}": ex, f"{task}/{b}/{value}": ex,
                             f"{task}/{b}/found": found, f"{task}/{b}/evaluations": 20,
                             f"{task}/{b}/evaluations_to_optimum": 15})  # fmt: skip
            m.update(s, {f"{task}/llm/parse_rate": 0.9, f"{task}/llm/steps": 8})
        m.update(s, {"tsp/nn/gap": 6.0, "tsp/fi/gap": 3.0, "prompt/opro/test_acc": opro[s],
                     "prompt/human/test_acc": human[s], "prompt/kojima/test_acc": 0.5,
                     "prompt/start/test_acc": 0.6, "prompt/empty/test_acc": 0.5,
                     "prompt/n_test": 24, "prompt/opro/train_acc": 0.8,
                     "prompt/opro/instructions_scored": 8})  # fmt: skip
    return m


def _verdicts(m: Metrics) -> dict[str, str]:
    return {c.id: c.verdict for c in make_claims(m, PRESETS["default"])}


def test_optimum_in_every_seed_ties_with_the_search_holds_and_a_prompt_tie_fails():
    assert _verdicts(_metrics()) == {"linreg-llm-vs-search": "holds",
                                     "tsp-llm-vs-search": "holds",
                                     "prompt-beats-human": "fails"}  # fmt: skip


def test_one_seed_without_the_optimum_fails():
    v = _verdicts(_metrics(llm_found=(1, 0, 1), llm_excess=(0, 5.0, 0)))
    assert v["linreg-llm-vs-search"] == v["tsp-llm-vs-search"] == "fails"


def test_prompt_gain_of_points_holds():
    v = _verdicts(_metrics(opro=(0.83, 0.88, 0.79)))
    assert v["prompt-beats-human"] == "holds"

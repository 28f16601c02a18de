"""The claims' verdicts on small hand-made metrics: the LLM must reach the optimum in every
seed (an exact count) and be no worse than the stronger search within 1 unit, while the no-op
arm (the best starting solution) must not pass the same test; a prompt gain needs a point over
the best human instruction, and the starting instruction must not earn it; every claim names
its regime."""

import pytest
from iclr24_opro.claims import make_claims, paper_class, regime
from iclr24_opro.experiment import PRESETS

from iclr24_common import Metrics
from iclr24_common.results import contract_problems


def _metrics(llm_found=(1, 1, 1), llm_excess=(0, 0, 0), local_excess=(0, 0, 0),
             start_excess=(40.0, 55.0, 47.0), opro=(0.75, 0.79, 0.71),
             human=(0.75, 0.79, 0.71), start=(0.6, 0.62, 0.58)) -> Metrics:  # fmt: skip
    m = Metrics()
    for s in range(3):
        for task, value, judged in (("linreg", "excess_loss", "excess_loss"),
                                    ("tsp", "gap", "excess_length")):  # fmt: skip
            for b, found, ex in (("llm", llm_found[s], llm_excess[s]), ("random", 0, 300.0 + s),
                                 ("local", 1, local_excess[s])):  # fmt: skip
                m.update(s, {f"{task}/{b}/{judged}": ex, f"{task}/{b}/{value}": ex,
                             f"{task}/{b}/found": found, f"{task}/{b}/evaluations": 20,
                             f"{task}/{b}/evaluations_to_optimum": 15})  # fmt: skip
            m.update(s, {f"{task}/no_step/{judged}": start_excess[s],
                         f"{task}/no_step/{value}": start_excess[s],
                         f"{task}/llm/parse_rate": 0.9, f"{task}/llm/steps": 8})  # fmt: skip
        m.update(s, {"tsp/nn/gap": 6.0, "tsp/fi/gap": 3.0, "prompt/opro/test_acc": opro[s],
                     "prompt/human/test_acc": human[s], "prompt/kojima/test_acc": 0.5,
                     "prompt/start/test_acc": start[s], "prompt/empty/test_acc": 0.5,
                     "prompt/n_test": 24, "prompt/opro/train_acc": 0.8,
                     "prompt/opro/instructions_scored": 8, "prompt/opro/changed": 1.0})  # fmt: skip
    return m


def _claims(m: Metrics, preset=PRESETS["default"], items=None):
    return {c.id: c for c in make_claims(m, preset, items)}


def _verdicts(m: Metrics) -> dict[str, str]:
    return {k: c.verdict for k, c in _claims(m).items()}


def test_optimum_in_every_seed_holds_and_a_prompt_tie_fails():
    assert _verdicts(_metrics()) == {"linreg-llm-vs-search": "holds",
                                     "tsp-llm-vs-search": "holds",
                                     "prompt-beats-human": "fails"}  # fmt: skip


def test_one_seed_without_the_optimum_fails_on_the_exact_count():
    c = _claims(_metrics(llm_found=(1, 0, 1), llm_excess=(0, 5.0, 0)))
    for cid in ("linreg-llm-vs-search", "tsp-llm-vs-search"):
        assert c[cid].verdict == "fails" and c[cid].test.n == 1  # one value: the count
    assert "improved on its best starting solution in 3 of 3" in c["linreg-llm-vs-search"].moved


def test_the_searches_beside_the_count_do_not_decide_it():
    # a search far better at equal evaluations does not fail an LLM that found the optimum
    # (its excess, 0, is the minimum), nor does a search stuck at the starts pass one that did not
    assert _verdicts(_metrics(local_excess=(0.0, 0.0, 0.0)))["tsp-llm-vs-search"] == "holds"
    same = (60.0, 50.0, 55.0)
    m = _metrics(llm_found=(0, 0, 0), llm_excess=same, local_excess=same, start_excess=same)
    assert _verdicts(m)["tsp-llm-vs-search"] == "fails"


def test_prompt_gain_of_points_holds():
    v = _verdicts(_metrics(opro=(0.83, 0.88, 0.79)))
    assert v["prompt-beats-human"] == "holds"


def test_prompt_gain_the_starting_instruction_also_earns_is_inconclusive():
    c = _claims(_metrics(opro=(0.83, 0.88, 0.79), start=(0.85, 0.86, 0.80)))["prompt-beats-human"]
    assert c.verdict == "inconclusive" and "control passes" in c.test.reason


def test_shared_test_split_needs_and_uses_the_per_example_scores():
    gsm = PRESETS["paper"]
    m = _metrics(opro=(0.75, 0.75, 0.75), human=(0.5, 0.5, 0.5), start=(0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="items="):
        make_claims(m, gsm)
    # every seed scored the same on 4 shared questions: SE over seeds 0, over items not
    items = {"opro": dict.fromkeys(range(3), [1, 1, 1, 0]),
             "human": dict.fromkeys(range(3), [1, 0, 1, 0]),
             "start": dict.fromkeys(range(3), [1, 0, 0, 1])}  # fmt: skip
    c = _claims(m, gsm, items)["prompt-beats-human"]
    assert c.test_set == "shared" and c.test.se_basis == "items" and c.test.se > 0
    assert c.verdict == "inconclusive"
    wide = {k: {s: v * 10 for s, v in d.items()} for k, d in items.items()}
    assert _claims(m, gsm, wide)["prompt-beats-human"].verdict == "holds"


def test_regime_is_below_with_the_offline_model_and_paper_with_the_papers_llm_at_budget():
    default = PRESETS["default"]
    for task in ("linreg", "tsp", "prompt"):
        reg, needs = regime(default, task)
        assert reg == "below" and "SmolLM2-135M-Instruct" in needs and "e81b2f5" in needs
    gpt = "openai:gpt-4@https://api.openai.com/v1"
    assert paper_class(gpt) and not paper_class("local") and not paper_class("openai:qwen@x")
    paper = PRESETS["paper"].__class__(**{**PRESETS["paper"].__dict__, "llm": gpt, "scorer": gpt})
    assert regime(paper, "linreg") == ("paper", "") and regime(paper, "prompt") == ("paper", "")
    short = paper.__class__(**{**paper.__dict__, "linreg_steps": 8})
    assert regime(short, "linreg")[0] == "below"
    assert regime(paper, "tsp") == ("paper", "")
    # the official steps with fewer proposals per step than the official 8 are below it
    for task, field in (("linreg", "linreg_per_step"), ("tsp", "tsp_per_step")):
        few = paper.__class__(**{**paper.__dict__, field: 4})
        reg, needs = regime(few, task)
        assert reg == "below" and "500 step(s) of 4 " in needs, needs
    assert "1 step(s) of 2 proposals" in regime(default, "linreg")[1]
    assert "1 step(s) of 2 valid traces (at most 2 samples)" in regime(default, "tsp")[1]


def test_claims_keep_the_v4_contract():
    res = {"claims": [c.to_dict() for c in make_claims(_metrics(), PRESETS["default"])],
           "premises": []}  # fmt: skip
    problems = [p for p in contract_problems(res, v4=True) if "claim" in p]
    assert not problems, problems

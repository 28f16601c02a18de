"""The methods end to end with the scripted capable model, and claims computed from numbers."""

import numpy as np
import pytest
from iclr24_analogical import MATH_METHODS, MathContext, make_split, run_method
from iclr24_analogical.claims import make_claims, make_premises
from iclr24_analogical.experiment import PRESETS, Preset
from iclr24_analogical.scripted import scripted_solver

from iclr24_common import Metrics
from iclr24_common.results import apply_premises, contract_problems


@pytest.mark.parametrize("method", [m for m in MATH_METHODS if m != "retrieved_cot"])
def test_scripted_capable_model_is_judged_right(method):
    pool, test = make_split(3, 8, seed=0)
    llm = scripted_solver(test + pool)
    summary, records = run_method(llm, method, test, MathContext(pool), max_new_tokens=200)
    assert summary["acc"] == 1.0 and summary["extraction_rate"] == 1.0, records[0]
    assert all(r["target"] == r["answer"] for r in records)


def test_wrong_model_is_judged_wrong():
    pool, test = make_split(3, 8, seed=0)
    from iclr24_llm import ScriptedBackend

    llm = ScriptedBackend(lambda p: "## Solve the Initial Problem:\nA: \\boxed{-1}")
    summary, _ = run_method(llm, "analogical", test, MathContext(pool), max_new_tokens=50)
    assert summary["acc"] == 0.0 and summary["format_rate"] == 1.0


N_TEST = 8


def _metrics(acc: dict, tokens: dict, cut: dict | None = None) -> Metrics:
    m = Metrics()
    for seed in (0, 1, 2):
        for name in MATH_METHODS:
            m.update(seed, {f"llm/{name}/acc": acc[name] + 0.01 * seed,
                            f"llm/{name}/output_tokens": tokens.get(name, 100.0) + 10 * seed * (name == "analogical"),
                            f"llm/{name}/extraction_rate": 1.0, f"llm/{name}/marker_rate": 1.0,
                            f"llm/{name}/truncated_rate": (cut or {}).get(name, 0.0),
                            f"llm/{name}/n": float(N_TEST)})  # fmt: skip
    return m


def _counts(right: dict[str, tuple[int, int, int]]) -> tuple[Metrics, dict]:
    """Metrics and per-problem items from right answers (of ``N_TEST``) per seed and method."""
    m, items = Metrics(), {}
    for j, name in enumerate(MATH_METHODS):
        ks = right.get(name, (2, 2, 2))
        for seed, k in enumerate(ks):
            row = np.zeros(N_TEST)
            row[np.random.default_rng([seed, j]).permutation(N_TEST)[:k]] = 1.0
            items.setdefault(name, {})[seed] = row.tolist()
            m.update(seed, {f"llm/{name}/acc": k / N_TEST, f"llm/{name}/output_tokens": 100.0,
                            f"llm/{name}/extraction_rate": 1.0, f"llm/{name}/marker_rate": 1.0,
                            f"llm/{name}/truncated_rate": 0.0, f"llm/{name}/n": float(N_TEST)})  # fmt: skip
    return m, items


def _judge(m: Metrics, preset=None, items=None, shared=False):
    preset = preset or PRESETS["default"]
    claims, premises = make_claims(m, preset, items, shared), make_premises(m, preset, items)
    apply_premises(claims, premises)
    return {c.id: c for c in claims}, {p.id: p for p in premises}


def test_an_exemplars_answer_is_not_the_models():
    # the model writes an exemplar whose box holds the right number, then stops before the
    # solve part: the analogical methods score it wrong (not extracted), 0-shot CoT reads it
    pool, test = make_split(3, 8, seed=0)
    from iclr24_llm import ScriptedBackend

    answers = {p.question: p.answer for p in test}

    def exemplar_only(prompt) -> str:
        text = prompt if isinstance(prompt, str) else prompt[-1]["content"]
        a = next(a for q, a in answers.items() if q in text)
        return f"# Relevant Problems:\nQ1: ...\nA: so \\boxed{{{a}}}"

    llm = ScriptedBackend(exemplar_only)
    for method in ("analogical", "analogical_random"):
        summary, records = run_method(llm, method, test, MathContext(pool), max_new_tokens=50)
        assert summary["acc"] == 0.0 and summary["extraction_rate"] == 0.0
        assert summary["marker_rate"] == 0.0 and {r["rule"] for r in records} == {"no_marker"}
    summary, _ = run_method(llm, "zero_shot_cot", test, MathContext(pool), max_new_tokens=50)
    assert summary["acc"] == 1.0 and summary["extraction_rate"] == 1.0


def test_claims_over_the_cut_limit_rest_on_a_failed_budget_premise():
    acc = dict.fromkeys(MATH_METHODS, 0.2) | {"analogical": 0.5}
    claims, premises = _judge(_metrics(acc, {"analogical": 300.0}, {"analogical": 0.5}))
    assert premises["within-budget/analogical"].verdict == "fails"
    assert premises["within-budget/zero_shot"].verdict == "holds"
    for cid in ("small-model-labelled-win", "beats-zero-shot"):
        assert claims[cid].verdict == "inconclusive"
        assert claims[cid].premise.startswith("premise within-budget/analogical fails: 0.500")
    # a cut analogical answer only lowers its token count: the cost claim's pass stands ...
    assert claims["cost-output-tokens"].holds
    # ... but not when 0-shot CoT (the denominator) is cut, nor a failure when analogical is
    claims, _ = _judge(_metrics(acc, {"analogical": 300.0}, {"zero_shot_cot": 0.2}))
    assert claims["cost-output-tokens"].verdict == "inconclusive"
    assert claims["cost-output-tokens"].premise.startswith("premise within-budget/zero_shot_cot")
    assert claims["beats-zero-shot"].holds  # the stronger of the zero-shot pair is not cut
    claims, _ = _judge(_metrics(acc, {}, {"analogical": 0.5}))
    assert claims["cost-output-tokens"].verdict == "inconclusive"
    # "fewer than 5 %": one answer of 24 (0.042) keeps the premise, 0.05 does not
    claims, premises = _judge(_metrics(acc, {}, dict.fromkeys(MATH_METHODS, 1 / 24)))
    assert claims["beats-zero-shot"].holds and claims["cost-output-tokens"].verdict == "fails"
    _, premises = _judge(_metrics(acc, {}, dict.fromkeys(MATH_METHODS, 0.05)))
    assert premises["within-budget/analogical"].verdict == "fails"


def test_claims_follow_the_numbers():
    acc = dict.fromkeys(MATH_METHODS, 0.2) | {"analogical": 0.5}
    claims, _ = _judge(_metrics(acc, {"analogical": 300.0}))
    assert claims["cost-output-tokens"].holds
    assert not claims["small-model-labelled-win"].holds  # analogical won: the claim fails
    assert claims["beats-zero-shot"].holds
    claims, _ = _judge(_metrics(dict.fromkeys(MATH_METHODS, 0.3), {}))
    assert not claims["cost-output-tokens"].holds and not claims["beats-zero-shot"].holds
    # a tie passes nothing: equal accuracies fail "more accurate" (margin 1 point)
    assert claims["small-model-labelled-win"].verdict == "fails"
    assert claims["beats-zero-shot"].verdict == "fails"
    large, _ = _judge(_metrics(acc, {}), Preset(llm="openai:m@http://x"))
    assert large["capable-model-analogical-wins"].holds and "small-model-labelled-win" not in large


def test_random_domain_exemplars_are_the_no_op_of_beats_zero_shot():
    # random-domain self-generated exemplars beat 0-shot just as well: relevance is not shown
    acc = dict.fromkeys(MATH_METHODS, 0.2) | {"analogical": 0.5, "analogical_random": 0.5}
    claims, _ = _judge(_metrics(acc, {}))
    c = claims["beats-zero-shot"]
    assert c.verdict == "inconclusive" and "control passes" in c.test.reason
    assert "relevance-matters" not in claims  # not a claim of this paper


def test_regimes():
    claims, _ = _judge(_metrics(dict.fromkeys(MATH_METHODS, 0.3), {}))
    assert claims["small-model-labelled-win"].regime == "paper"  # Table 4: small models
    for cid in ("cost-output-tokens", "beats-zero-shot"):
        assert claims[cid].regime == "below" and "SmolLM2-135M" in claims[cid].needs
    gpt = Preset(llm="openai:gpt-3.5-turbo@http://x", task="gsm8k", n_test=1319)
    large, _ = _judge(_metrics(dict.fromkeys(MATH_METHODS, 0.3), {}), gpt)
    assert large["capable-model-analogical-wins"].regime == "paper"


def test_item_level_se_on_the_problems():
    # every seed scores the same (SE 0 over seeds): the problems' SE decides
    right = {"analogical": (6, 6, 6), "zero_shot": (2, 2, 2), "zero_shot_cot": (2, 2, 2),
             "analogical_random": (1, 1, 1)}  # fmt: skip
    m, items = _counts(right)
    claims, _ = _judge(m)
    assert claims["beats-zero-shot"].verdict == "inconclusive"  # SE 0 without items
    claims, _ = _judge(m, items=items)
    c = claims["beats-zero-shot"]
    assert c.verdict == "holds" and c.test.se_basis == "items" and c.test.se > 0
    with pytest.raises(ValueError, match="items="):
        make_claims(m, PRESETS["default"], None, shared=True)
    assert _judge(m, items=items, shared=True)[0]["beats-zero-shot"].test_set == "shared"


def test_a_win_within_seed_noise_is_not_a_claim():
    # analogical right on one seed only (0.25, 0, 0) vs 0 for every rival: the mean gap is
    # positive (0.083) but within 2 SE of the paired seed differences (SE 0.083)
    m = Metrics()
    for seed, a in enumerate((0.25, 0.0, 0.0)):
        for name in MATH_METHODS:
            m.update(seed, {f"llm/{name}/acc": a if name == "analogical" else 0.0,
                            f"llm/{name}/output_tokens": 100.0, f"llm/{name}/extraction_rate": 1.0,
                            f"llm/{name}/marker_rate": 1.0, f"llm/{name}/truncated_rate": 0.0,
                            f"llm/{name}/n": 8.0})  # fmt: skip
    claims, _ = _judge(m)
    assert not claims["beats-zero-shot"].holds


def test_bad_preset_values():
    with pytest.raises(ValueError, match="methods"):
        Preset(methods=("nope",))
    with pytest.raises(ValueError, match="task"):
        Preset(task="mmlu")
    with pytest.raises(ValueError, match="n_test"):
        Preset(n_test=0)


def test_seeds_get_different_problems():
    from iclr24_analogical.experiment import code_problems_for, problems_for

    preset = PRESETS["default"]
    names = [p.name for s in preset.seeds for p in code_problems_for(preset, s)]
    assert len(set(names)) == len(names) == len(preset.seeds) * preset.code_problems
    tests = [tuple(p.question for p in problems_for(preset, None, s)[1]) for s in (0, 1)]
    assert tests[0] != tests[1] and len(tests[0]) == preset.n_test


def test_retrieval_is_a_premise_that_can_fail():
    m = _metrics(dict.fromkeys(MATH_METHODS, 0.3), {})
    per = {0: [1.0, 1.0, 0.8, 1.0, 1.0, 0.8, 1.0, 0.8], 1: [1.0] * 6 + [0.8, 0.8],
           2: [1.0, 0.8, 1.0, 1.0, 0.8, 1.0, 1.0, 1.0]}  # fmt: skip
    for seed, row in per.items():
        m.add("retrieval/same_family_rate", seed, float(np.mean(row)))
    claims, premises = _judge(m, items={"retrieval": per})
    p = premises["retrieval-same-family"]
    assert p.verdict == "holds" and p.test.se_basis == "items" and "chance 1/4" in p.measured
    assert "retrieval-same-family" in claims["small-model-labelled-win"].rests_on
    low = _metrics(dict.fromkeys(MATH_METHODS, 0.3), {})
    per = {s: [0.6, 0.4] * 4 for s in range(3)}
    for seed, row in per.items():
        low.add("retrieval/same_family_rate", seed, float(np.mean(row)))
    claims, premises = _judge(low, items={"retrieval": per})
    assert premises["retrieval-same-family"].verdict == "fails"
    assert claims["small-model-labelled-win"].verdict == "inconclusive"


def test_claims_keep_the_v4_contract():
    m, items = _counts({"analogical": (3, 4, 2)})
    res = {"claims": [c.to_dict() for c in make_claims(m, PRESETS["default"], items)],
           "premises": [p.to_dict() for p in make_premises(m, PRESETS["default"], items)]}  # fmt: skip
    assert not [p for p in contract_problems(res, v4=True) if "claim" in p or "premise" in p]


def _code(m: Metrics, right: dict[str, tuple[int, ...]], cut: dict | None = None, n: int = 8):
    """Code metrics and per-problem Acc@1 items: ``right[method]`` programs right per seed."""
    items = {}
    for j, method in enumerate(("zero_shot", "analogical")):
        for seed, k in enumerate(right[method]):
            row = np.zeros(n)
            row[np.random.default_rng([seed, j, 7]).permutation(n)[:k]] = 1.0
            items.setdefault(f"code_{method}", {})[seed] = row.tolist()
            m.update(seed, {f"code/{method}/acc1": k / n, f"code/{method}/acck": k / n,
                            f"code/{method}/no_code_rate": 0.0,
                            f"code/{method}/no_marker_rate": 0.0,
                            f"code/{method}/truncated_rate": (cut or {}).get(method, 0.0),
                            f"code/{method}/output_tokens": 100.0, f"code/{method}/n": float(n)})  # fmt: skip
    return items


def test_code_claim_needs_its_programs_within_the_budget():
    # issue 49: a program cut at the token budget is not a wrong program: the code claim
    # rests on both methods' within-budget premises, judged over seeds and problems
    base, right = (
        dict.fromkeys(MATH_METHODS, 0.3),
        {"analogical": (6, 7, 6), "zero_shot": (1, 2, 1)},
    )
    m = _metrics(base, {})
    items = _code(m, right)
    claims, premises = _judge(m, items=items)
    c = claims["code-knowledge-exemplars"]
    assert c.verdict == "holds" and c.test.se_basis in ("items", "seeds") and c.test.n == 3
    assert set(c.rests_on) == {"within-budget/code_analogical", "within-budget/code_zero_shot"}
    assert premises["within-budget/code_analogical"].verdict == "holds"
    # the same numbers with half of analogical's programs cut: not judged
    m = _metrics(base, {})
    items = _code(m, right, {"analogical": 0.5})
    claims, premises = _judge(m, items=items)
    assert premises["within-budget/code_analogical"].verdict == "fails"
    c = claims["code-knowledge-exemplars"]
    assert c.verdict == "inconclusive" and "within-budget/code_analogical" in c.premise
    # within the budget, a loss fails: the guard turns nothing into a pass
    m = _metrics(base, {})
    items = _code(m, {"analogical": (0, 1, 0), "zero_shot": (6, 7, 6)})
    assert _judge(m, items=items)[0]["code-knowledge-exemplars"].verdict == "fails"
    # one right program on one seed is within the problems' noise
    m = _metrics(base, {})
    items = _code(m, {"analogical": (1, 0, 0), "zero_shot": (0, 0, 0)})
    assert _judge(m, items=items)[0]["code-knowledge-exemplars"].verdict == "inconclusive"


def test_units_are_independent_and_pickle():
    import pickle

    from iclr24_analogical.experiment import jobs_for

    preset = PRESETS["default"]
    jobs = jobs_for(preset, None, preset.seeds, 1, "cpu")
    per_seed = len(preset.methods) + 2 + 2  # methods, code x 2, scripted, retrieval
    assert len(jobs) == per_seed * len(preset.seeds)
    assert next(iter(jobs)) == "seed0/analogical"  # the slowest first
    assert pickle.loads(pickle.dumps(jobs)).keys() == jobs.keys()

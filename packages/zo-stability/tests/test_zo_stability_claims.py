"""The claims' and bound checks' criteria on small hand-made inputs (fast): an overflowing
bound is vacuous, a diverged run is never counted as a win (inconclusive), a 10 % ordering
margin is required; the equal-training-loss reading, the slope in n and the paper's orders;
the premises (a failing one makes its claims inconclusive) and every criterion's source."""

from types import SimpleNamespace

import numpy as np
import pytest
from iclr24_zo_stability.bounds import paper_order_T
from iclr24_zo_stability.claims import (
    bound_checks,
    divergence_premises,
    equal_loss,
    equal_loss_premises,
    n_slope,
    ordering_claims,
    per_query_premise,
    rate_claims,
)
from iclr24_zo_stability.experiment import diverged_runs

from iclr24_common import Metrics
from iclr24_common.results import apply_premises

SEEDS = range(6)


def _cell(delta, bound, L=1.0):
    delta = np.asarray(delta, dtype=float)
    per_seed = {"delta_T": delta, "gen_gap": np.full(delta.shape, 1e-3),
                "loss_diff": np.full(delta.shape, 1e-3)}  # fmt: skip
    return {"constants": {"L": L}, "bound": np.array([0.0, bound]), "per_seed": per_seed}


def test_a_bound_that_overflows_is_vacuous_and_a_tight_one_is_labelled():
    d = [0.010, 0.011, 0.009, 0.010, 0.012, 0.008]
    results = {("p", "sgd", "coord"): _cell(d, 0.5), ("p", "sgd", "gauss1"): _cell(d, np.inf)}
    (check,) = bound_checks(results, SimpleNamespace(problems=("p",)))
    assert check.holds and check.kind == "bound (re-derived)" and check.label == "tight"
    assert "no finite bound: 1" in check.measured and "2 cells" in check.criterion
    (check,) = bound_checks({("p", "sgd", "gauss1"): _cell(d, np.inf)},
                            SimpleNamespace(problems=("p",)))  # fmt: skip
    assert check.holds and check.label == "vacuous"


def test_the_gen_gap_part_of_the_bound_check_allows_the_seeds_noise():
    # issue 50: at a 1-point step the runs barely move, L B_T ~ 1e-5, and the measured gap is
    # the sampling noise of S around an expected gap of 0: |mean| - 2 SE against L B_T
    d = [1e-6, 1.1e-6, 0.9e-6, 1e-6, 1.2e-6, 0.8e-6]
    noisy = _cell(d, 1e-5)
    noisy["per_seed"]["gen_gap"] = np.array([0.02, -0.03, 0.01, -0.01, 0.025, -0.02])
    noisy["per_seed"]["loss_diff"] = np.full(6, 1e-7)  # |f(w) - f(w')| <= L delta
    (check,) = bound_checks({("p", "sgd", "gauss1"): noisy}, SimpleNamespace(problems=("p",)))
    assert check.holds and "- 2 SE" in check.criterion
    biased = _cell(d, 1e-5)  # a gap of 0.02 on every seed is not noise: fails
    biased["per_seed"]["gen_gap"] = np.array([0.02, 0.021, 0.019, 0.02, 0.022, 0.018])
    biased["per_seed"]["loss_diff"] = np.full(6, 1e-7)
    (check,) = bound_checks({("p", "sgd", "gauss1"): biased}, SimpleNamespace(problems=("p",)))
    assert not check.holds


def _ordering(coord, gauss2, gauss1, equal_loss_ids=()):
    m = Metrics()
    for s in SEEDS:
        for k, v in (("coord", coord), ("gauss2", gauss2), ("gauss1", gauss1)):
            m.add(f"p/sgd/{k}/delta_T", s, v[s])
    preset = SimpleNamespace(estimators=("coord", "gauss2", "gauss1"), algorithms=("sgd",), mu=1e-3,
                             problems=("p",), seeds=tuple(SEEDS))  # fmt: skip
    return {c.id: c for c in ordering_claims(m, preset, equal_loss_ids)}


def test_ordering_needs_the_margin_and_never_counts_a_diverged_run_as_a_win():
    coord = [0.010, 0.011, 0.009, 0.010, 0.012, 0.008]
    gauss2 = [3 * x for x in coord]
    claims = _ordering(coord, gauss2, [np.inf] * 5 + [1.0])
    assert claims["ordering/sgd/p"].verdict == "holds"  # coordinate vs 2-point: decided
    one = claims["ordering-1pt/sgd"]  # 1-point diverged in 5 of 6 seeds: not compared
    assert one.verdict == "inconclusive" and "diverged in 5" in one.measured
    assert np.isfinite(one.test.se)  # the results contract needs a paired SE
    # a 1-point estimate only 2 % less stable than the 2-point one: within the 10 % margin
    assert (
        _ordering(coord, gauss2, [1.02 * x for x in gauss2])["ordering-1pt/sgd"].verdict == "fails"
    )
    assert _ordering(coord, gauss2, [2 * x for x in gauss2])["ordering-1pt/sgd"].verdict == "holds"


def test_a_loss_blow_up_or_an_overflow_is_a_divergence():
    train = np.array([[1.0, 0.5, 0.4], [1.0, 20.0, 0.5], [1.0, 0.5, np.nan]])
    delta = np.array([[0.0, 0.1, 0.1], [0.0, 0.1, 0.1], [0.0, 0.1, 0.1]])
    assert diverged_runs(delta, train, 10.0).tolist() == [False, True, True]
    delta[0, 2] = np.inf
    assert diverged_runs(delta, train, 10.0).tolist() == [True, True, True]


def _sgd_cell(train, delta, test, q, diverged=0):
    return {"train": np.asarray(train, float), "delta": np.asarray(delta, float),
            "test": np.asarray(test, float), "queries_per_step": q, "diverged": diverged}  # fmt: skip


def test_equal_loss_reads_each_estimator_where_it_first_reaches_the_worst_final_loss():
    P = 4
    steps = np.arange(6, dtype=float)
    fast = np.tile(1.0 - 0.15 * steps, (P, 1))  # 1.0 ... 0.25
    slow = np.tile(1.0 - 0.05 * steps, (P, 1))  # 1.0 ... 0.75: the target
    delta_c = np.tile(0.01 * steps, (P, 1)) * (1 + 0.1 * np.arange(P))[:, None]
    delta_g = 10 * delta_c
    results = {("p", "sgd", "coord"): _sgd_cell(fast, delta_c, fast + 0.1, 10),
               ("p", "sgd", "gauss2"): _sgd_cell(slow, delta_g, slow + 0.3, 2),
               ("p", "sgd", "gauss1"): _sgd_cell(slow, delta_g, slow, 1, diverged=P)}  # fmt: skip
    preset = SimpleNamespace(problems=("p",), estimators=("coord", "gauss2", "gauss1"))
    eq = equal_loss(results, preset)
    assert "p/sgd/gauss1" not in eq  # diverged: left out
    assert eq["p/sgd/coord"]["step"].tolist() == [2.0] * P  # 0.70 <= 0.75 first at t = 2
    assert eq["p/sgd/gauss2"]["step"].tolist() == [5.0] * P
    assert np.allclose(eq["p/sgd/coord"]["gen_gap"], 0.1)
    assert eq["p/sgd/gauss2"]["evals"].tolist() == [10.0] * P
    (premise,) = equal_loss_premises(results, preset)
    assert premise.id == "equal-loss/p" and premise.verdict == "holds"
    assert "gauss1 diverged in 4 of 4" in premise.measured
    # the 2-point run as stable as the coordinate one at equal loss: the premise does not hold
    results[("p", "sgd", "gauss2")]["delta"] = 0.4 * delta_c * (1 + 0.01 * np.arange(P))[:, None]
    (premise,) = equal_loss_premises(results, preset)
    assert premise.verdict != "holds"
    # no common progress (the worst run ends above its start): no premise at all
    results[("p", "sgd", "gauss2")]["train"] = np.tile(1.0 + 0.05 * steps, (P, 1))
    assert equal_loss_premises(results, preset) == []


def _grid(diverged_coord=0, diverged_one=0, P=4):
    """Per-seed diverged indicators of an SGD coordinate, 2-point and 1-point cell."""
    ind = lambda k: np.array([1.0] * k + [0.0] * (P - k))  # noqa: E731
    cell = lambda k: {"per_seed": {"diverged": ind(k)}}  # noqa: E731
    results = {("p", "sgd", "coord"): cell(diverged_coord), ("p", "sgd", "gauss2"): cell(0),
               ("p", "sgd", "gauss1"): cell(diverged_one)}  # fmt: skip
    return results, SimpleNamespace(seeds=tuple(range(P)), blowup=10.0, mu=1e-3, n=200)


def test_divergence_premises_are_exact_counts_and_one_diverged_pair_fails_them():
    results, preset = _grid()
    ps = {p.id: p for p in divergence_premises(results, preset)}
    assert ps["no-divergence"].verdict == "holds" and ps["one-point-finite"].verdict == "holds"
    results, preset = _grid(diverged_coord=1, diverged_one=4)
    sweep = {("p", "coord", 50): {"delta_T": np.array([np.inf, 1.0, 1.0, 1.0]), "n": 50}}
    ps = {p.id: p for p in divergence_premises(results, preset, sweep)}
    assert ps["no-divergence"].verdict == "fails"
    assert ps["no-divergence"].measured.startswith("2 of 12 coupled pairs")  # grid + n-sweep
    assert ps["one-point-finite"].verdict == "fails" and "4 of 4" in ps["one-point-finite"].measured


def test_a_failing_premise_makes_the_claims_that_rest_on_it_inconclusive():
    coord = [0.010, 0.011, 0.009, 0.010, 0.012, 0.008]
    gauss2 = [3 * x for x in coord]
    sgd = _ordering(coord, gauss2, gauss2, equal_loss_ids={"equal-loss/p"})["ordering/sgd/p"]
    assert sgd.rests_on == ("no-divergence", "equal-loss/p")  # the SGD ordering needs both
    claims = _ordering(coord, gauss2, [2 * x for x in gauss2])
    assert claims["ordering-1pt/sgd"].verdict == "holds"  # its own test passes ...
    results, preset = _grid(diverged_one=2, P=6)
    premises = divergence_premises(results, preset)
    apply_premises(list(claims.values()), premises)
    one = claims["ordering-1pt/sgd"]  # ... but its 1-point runs diverged: not a verdict
    assert one.verdict == "inconclusive" and one.premise.startswith("premise one-point-finite")
    assert claims["ordering/sgd/p"].verdict == "holds"  # its premise no-divergence holds
    with pytest.raises(ValueError, match="unknown premise 'equal-loss/p'"):
        apply_premises([sgd], premises)  # a premise that was not measured is not assumed


def test_every_criterion_has_a_source_and_the_slope_threshold_is_derived():
    coord = [0.010, 0.011, 0.009, 0.010, 0.012, 0.008]
    claims = _ordering(coord, [3 * x for x in coord], [9 * x for x in coord])
    for c in claims.values():
        assert c.regime == "paper" and c.test_set == "none"
        assert all(p["source"]["kind"] == "ours" for p in c.test.parts)
        assert "7f24870" in c.criterion
    T, seeds = 400, 6
    t = np.arange(T + 1, dtype=float)
    grow = np.tile(t, (seeds, 1)) * (1 + 0.05 * np.arange(seeds))[:, None]
    cell = {"delta": grow ** 0.7, "lrs": np.full(T, 0.1), "diverged": 0, "d": 5,
            "constants": {"beta": 2.0}}  # fmt: skip
    preset = SimpleNamespace(problems=("mlp-digits",), rate_estimators=("coord",), K=1, n=10,
                             decay_after=1.0)  # fmt: skip
    (claim,) = rate_claims({("mlp-digits", "sgd", "coord"): cell}, preset, {})
    src, low = [p["source"] for p in claim.test.parts]
    # c = lr_0 x decay_after x n = 1, Gamma = 1: order 2 / 3, threshold 0.867
    assert src["kind"] == "derived" and "threshold 0.867" in src["text"]
    assert "beta 2, c 1, Gamma 1" in src["text"] and claim.rests_on == ("no-divergence",)
    assert "power-iteration estimate, a lower one" in src["text"]  # says which way beta errs
    assert low["kind"] == "derived" and "threshold 0" in low["text"]  # growth present
    # with the exact Hessians' upper estimate measured, the order is read at it (lenient)
    cell["constants"] = {"beta": 2.0, "beta_exact": 2.5, "beta_upper": 4.0}
    (claim,) = rate_claims({("mlp-digits", "sgd", "coord"): cell}, preset, {})
    src = claim.test.parts[0]["source"]["text"]
    assert "beta 4, c 1" in src and "upper estimate" in src and "threshold 1" in src


def test_per_query_is_a_premise_no_claim_rests_on():
    P, T = 4, 20
    steps = np.arange(T + 1, dtype=float)
    delta = np.tile(0.001 * steps, (P, 1)) * (1 + 0.1 * np.arange(P))[:, None]
    cell = lambda d, q: {"delta": d, "train": np.ones((P, T + 1)), "test": np.ones((P, T + 1)),  # noqa: E731
                         "queries_per_step": q, "diverged": 0, "T": T}  # fmt: skip
    results = {("p", "sgd", "coord"): cell(delta, 10), ("p", "sgd", "gauss2"): cell(10 * delta, 2)}
    (premise,) = per_query_premise(results, SimpleNamespace(problems=("p",)))
    assert premise.id == "per-query/sgd" and premise.verdict == "holds"
    assert "not a statement of the paper" in premise.statement
    results[("p", "sgd", "gauss2")]["delta"] = delta / 10  # below the coordinate's at T/5
    (premise,) = per_query_premise(results, SimpleNamespace(problems=("p",)))
    assert premise.verdict == "fails"  # the 2-point run after T vs coordinate after T/5


def _n_sweep(power: dict[str, float], seeds: int = 8, rng=None) -> dict:
    rng = rng or np.random.default_rng(0)
    return {("p", kind, n): {"delta_T": 3.0 * n ** -pw * (1 + 0.05 * rng.standard_normal(seeds)),
                             "diverged": 0}
            for n in (50, 100, 200) for kind, pw in power.items()}  # fmt: skip


def _rate_setup(seeds: int = 8, growth: float = 1.0, d: int = 20):
    rng = np.random.default_rng(0)
    T = 400
    t = np.arange(T + 1, dtype=float)
    grow = np.tile(t, (seeds, 1)) ** growth * (1 + 0.05 * rng.random((seeds, 1)))
    const = {"L": 2.0, "beta": 1.0, "alpha": 0.0, "F": 1.0}
    cell = {"delta": grow, "lrs": np.full(T, 0.1), "diverged": 0, "d": d, "constants": const}
    preset = SimpleNamespace(problems=("p",), rate_estimators=("coord", "gauss2"), K=1, n=200,
                             decay_after=1.0, mu=1e-3)  # fmt: skip
    return {("p", "sgd", "coord"): cell, ("p", "sgd", "gauss2"): cell}, preset


def test_the_slope_in_n_is_recovered_and_judged_against_the_bounds_own_n_shape():
    sweep = _n_sweep({"coord": 1.0, "gauss2": 1.0})
    s, pseudo = n_slope({n: r["delta_T"] for (_, k, n), r in sweep.items() if k == "coord"})
    assert abs(s + 1) < 0.05 and len(pseudo) == 8
    results, preset = _rate_setup()
    claims = {c.id: c for c in rate_claims(results, preset, sweep)}
    assert claims["rate-n/p"].verdict == "holds"  # slope -1: below both bounds' slopes + 0.2
    assert claims["rate-T/p"].verdict == "holds"  # convex order 1: slope 1 in (0, 1.2)
    # issue 50: the 2-point Gaussian bound has an n-free term lr b (b = beta mu (d + 3)^1.5),
    # so its own slope in n is shallower than -1; a measured -0.6 is consistent with it (the
    # old criterion, -1 + 0.2, would have failed it); the coordinate bound stays at ~ -1
    parts = claims["rate-n/p"].test.parts
    own = [float(p["source"]["text"].split("threshold ")[1].split(" ")[0]) for p in parts[::2]]
    assert own[0] < -0.6 and own[1] > -0.5  # coordinate ~ -0.9 + 0.2, gauss2 ~ -0.6 + 0.2
    shallow = _n_sweep({"coord": 1.0, "gauss2": 0.6})
    assert {c.id: c for c in rate_claims(results, preset, shallow)}["rate-n/p"].verdict == "holds"
    # a divergence flat in n (no 1/n part at all) fails even against the shallow bound
    flat = _n_sweep({"coord": 1.0, "gauss2": 0.0})
    assert {c.id: c for c in rate_claims(results, preset, flat)}["rate-n/p"].verdict == "fails"
    # a coordinate divergence falling like n^-0.5 is too slow for its own bound (~ -1): fails
    slow = _n_sweep({"coord": 0.5, "gauss2": 1.0})
    assert {c.id: c for c in rate_claims(results, preset, slow)}["rate-n/p"].verdict == "fails"


def test_rate_T_needs_growth_to_be_present_and_no_faster_than_the_order():
    results, preset = _rate_setup(growth=1.6)  # faster than the convex order: fails
    assert rate_claims(results, preset, {})[0].verdict == "fails"
    results, preset = _rate_setup(growth=0.0)  # issue 50: no growth at all now fails too
    (claim,) = rate_claims(results, preset, {})
    assert claim.verdict == "fails" and "growth is present" in claim.statement
    results, preset = _rate_setup(growth=0.5)  # slower growth is consistent with the O(.)
    assert rate_claims(results, preset, {})[0].verdict == "holds"


def test_the_bounds_n_shape_is_A_plus_C_over_n():
    from iclr24_zo_stability.bounds import Constants, n_shape
    from iclr24_zo_stability.zo_stability import Estimator

    c, lrs, ns = Constants(L=1.0, beta=4.0, F=1.0), np.full(100, 0.01), (50, 100, 200)
    for kind in ("coord", "gauss2"):
        B = n_shape(Estimator(kind, mu=1e-3), 20, ns, lrs, c, "convex")
        A = 2 * B[2] - B[1]  # B(n) = A + C / n: B(200) - (B(100) - B(200)) = A
        assert np.allclose(B, A + (B[0] - A) * 50 / np.array(ns))
        # A is the n-free lr b per step: coordinate b = beta mu sqrt(d), Gaussian beta mu (d+3)^1.5
        b = 4e-3 * (np.sqrt(20) if kind == "coord" else 23**1.5)
        assert A == pytest.approx(lrs.sum() * b)
    coord = n_shape(Estimator("coord", mu=1e-3), 20, ns, lrs, c, "convex")
    gauss = n_shape(Estimator("gauss2", mu=1e-3), 20, ns, lrs, c, "convex")
    assert 4 > coord[0] / coord[2] > gauss[0] / gauss[2] > 1  # a larger bias: a flatter shape


def test_the_papers_orders():
    assert paper_order_T("convex") == 1.0 and paper_order_T("strongly-convex") == 0.0
    assert abs(paper_order_T("nonconvex", beta=2.0, c=1.0, gamma=1.0) - 2 / 3) < 1e-12


def test_the_divergence_figure_shows_a_diverged_estimator_without_a_curve():
    from iclr24_zo_stability.figures import plot_divergence

    ok = {"delta": np.tile(np.linspace(0, 1, 11), (3, 1))}
    bad = {"delta": np.full((3, 11), np.nan)}
    preset = SimpleNamespace(problems=("p",), algorithms=("sgd",), estimators=("coord", "gauss1"))
    fig = plot_divergence({("p", "sgd", "coord"): ok, ("p", "sgd", "gauss1"): bad}, preset)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "1-point Gaussian: diverged" in labels


def test_ordering_1pt_compares_at_the_1_point_step_when_that_cell_exists():
    # issue 50: gauss2@gauss1 is the 2-point estimate run at the 1-point estimate's own step;
    # the claim compares the 1-point run with it, not with the 2-point run at its larger step
    coord = [0.010, 0.011, 0.009, 0.010, 0.012, 0.008]
    m = Metrics()
    for s in SEEDS:
        for k, v in (("coord", coord[s]), ("gauss2", 3 * coord[s]), ("gauss1", 1e-4 * (1 + s / 10)),
                     ("gauss2@gauss1", 1e-6 * (1 + s / 10))):  # fmt: skip
            m.add(f"p/sgd/{k}/delta_T", s, v)
    preset = SimpleNamespace(estimators=("coord", "gauss2", "gauss1"), algorithms=("sgd",),
                             mu=1e-3, problems=("p",), seeds=tuple(SEEDS))  # fmt: skip
    one = {c.id: c for c in ordering_claims(m, preset)}["ordering-1pt/sgd"]
    assert one.verdict == "holds" and "gauss1/gauss2@gauss1 x100" in one.measured
    # at equal steps the 2-point run is no more stable than the 1-point one: fails (against
    # the 2-point run at its own, larger step the 1-point run would have looked more stable)
    m2 = Metrics()
    for s in SEEDS:
        for k, v in (("coord", coord[s]), ("gauss2", 3 * coord[s]), ("gauss1", 1e-4 * (1 + s / 10)),
                     ("gauss2@gauss1", 1e-4 * (1 + s / 10))):  # fmt: skip
            m2.add(f"p/sgd/{k}/delta_T", s, v)
    assert {c.id: c for c in ordering_claims(m2, preset)}["ordering-1pt/sgd"].verdict == "fails"


def test_the_1_point_step_keeps_the_bound_finite_and_within_e_of_the_2_point_expansion():
    from iclr24_zo_stability.bounds import Constants, divergence_bound, one_point_step
    from iclr24_zo_stability.zo_stability import Estimator

    c, d, T, n = Constants(L=1.0, beta=4.0, F=1.0), 20, 1000, 200
    g1, g2 = Estimator("gauss1", mu=1e-3), Estimator("gauss2", mu=1e-3)
    lr = one_point_step(g1, d, c, T)
    assert lr * T * (1.0 / 1e-3) * np.sqrt(d) == pytest.approx(1.0)  # sum lr e = 1
    assert one_point_step(g2, d, c, T) == np.inf  # no 1-point term: no such condition
    B1 = divergence_bound("sgd", g1, d, n, np.full(T, lr), c, "convex")
    assert np.isfinite(B1[-1])
    # at 10x that step the 1-point bound's expansion (1 + lr e)^T explodes
    B10 = divergence_bound("sgd", g1, d, n, np.full(T, 10 * lr), c, "convex")
    assert B10[-1] / B1[-1] > 1e3

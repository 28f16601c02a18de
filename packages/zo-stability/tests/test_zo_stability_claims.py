"""The claims' and bound checks' criteria on small hand-made inputs (fast): an overflowing
bound is vacuous, an overflowing run is compared by its overflow rate, and a 10 % ordering
margin is required."""

from types import SimpleNamespace

import numpy as np
from iclr24_zo_stability.claims import bound_checks, ordering_claims

from iclr24_common import Metrics

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


def _ordering(coord, gauss2, gauss1):
    m = Metrics()
    for s in SEEDS:
        for k, v in (("coord", coord), ("gauss2", gauss2), ("gauss1", gauss1)):
            m.add(f"p/sgd/{k}/delta_T", s, v[s])
    preset = SimpleNamespace(estimators=("coord", "gauss2", "gauss1"), algorithms=("sgd",),
                             problems=("p",), seeds=tuple(SEEDS))  # fmt: skip
    return ordering_claims(m, preset)[0]


def test_ordering_needs_the_margin_and_compares_overflows_by_rate():
    coord = [0.010, 0.011, 0.009, 0.010, 0.012, 0.008]
    gauss2 = [3 * x for x in coord]
    assert _ordering(coord, gauss2, [np.inf] * 5 + [1.0]).verdict == "holds"
    # a 1-point estimate only 2 % less stable than the 2-point one: within the 10 % margin
    assert _ordering(coord, gauss2, [1.02 * x for x in gauss2]).verdict == "fails"

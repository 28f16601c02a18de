"""The verdict API: three outcomes from paired per-seed values, margins, controls."""

import doctest

import numpy as np
import pytest

import iclr24_common.verdicts as V
from iclr24_common import all_of, non_inferiority, none_of, superiority, threshold


def test_module_docstring_example_runs():
    assert doctest.testmod(V).failed == 0


def test_superiority_three_outcomes():
    base = [1.0, 1.0, 1.0, 1.0]
    assert superiority([1.5, 1.6, 1.4, 1.5], base, margin=0.1).outcome == "holds"
    # better on average but the margin is not reached by even the upper bound
    assert superiority([1.05, 1.06, 1.04, 1.05], base, margin=0.1).outcome == "fails"
    # a tie is never "holds", whatever the margin
    assert superiority(base, base).outcome == "fails"
    # noise that cannot decide
    v = superiority([2.0, 0.2, 1.9, 0.3], base)
    assert v.outcome == "inconclusive" and v.reason == "within 2 SE"
    # one seed: no comparison
    assert superiority([5.0], [1.0]).outcome == "inconclusive"


def test_direction_and_pairing_by_seed():
    # lower is better: a's errors are smaller
    v = superiority({0: 1.0, 1: 1.1, 2: 0.9, 7: 99.0}, {0: 2.0, 1: 2.2, 2: 1.9},
                    higher_is_better=False)  # fmt: skip
    assert v.outcome == "holds" and v.n == 3 and v.estimate == pytest.approx(1.0333, abs=1e-3)
    d = np.array([1.0, 1.1, 1.0])
    assert v.se == pytest.approx(d.std(ddof=1) / np.sqrt(3))
    with pytest.raises(ValueError, match="equal lengths"):
        superiority([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="margin is >= 0"):
        superiority([1, 2], [1, 2], margin=-1)


def test_non_inferiority_on_the_lower_bound():
    b = [0.80, 0.82, 0.81]
    assert non_inferiority([0.79, 0.815, 0.80], b, tolerance=0.02).outcome == "holds"
    assert non_inferiority([0.70, 0.71, 0.70], b, tolerance=0.02).outcome == "fails"
    assert non_inferiority([0.60, 0.95, 0.70], b, tolerance=0.02).outcome == "inconclusive"


def test_threshold_and_single_value():
    assert threshold([2.5, 2.6, 2.4], threshold=2.0).outcome == "holds"
    assert threshold([1.5, 1.6], threshold=2.0).outcome == "fails"
    assert threshold([0.5, 0.6], threshold=1.0, higher_is_better=False).outcome == "holds"
    one = threshold([3.0], threshold=2.0)
    assert one.outcome == "holds" and one.se == 0 and "1 value" in one.summary()
    assert threshold([float("nan"), 1.0], threshold=0).outcome == "inconclusive"


def test_control_that_passes_makes_the_claim_inconclusive():
    base = [1.0, 1.0, 1.0]
    v = superiority([2.0, 2.1, 1.9], base, control=[1.9, 2.0, 2.1], control_name="untrained")
    assert v.outcome == "inconclusive" and v.reason == "control passes (untrained)"
    assert v.control["outcome"] == "holds"
    ok = superiority([2.0, 2.1, 1.9], base, control=[1.0, 1.1, 0.9])
    assert ok.outcome == "holds" and ok.control["outcome"] != "holds"
    t = threshold([0.9, 0.95], threshold=0.5, control=[0.8, 0.85])
    assert t.outcome == "inconclusive"


def test_all_of_takes_the_weakest():
    h = threshold([3.0, 3.1], threshold=1.0)
    f = threshold([0.0, 0.1], threshold=1.0)
    i = superiority([2.0, 0.0], [1.0, 1.0])
    assert all_of(h, h).outcome == "holds"
    assert all_of(h, i).outcome == "inconclusive"
    assert all_of(h, i, f).outcome == "fails" and all_of(h, f).estimate == f.estimate


def test_rule_text_names_margin_and_se():
    assert "> 0.5 and > 2 SE" in superiority([2, 3], [1, 1], margin=0.5).rule()
    assert "-0.01" in non_inferiority([2, 3], [1, 1], tolerance=0.01).rule()
    assert "by more than 2 SE" in threshold([2, 3], threshold=1).rule()


def test_describe_survives_non_finite_numbers_as_a_results_file_stores_them():
    from iclr24_common.verdicts import describe

    d = {"kind": "superiority", "estimate": None, "se": float("nan"), "n": 2}
    assert describe(d) == "n/a +/- n/a SE (2 seeds)"


def test_none_of_is_an_exact_count_not_a_mean():
    # a mean over seeds would call one event in ten seeds "below 0.5": none_of fails it
    assert none_of([0, 0, 0]).outcome == "holds"
    assert none_of({0: 0, 1: 0, 2: 1}).outcome == "fails"
    assert none_of([0] * 9 + [1]).outcome == "fails"
    assert threshold([0] * 9 + [1], threshold=0.5, higher_is_better=False).outcome == "holds"

"""The verdict API: three outcomes from paired per-seed values, margins, controls."""

import doctest

import numpy as np
import pytest

import iclr24_common.verdicts as V
from iclr24_common import Source, all_of, non_inferiority, none_of, superiority, threshold

SRC = Source.ours("a test's margin", commit="test")


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


def test_a_source_says_where_a_margin_comes_from():
    from iclr24_common import Source

    assert (
        Source.paper("an order of magnitude", "abstract").text
        == '"an order of magnitude" (abstract)'
    )
    assert "fixed at ba650b6" in Source.ours("a user notices 1 point", commit="ba650b6").text
    assert Source.derived("(1 - r) delta = 0.4375").kind == "derived"
    for bad in (lambda: Source("guess", "x"), lambda: Source("ours", " "),
                lambda: Source.ours("why", commit=""), lambda: Source.paper("q", where="")):  # fmt: skip
        with pytest.raises(ValueError):
            bad()
    v = superiority([2, 3], [1, 1], source=Source.derived("f"))
    assert v.to_dict()["source"] == {"kind": "derived", "text": "f"}
    with pytest.raises(TypeError, match="Source"):
        superiority([2, 3], [1, 1], source="the paper")
    assert none_of([0, 0]).source.kind == "derived"


def test_all_of_keeps_every_part_and_its_source():
    from iclr24_common import Source

    a = threshold([3.0, 3.1], threshold=1.0, source=Source.derived("a"))
    b = threshold([0.0, 0.1], threshold=1.0, source=Source.ours("b", commit="c0"))
    v = all_of(a, all_of(a, b))
    assert [p["source"]["text"] for p in v.parts] == ["a", "a", "b (ours, fixed at c0)"]
    assert v.outcome == "fails" and v.to_dict()["parts"][2]["outcome"] == "fails"


def test_a_pass_on_zero_se_is_not_a_pass():
    # every seed scored the same: no noise estimate, so a would-be pass is inconclusive
    v = threshold([0.9375, 0.9375, 0.9375], threshold=0.9, source=SRC)
    assert v.outcome == "inconclusive" and v.reason.startswith("SE 0 over 3 seeds")
    assert (
        non_inferiority([0.8, 0.8], [0.8, 0.8], tolerance=0.01, source=SRC).outcome
        == "inconclusive"
    )
    # a fail stays a fail, and one value is judged on that value
    assert threshold([0.5, 0.5], threshold=0.9, source=SRC).outcome == "fails"
    assert threshold([0.95], threshold=0.9, source=SRC).outcome == "holds"


def test_item_level_se_on_a_shared_test_set():
    rng = np.random.default_rng(0)
    # 3 seeds scored on the same 40 items: the seeds agree closely, the items vary a lot
    base = rng.random(40) < 0.5
    b_items = {s: base.astype(float) for s in range(3)}
    a_items = {s: (base | (rng.random(40) < 0.12)).astype(float) for s in range(3)}
    a = {s: a_items[s].mean() for s in a_items}
    b = {s: b_items[s].mean() for s in b_items}
    seeds_only = superiority(a, b, margin=0.0)
    with_items = superiority(a, b, margin=0.0, items=(a_items, b_items))
    d = np.mean([a_items[s] - b_items[s] for s in range(3)], axis=0)
    assert with_items.item_se == pytest.approx(d.std(ddof=1) / np.sqrt(40))
    assert with_items.se == max(with_items.seed_se, with_items.item_se) >= seeds_only.se
    assert with_items.se_basis == "items" and seeds_only.se_basis == "seeds"
    assert "SE over items" in with_items.summary()
    # per-item scores must average to the per-seed values (same units), on the same items
    with pytest.raises(ValueError, match="average"):
        superiority({s: 100 * a[s] for s in a}, b, items=(a_items, b_items))
    with pytest.raises(ValueError, match="same >= 2 test items"):
        threshold([0.5, 0.5], threshold=0.1, items=[[1, 0], [1, 0, 1, 0]])
    # a control on a shared test set brings its own items
    with pytest.raises(ValueError, match="needs its items"):
        superiority(a, b, control=b, items=(a_items, b_items))
    t = threshold(a, threshold=0.3, items=a_items)
    assert t.item_se == pytest.approx(np.mean([a_items[s] for s in a], 0).std(ddof=1) / np.sqrt(40))


def test_a_control_records_how_far_the_method_moved():
    base = [1.0, 1.0, 1.0]
    v = non_inferiority([1.0, 1.1, 0.9], base, tolerance=0.5, control=[1.0, 1.0, 1.01],
                        control_name="refresh never fires")  # fmt: skip
    assert v.outcome == "inconclusive" and v.reason == "control passes (refresh never fires)"
    assert v.control["moved"] == pytest.approx(-0.01 / 3) and v.control["moved_se"] > 0
    # lower is better: moved is in "better" units too
    w = superiority(
        [1.0, 1.1, 0.9], [2.0, 2.0, 2.0], higher_is_better=False, control=[2.0, 2.1, 1.9]
    )
    assert w.outcome == "holds" and w.control["moved"] == pytest.approx(1.0)


def test_all_items_agreeing_gets_the_rule_of_three_floor():
    # every seed solves all 20 shared items: SE 0 empirically, but 20/20 does not make the
    # rate exactly 1: the rule of three's floor (1.5 / n) lets a clear pass hold
    items = {s: [1.0] * 20 for s in range(3)}
    acc = {s: 1.0 for s in range(3)}
    v = threshold(acc, threshold=0.5, items=items, source=SRC)
    assert v.item_se == pytest.approx(1.5 / 20) and v.outcome == "holds"
    # ... and not one too close to the threshold
    assert threshold(acc, threshold=0.9, items=items, source=SRC).outcome == "inconclusive"
    # a constant non-binary score keeps SE 0: no pass on it
    flat = {s: [0.5] * 20 for s in range(3)}
    v = threshold({s: 0.5 for s in range(3)}, threshold=0.1, items=flat, source=SRC)
    assert v.outcome == "inconclusive" and v.reason == "SE 0 over seeds and items"


def test_a_control_equal_to_the_reference_on_every_seed_passes():
    # the no-op arm scores exactly the reference on every seed (SE 0): it passes the
    # non-inferiority, so the method's pass tells nothing
    ref = [0.80, 0.82, 0.81]
    v = non_inferiority([0.81, 0.82, 0.80], ref, tolerance=0.02, control=list(ref),
                        control_name="switched off", source=SRC)  # fmt: skip
    assert v.control["outcome"] == "holds" and v.outcome == "inconclusive"

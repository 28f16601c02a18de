"""The claims and checks decide from the numbers: lossless is a non-inferiority test against
the seeds' SE (on the saturated digits too), the baselines must be beaten by a margin and by
more than 2 SE, the wall-clock saving is judged on the interleaved timing's per-repeat ratios
(noise gives inconclusive),
the bookkeeping is checked."""

import pytest
from iclr24_infobatch.claims import make_checks, make_claims
from iclr24_infobatch.experiment import PRESETS

from iclr24_common import Check, Metrics

PRESET = PRESETS["default"]


def metrics_for(ds="mixture", full=(80.0, 80.2, 79.8, 80.1, 79.9), ib=None, rnd=None, hard=None,
                saved=0.3, time_ratio=0.72):  # fmt: skip
    """``time_ratio``: InfoBatch r = 0.5's interleaved training time over full data's (one, or
    per repeat; 7 repeats when one value is given)."""
    m = Metrics()
    ratios = time_ratio if isinstance(time_ratio, list | tuple) else [time_ratio] * 7
    ib = ib if ib is not None else full
    others = {"infobatch_r0.3": full, "infobatch_r0.5": ib, "infobatch_r0.7": full,
              "random_r0.7": rnd or [a - 1.0 for a in full], "hard_r0.7": hard or [a - 1.0 for a in full]}  # fmt: skip
    for s, a in enumerate(full):
        m.add(f"{ds}/full/test_acc", s, a)
        m.add(f"{ds}/full/train_seconds", s, 10.0)
        m.add(f"{ds}/full/saved_fraction", s, 0.0)
        for meth, accs in others.items():
            m.add(f"{ds}/{meth}/test_acc", s, accs[s])
            m.add(f"{ds}/{meth}/saved_fraction", s, saved if meth == "infobatch_r0.5" else 0.42)
            m.add(f"{ds}/{meth}/low_fraction", s, 0.7)
            m.add(f"{ds}/{meth}/train_seconds", s, 10.0 * (0.5 + s))  # not what is judged
    for k, r in enumerate(ratios):
        m.add(f"{ds}/interleaved/full_seconds", k, 10.0)
        m.add(f"{ds}/interleaved/infobatch_seconds", k, 10.0 * r)
        m.add(f"{ds}/interleaved/time_ratio", k, r)
        m.add(f"{ds}/interleaved/saved_fraction", k, saved)
    return m


def claim(claims, cid):
    return next(c for c in claims if c.id == cid)


def test_claims_are_made_on_the_unsaturated_task_only():
    m = metrics_for()
    for k, v in metrics_for("digits").summary().items():
        for s, x in enumerate(v["per_seed"]):
            m.add(k, s, x)
    ids = {c.id for c in make_claims(m, PRESET)}
    assert ids == {f"{c}/mixture" for c in
                   ("lossless", "saves-cost", "wall-clock", "beats-random", "beats-hard")} | {
                   "lossless/digits"}  # fmt: skip
    checks = make_checks(m, {}, PRESET)
    assert all(isinstance(c, Check) and c.why for c in checks)
    assert "lossless/digits" not in {c.id for c in checks}


@pytest.mark.parametrize(
    "ib,verdict",
    [
        ([80.1, 80.0, 79.9, 80.2, 79.8], "holds"),  # equal within noise
        ([79.0, 79.2, 78.8, 79.1, 78.9], "fails"),  # one point lower, consistently
        ([78.5, 81.1, 79.5, 81.3, 79.4], "inconclusive"),  # mean -0.04, too noisy to show it
    ],
)
def test_lossless_is_non_inferiority_against_the_seeds_se(ib, verdict):
    c = claim(make_claims(metrics_for(ib=ib), PRESET), "lossless/mixture")
    assert c.verdict == verdict, c.measured
    assert "non-inferiority" in c.criterion and "0.5" in c.criterion


def test_lossless_on_the_saturated_digits_is_a_claim_that_can_fail():
    m = metrics_for()
    for k, v in metrics_for("digits", full=(98.0, 98.2, 97.8, 98.1, 97.9),
                            ib=[97.0, 97.2, 96.8, 97.1, 96.9]).summary().items():  # fmt: skip
        for s, x in enumerate(v["per_seed"]):
            m.add(k, s, x)
    c = claim(make_claims(m, PRESET), "lossless/digits")
    assert c.verdict == "fails" and "saturates" in c.statement


def test_beating_a_baseline_needs_a_margin_and_more_than_two_se():
    full = [80.0, 80.2, 79.8, 80.1, 79.9]
    noisy = [80.5, 78.6, 80.4, 79.2, 80.3]  # 0.2 lower on average, noise ~0.9
    c = make_claims(metrics_for(rnd=noisy), PRESET)
    assert claim(c, "beats-random/mixture").verdict == "inconclusive"
    assert claim(c, "beats-hard/mixture").holds  # one point lower, consistently
    tie = claim(make_claims(metrics_for(rnd=full), PRESET), "beats-random/mixture")
    assert tie.verdict == "fails"  # a tie never passes
    within_margin = claim(make_claims(metrics_for(rnd=[a - 0.05 for a in full]), PRESET),
                          "beats-random/mixture")  # fmt: skip
    assert within_margin.verdict == "fails"  # 0.05 point: below Table 1's 0.1 precision


def test_saving_and_wall_clock_criteria():
    c = make_claims(metrics_for(saved=0.30, time_ratio=0.72), PRESET)
    assert claim(c, "saves-cost/mixture").verdict == "fails"  # the paper's ~40%
    assert claim(c, "wall-clock/mixture").holds  # time ratio 0.72 < 1 - 0.5 x 0.30
    c = make_claims(metrics_for(saved=0.41, time_ratio=0.95), PRESET)
    assert claim(c, "saves-cost/mixture").holds
    assert claim(c, "wall-clock/mixture").verdict == "fails"  # 0.95 > 1 - 0.5 x 0.41


def test_noisy_timings_make_the_wall_clock_claim_inconclusive():
    # mean time ratio 0.70, below the bound 1 - 0.5 x 0.30 = 0.85, but two repeats ran about
    # as slowly as full data: the per-repeat ratios' SE cannot place them below the bound
    c = make_claims(metrics_for(saved=0.30, time_ratio=[0.3, 1.1, 0.5, 1.0, 0.6]), PRESET)
    wc = claim(c, "wall-clock/mixture")
    assert wc.verdict == "inconclusive" and wc.test.n == 5, wc.measured
    assert "median 0.600" in wc.measured and "range 0.300-1.100" in wc.measured


def test_wall_clock_is_judged_on_the_interleaved_repeats_only():
    full = metrics_for(saved=0.30, time_ratio=0.72)
    m = Metrics()  # the per-seed runs alone (trained minutes apart): no wall-clock claim
    for name, d in full._values.items():
        if "/interleaved/" not in name:
            for s, x in d.items():
                m.add(name, s, x)
    ids = {c.id for c in make_claims(m, PRESET)}
    assert "saves-cost/mixture" in ids and "wall-clock/mixture" not in ids


def _record(samples, weights, saved=0.3, predicted=0.3):
    return {"saved_fraction": saved, "predicted_saved_fraction": predicted,
            "epochs": [{"samples": s, "weight_min": 1.0, "weight_max": w}
                       for s, w in zip(samples, weights)]}  # fmt: skip


def test_checks_catch_broken_bookkeeping():
    preset = PRESETS["smoke"]  # 8 epochs, delta 0.875: the last epoch anneals
    good = _record([100, 60, 55, 50, 50, 50, 50, 100], [1, 2, 2, 2, 2, 2, 2, 1])
    leak = _record([100, 60, 55, 50, 50, 50, 50, 100], [1, 2, 2, 2, 2, 2, 2, 2])
    off = _record([100] * 8, [1] * 8, saved=0.30, predicted=0.25)
    m = Metrics()
    for k, v in {"infobatch": 0.42, "random": 0.42, "hard": 0.40}.items():
        m.add(f"mixture/{k}_r0.7/saved_fraction", 0, v)

    def checks(records):
        return {c.id: c.holds for c in make_checks(m, records, preset)}

    ok = checks({("mixture", "infobatch_r0.5", 0): good, ("mixture", "full", 0): good})
    assert ok["annealing/mixture"] and ok["counters/mixture"]
    assert not ok["equal-budget/mixture"]  # hard pruning saved 0.02 less
    assert not checks({("mixture", "infobatch_r0.5", 0): leak})["annealing/mixture"]
    assert not checks({("mixture", "hard_r0.7", 0): off})["counters/mixture"]

"""The claims and checks decide from the numbers: lossless is a non-inferiority test against
the seeds' and the shared test set's SE (on the saturated digits too) that its no-op arm, random
pruning of the same passes, must not pass as well; the baselines must be beaten by a margin
and by more than 2 SE; the wall-clock saving is judged on the interleaved timing's per-repeat
ratios (noise gives inconclusive); every criterion has its source and every claim its regime;
the bookkeeping is checked."""

from dataclasses import replace

import numpy as np
import pytest
from iclr24_infobatch.claims import make_checks, make_claims
from iclr24_infobatch.experiment import PRESETS

from iclr24_common import Check, Metrics

PRESET = PRESETS["default"]
N_TEST = 10_000  # test samples of the fixture (one accuracy step: 0.01 point)


def metrics_for(ds="mixture", full=(80.0, 80.2, 79.8, 80.1, 79.9), ib=None, rnd=None, hard=None,
                saved=0.3, time_ratio=0.72, noop=None):  # fmt: skip
    """``time_ratio``: InfoBatch r = 0.5's interleaved training time over full data's (per
    repeat; or one value, spread +/- 0.03 over 7 repeats); ``saved``: r = 0.5's share of passes
    saved (spread +/- 0.004 over the seeds: equal values would be SE 0); ``noop``: random
    pruning of r = 0.5's passes (default one point below full data)."""
    m = Metrics()
    ratios = time_ratio if isinstance(time_ratio, list | tuple) else [
        time_ratio + 0.01 * (k - 3) for k in range(7)]  # fmt: skip
    ib = ib if ib is not None else full
    lower = [a - 1.0 for a in full]
    others = {"infobatch_r0.3": full, "infobatch_r0.5": ib, "infobatch_r0.7": full,
              "random_r0.5": noop or lower, "random_r0.7": rnd or lower,
              "hard_r0.7": hard or lower}  # fmt: skip
    for s, a in enumerate(full):
        m.add(f"{ds}/full/test_acc", s, a)
        m.add(f"{ds}/full/train_seconds", s, 10.0)
        m.add(f"{ds}/full/saved_fraction", s, 0.0)
        for meth, accs in others.items():
            m.add(f"{ds}/{meth}/test_acc", s, accs[s])
            m.add(f"{ds}/{meth}/saved_fraction", s,
                  saved + 0.002 * (s - 2) if meth.endswith("r0.5") else 0.42)  # fmt: skip
            m.add(f"{ds}/{meth}/low_fraction", s, 0.7)
            m.add(f"{ds}/{meth}/train_seconds", s, 10.0 * (0.5 + s))  # not what is judged
    for k, r in enumerate(ratios):
        m.add(f"{ds}/interleaved/full_seconds", k, 10.0)
        m.add(f"{ds}/interleaved/infobatch_seconds", k, 10.0 * r)
        m.add(f"{ds}/interleaved/time_ratio", k, r)
        m.add(f"{ds}/interleaved/saved_fraction", k, saved)
    return m


def records_for(m: Metrics) -> dict:
    """Per-sample test scores matching every accuracy: a run at a % answers the first
    round(a x N_TEST / 100) test samples right (so two runs differ on the samples between)."""
    out = {}
    for name in m.names():
        ds, meth, metric = name.split("/")
        if metric == "test_acc" and meth != "interleaved":
            for s, a in m.by_seed(name).items():
                right = np.zeros(N_TEST, np.uint8)
                right[: round(a * N_TEST / 100)] = 1
                out[ds, meth, s] = {"test_correct": right}
    return out


def claims_of(m: Metrics, preset=PRESET) -> list:
    return make_claims(m, preset, records_for(m))


def claim(claims, cid):
    return next(c for c in claims if c.id == cid)


def test_claims_are_made_on_the_unsaturated_task_only():
    m = metrics_for()
    for k, v in metrics_for("digits").summary().items():
        for s, x in enumerate(v["per_seed"]):
            m.add(k, s, x)
    ids = {c.id for c in claims_of(m)}
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
    c = claim(claims_of(metrics_for(ib=ib)), "lossless/mixture")
    assert c.verdict == verdict, c.measured
    assert "non-inferiority" in c.criterion and "0.5" in c.criterion


def test_lossless_on_the_saturated_digits_is_a_claim_that_can_fail():
    m = metrics_for()
    for k, v in metrics_for("digits", full=(98.0, 98.2, 97.8, 98.1, 97.9),
                            ib=[97.0, 97.2, 96.8, 97.1, 96.9]).summary().items():  # fmt: skip
        for s, x in enumerate(v["per_seed"]):
            m.add(k, s, x)
    c = claim(claims_of(m), "lossless/digits")
    assert c.verdict == "fails" and "saturates" in c.statement


def test_beating_a_baseline_needs_a_margin_and_more_than_two_se():
    full = [80.0, 80.2, 79.8, 80.1, 79.9]
    noisy = [80.5, 78.6, 80.4, 79.2, 80.3]  # 0.2 lower on average, noise ~0.9
    c = claims_of(metrics_for(rnd=noisy))
    assert claim(c, "beats-random/mixture").verdict == "inconclusive"
    assert claim(c, "beats-hard/mixture").holds  # one point lower, consistently
    tie = claim(claims_of(metrics_for(rnd=full)), "beats-random/mixture")
    assert tie.verdict == "fails"  # a tie never passes
    within_margin = claim(claims_of(metrics_for(rnd=[a - 0.05 for a in full])),
                          "beats-random/mixture")  # fmt: skip
    assert within_margin.verdict == "fails"  # 0.05 point: below Table 1's 0.1 precision


def test_saving_and_wall_clock_criteria():
    c = claims_of(metrics_for(saved=0.30, time_ratio=0.72))
    assert claim(c, "saves-cost/mixture").verdict == "fails"  # the paper's ~40%
    assert claim(c, "wall-clock/mixture").holds  # time ratio 0.72 < 1 - 0.5 x 0.30
    c = claims_of(metrics_for(saved=0.41, time_ratio=0.95))
    assert claim(c, "saves-cost/mixture").holds
    assert claim(c, "wall-clock/mixture").verdict == "fails"  # 0.95 > 1 - 0.5 x 0.41


def test_noisy_timings_make_the_wall_clock_claim_inconclusive():
    # mean time ratio 0.70, below the bound 1 - 0.5 x 0.30 = 0.85, but two repeats ran about
    # as slowly as full data: the per-repeat ratios' SE cannot place them below the bound
    c = claims_of(metrics_for(saved=0.30, time_ratio=[0.3, 1.1, 0.5, 1.0, 0.6]))
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
    ids = {c.id for c in claims_of(m)}
    assert "saves-cost/mixture" in ids and "wall-clock/mixture" not in ids


def test_lossless_is_inconclusive_when_random_pruning_of_the_same_passes_passes_too():
    # the no-op arm as accurate as full data: the criterion cannot tell InfoBatch's choice of
    # the skipped samples from skipping as many at random
    ib = [80.1, 80.0, 79.9, 80.2, 79.8]
    c = claim(claims_of(metrics_for(ib=ib, noop=[79.9, 80.3, 79.8, 80.0, 80.0])),
              "lossless/mixture")  # fmt: skip
    assert c.verdict == "inconclusive" and "control passes" in c.test.reason
    assert c.test.control["outcome"] == "holds"
    assert "saved 0.300 vs 0.300" in c.moved and "1/(1 - r) = 2" in c.moved
    # the default no-op arm loses a point: it fails the test, InfoBatch's pass stands
    c = claim(claims_of(metrics_for(ib=ib)), "lossless/mixture")
    assert c.verdict == "holds" and c.test.control["outcome"] == "fails"
    assert c.test.control["moved"] == pytest.approx(1.0)  # InfoBatch - no-op, points


def test_no_lossless_claim_without_its_no_op_arm():
    m = Metrics()
    for name, d in metrics_for()._values.items():
        if "/random_r0.5/" not in name:
            for s, x in d.items():
                m.add(name, s, x)
    ids = {c.id for c in claims_of(m)}
    assert "lossless/mixture" not in ids and "beats-random/mixture" in ids


def test_accuracy_claims_take_the_test_samples_noise():
    # InfoBatch 0.15 point above hard pruning on every seed (SE 0 over the seeds), but the two
    # disagree on 115 of the 10,000 test samples (65 for InfoBatch, 50 against): gap 0.15, SE
    # over the samples 0.107, so the gap is not past 2 SE
    full = [80.0] * 5
    m = metrics_for(full=full, hard=[79.85] * 5)
    records = records_for(m)
    for s in range(5):
        right = records["mixture", "infobatch_r0.7", s]["test_correct"].copy()
        right[:65], right[-50:] = 0, 1  # 8000 right -> 8000 - 65 + 50
        records["mixture", "hard_r0.7", s] = {"test_correct": right}
    c = claim(make_claims(m, PRESET, records), "beats-hard/mixture")
    assert c.verdict == "inconclusive" and c.test.se_basis == "items" and c.test_set == "shared"
    assert c.test.item_se == pytest.approx(0.107, abs=1e-3) and c.test.seed_se < 1e-9
    # the same gap on 15 samples only: past 2 SE of the samples' noise
    c = claim(claims_of(metrics_for(full=full, hard=[79.85] * 5)), "beats-hard/mixture")
    assert c.verdict == "holds" and c.test.item_se == pytest.approx(0.0387, abs=1e-3)


def test_regime_needs_and_sources():
    cs = {c.id: c for c in claims_of(metrics_for())}
    for c in cs.values():
        assert c.regime == "below" and "ours an MLP" in c.needs, c.id
        assert c.test.source is not None, c.id
    needs = cs["lossless/mixture"].needs
    assert "@8bbb012" in needs and "200 epochs" in needs and "20,000 generated samples" in needs
    saving = cs["saves-cost/mixture"]
    assert "92%" in saving.needs and "ours 0.70 below the mean" in saving.needs
    assert "0.4375" in saving.statement and "91%" in saving.statement  # ceiling, condition
    assert "r x (share below the mean loss) x (pruned epochs) / E gives 0.5 x 0.700" in (
        saving.measured
    )  # the formula, with our share below the mean
    assert saving.test.source.kind == "derived" and "0.4375" in saving.test.source.text
    assert "at least 40%" in saving.statement and saving.test_set == "none"
    wall = cs["wall-clock/mixture"]
    assert wall.test.source.kind == "ours" and wall.test_set == "none" and "GPU" in wall.needs
    for cid in ("lossless/mixture", "beats-random/mixture", "beats-hard/mixture"):
        assert cs[cid].test.source.kind == "derived" and cs[cid].test_set == "shared"
    # CIFAR at the official 200 epochs and width 64: the paper's regime; fewer epochs: below
    paper = PRESETS["paper"]
    on_cifar = claims_of(metrics_for("cifar10"), paper)
    assert {c.regime for c in on_cifar} == {"paper"} and len(on_cifar) == 5
    short = claims_of(metrics_for("cifar10"), replace(paper, epochs=100))
    assert {c.regime for c in short} == {"below"}
    assert "ours ResNet-18 of width 64 on cifar10, 100 epochs" in short[0].needs


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
    assert "noop-budget/mixture" not in ok  # no r = 0.5 runs in these metrics
    m.add("mixture/infobatch_r0.5/saved_fraction", 0, 0.27)
    m.add("mixture/random_r0.5/saved_fraction", 0, 0.27)
    assert checks({})["noop-budget/mixture"]
    m.add("mixture/random_r0.5/saved_fraction", 0, 0.26)  # the no-op skipped fewer passes
    assert not checks({})["noop-budget/mixture"]
    assert not ok["equal-budget/mixture"]  # hard pruning saved 0.02 less
    assert not checks({("mixture", "infobatch_r0.5", 0): leak})["annealing/mixture"]
    assert not checks({("mixture", "hard_r0.7", 0): off})["counters/mixture"]


def test_saving_ceiling_and_the_below_mean_share_it_needs():
    from iclr24_infobatch.claims import needed_below_mean, pruned_epochs, saving_ceiling

    # 200 epochs, delta 0.875: the last 25 anneal, epoch 0 prunes nothing: 174 pruned epochs
    assert pruned_epochs(200, 0.875) == 174 and saving_ceiling(200) == pytest.approx(0.435)
    assert needed_below_mean(200) == pytest.approx(0.40 / 0.435)  # 92 % below the mean loss
    assert pruned_epochs(15, 0.875) == 12 and saving_ceiling(15) == pytest.approx(0.40)
    assert pruned_epochs(8, 0.875) == 6 and saving_ceiling(8) < 0.40


def _premises(m: Metrics, preset=PRESET) -> dict:
    from iclr24_infobatch.claims import make_premises

    return {p.id: p for p in make_premises(m, preset, records_for(m))}


def test_a_schedule_that_cannot_reach_the_papers_saving_makes_saves_cost_inconclusive():
    from iclr24_common.results import apply_premises

    m = metrics_for(saved=0.30)
    for epochs, reachable in ((8, False), (40, True)):
        preset = replace(PRESET, epochs=epochs)
        prem = _premises(m, preset)["saving-reachable/mixture"]
        assert prem.holds == reachable, (epochs, prem.measured)
        claims = make_claims(m, preset, records_for(m))
        apply_premises(claims, list(_premises(m, preset).values()))
        saving = claim(claims, "saves-cost/mixture")
        assert saving.verdict == ("fails" if reachable else "inconclusive"), saving
        assert saving.rests_on == ("saving-reachable/mixture",)


def test_a_task_that_does_not_reward_data_is_a_failing_premise():
    from iclr24_common.results import apply_premises

    ib = [80.1, 80.0, 79.9, 80.2, 79.8]
    m = metrics_for(ib=ib)  # random pruning of the same passes one point below full data
    rewards = _premises(m)["rewards-data/mixture"]
    assert rewards.holds and rewards.test.se_basis == "items"
    flat = metrics_for(
        ib=ib, noop=[79.9, 80.3, 79.8, 80.0, 80.0], rnd=[79.9, 80.3, 79.8, 80.0, 80.0]
    )
    prem = list(_premises(flat).values())
    assert not {p.id: p for p in prem}["rewards-data/mixture"].holds
    claims = claims_of(flat)
    apply_premises(claims, prem)
    for cid in ("lossless/mixture", "beats-random/mixture"):
        c = claim(claims, cid)
        assert c.rests_on == ("rewards-data/mixture",) and c.verdict == "inconclusive", c
    assert claim(claims, "beats-hard/mixture").rests_on == ()


def test_the_saving_formula_check():
    n, E = 1000, 8
    low_counts = [0, 701, 681, 653, 640, 631, 620, 0]  # epoch 0 and the annealed epoch: none
    skipped = [c - int(0.5 * c) for c in low_counts]  # odd counts: rounded to whole samples
    saved = sum(skipped) / (E * n)
    rec = {"saved_fraction": saved, "predicted_saved_fraction": saved,
           "low_fraction": float(np.mean([c for c in low_counts if c])) / n, "pruned_epochs": 6,
           "kept_per_epoch": [n - k for k in skipped],
           "epochs": [{"samples": n - k, "weight_min": 1.0, "weight_max": 2.0 if k else 1.0}
                      for k in skipped]}  # fmt: skip
    preset = PRESETS["smoke"]
    ok = {c.id: c for c in make_checks(Metrics(), {("mixture", "infobatch_r0.5", 0): rec}, preset)}
    assert ok["saving-formula/mixture"].holds
    # 80 passes the formula does not account for (the selection pruned samples above the mean)
    bad = {**rec, "saved_fraction": saved + 0.01, "predicted_saved_fraction": saved + 0.01}
    out = {c.id: c for c in make_checks(Metrics(), {("mixture", "infobatch_r0.5", 0): bad}, preset)}
    assert not out["saving-formula/mixture"].holds and out["saving-formula/mixture"].why

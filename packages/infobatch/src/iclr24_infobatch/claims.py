"""The paper's claims and the code's checks, computed from the measured metrics.

Claims (on every dataset that full-data training leaves far from 100%): lossless at the
paper's defaults, the share of passes saved, the wall-clock saving, and InfoBatch against
random and hard dynamic pruning at the same budget; on the saturated digits, lossless only.
Every verdict is a test on paired per-seed values (``iclr24_common.verdicts``); the accuracy
claims take the shared test set's per-sample scores (``items``), and lossless runs its no-op
arm, random pruning of the same passes (``random_r0.5``), through the same test. A claim is in
the paper's regime only on CIFAR at the official 200 epochs and widths (:func:`regime`).
Checks: the pass counters agree, the annealing epochs see all data with weight 1, the
baselines used InfoBatch's budget.
"""

from __future__ import annotations

import math

import numpy as np

from iclr24_common import (
    Check,
    Claim,
    Metrics,
    Premise,
    Source,
    non_inferiority,
    superiority,
    threshold,
)

SATURATED = ("digits",)  # full data is ~98%: only the lossless claim is made there
CIFAR_SETS = ("cifar10", "cifar100")
OFFICIAL = "NUS-HPC-AI-Lab/InfoBatch@8bbb012"
FIXED_AT = "04b27f8"  # the commit at which the ours-sourced values below were last fixed
# "Lossless" tolerance, points of test accuracy: the paper calls its own r = 0.5 result on
# CIFAR-10 R-18 lossless at 0.5 points below full data (Table 1: 95.1 vs 95.6).
LOSSLESS_MARGIN = 0.5
LOSSLESS_SOURCE = Source.derived(
    "95.6 - 95.1 = 0.5 points: InfoBatch's own drop at r = 0.5 on CIFAR-10 ResNet-18 (Table 1, "
    "as quoted in arXiv 2506.23674), which the paper calls lossless")  # fmt: skip
# Superiority margin over a baseline, points: Table 1 reports accuracy to 0.1 point, so a
# smaller gap would not show in the paper's own table.
BEAT_MARGIN = 0.1
BEAT_SOURCE = Source.derived(
    "0.1 point: the resolution of the paper's Table 1 (top-1 % to one decimal); a smaller gap "
    "would not show there")  # fmt: skip
PAPER_SAVED = 0.40  # abstract: "On CIFAR10/100, ... InfoBatch losslessly saves 40% overall cost"
R, DELTA = 0.5, 0.875  # the paper's defaults, which the lossless and saving claims run
PAPER_EPOCHS = 200  # official cifar_example.py --num_epoch


def pruned_epochs(epochs: int, delta: float) -> int:
    """Epochs that can prune: all but the last ceil((1 - delta) E) (annealing) and epoch 0
    (every score is equal before any loss is seen: nothing lies below the mean; the official
    initial score 3 gives the same)."""
    return max(0, epochs - math.ceil(round((1 - delta) * epochs, 9)) - 1)


def saving_ceiling(epochs: int, r: float = R, delta: float = DELTA) -> float:
    """The largest share of passes the schedule can save: every sample below the mean loss in
    every pruned epoch, r of them skipped: r x pruned epochs / E (-> r x delta for large E)."""
    return r * pruned_epochs(epochs, delta) / epochs


def needed_below_mean(epochs: int, delta: float = DELTA, saved: float = PAPER_SAVED) -> float:
    """The share of samples below the mean loss (in every pruned epoch) that a saving of
    ``saved`` needs: saved = r x below-mean share x pruned epochs / E, solved for the share
    (above 1: the schedule cannot save that much; inf when it never prunes)."""
    ceiling = saving_ceiling(epochs, R, delta)
    return saved / ceiling if ceiling > 0 else float("inf")


SAVED_SOURCE = Source.derived(
    f"the paper's 40 % ('losslessly saves 40% overall cost', abstract) at r = {R}, delta = "
    f"{DELTA}; the saving is r x (share below the mean loss) x (pruned epochs) / E, so its "
    f"ceiling is r x delta = {R * DELTA:.4f} ({saving_ceiling(PAPER_EPOCHS):.3f} at the official "
    f"{PAPER_EPOCHS} epochs, epoch 0 pruning nothing), reached only with every sample below the "
    f"mean: 0.40 needs >= {needed_below_mean(PAPER_EPOCHS):.0%} of the samples below the mean "
    "loss in every pruned epoch (a few hard samples far above it)")  # fmt: skip
# Wall clock: the time saved must exceed half the share of passes saved, i.e. the per-seed
# time ratio InfoBatch / full must lie below 1 - 0.5 x saved (ours, kept from v2: the paper's
# O(1) per-sample overhead implies close to all of it; half leaves room for the per-epoch
# scoring and sampling that full-data training does not do). Judged on the interleaved timing:
# per repeat, InfoBatch r = 0.5's summed epoch seconds over full data's, the two trained side
# by side one epoch each in turn at one thread (the per-seed runs' own times, trained minutes
# apart, moved between 0.48 and 0.91 in one run and flipped the verdict on a resume).
TIME_EFFICIENCY = 0.5
TIME_SOURCE = Source.ours(
    "at least half the skipped passes' share saved as time: the paper's O(1) per-sample "
    "overhead (Sec. 3.3) implies close to all of it, half leaves room for the per-epoch scoring "
    "and sampling that full data does not do (kept from v2)", commit=FIXED_AT)  # fmt: skip
NOOP = "random_r0.5"
NOOP_NAME = "random pruning of the same passes (r = 0.5's per-epoch kept counts, weight 1)"
PAPER_SETTING = (
    "CIFAR-10 ResNet-18 (11.2M params) and CIFAR-100 ResNet-50 (23.7M) on 50,000 images, 200 "
    f"epochs at batch 128 / 256 on GPU (paper Table 1; {OFFICIAL} examples/cifar_example.py "
    "defaults and the README's CIFAR-100 command)")  # fmt: skip

# Paper Table 1 (ResNet-18, top-1 %, prune ratios 30 / 50 / 70%). The paper's PDF could not
# be read from here; these rows are the paper's published numbers as quoted by a later paper
# (Partial Forward Blocking, ICCV 2025, arXiv 2506.23674, its comparison table). Rows not
# found in any readable source (the dynamic Random*, epsilon-greedy and UCB rows, the
# ResNet-50 and ImageNet tables) are left out.
PAPER_TABLE1 = {
    "source": "InfoBatch Table 1, as quoted in arXiv 2506.23674 (ResNet-18, top-1 %)",
    "prune_ratios": (0.3, 0.5, 0.7),
    "cifar10": {"full": 95.6, "infobatch": (95.6, 95.1, 94.7), "random_static": (94.6, 93.3, 90.2)},
    "cifar100": {"full": 78.2, "infobatch": (78.2, 78.1, 76.5), "random_static": (73.8, 72.1, 69.7)},
}  # fmt: skip


def _acc(ds: str, method: str) -> str:
    return f"{ds}/{method}/test_acc"


def _paper_row(key: str, i: int) -> str:
    t = PAPER_TABLE1
    return f"CIFAR-10 {t['cifar10'][key][i]}, CIFAR-100 {t['cifar100'][key][i]}"


def setting(ds: str, preset) -> str:
    """Our setting of ``ds``, in numbers."""
    if ds == "mixture":
        clusters = getattr(preset, "mixture_clusters", None)
        blobs = f" of {clusters} blobs each" if clusters else ""
        data = f"{preset.n_train:,} generated samples (40 features, 10 classes{blobs})"
    elif ds == "digits":
        data = "scikit-learn's 1,347 training digits (8 x 8)"
    else:
        net = "ResNet-18" if ds == "cifar10" else "ResNet-50"
        return f"{net} of width {preset.resnet_width} on {ds}, {preset.epochs} epochs"
    return f"an MLP (2 x 256 hidden, 0.08M params) on {data}, {preset.epochs} epochs on CPU"


def regime(ds: str, preset, needs: str = "") -> tuple[str, str]:
    """``("paper", "")`` on CIFAR at the official 200 epochs and ResNet width 64, else
    ``("below", ...)``: the paper's setting (or ``needs``, what the claim's effect needs in
    it) and ours."""
    if ds in CIFAR_SETS and preset.epochs >= 200 and preset.resnet_width >= 64:
        return "paper", ""
    return "below", f"{needs or PAPER_SETTING}; ours {setting(ds, preset)}"


def _items(records: dict, ds: str, method: str, seeds) -> dict:
    """Each seed's per-sample test scores in points (100 right, 0 wrong): their mean is the
    seed's test accuracy; every seed is scored on the same test set."""
    return {s: 100.0 * np.asarray(records[ds, method, s]["test_correct"], float) for s in seeds}


# ------------------------------------------------------------------------------ claims
def make_claims(metrics: Metrics, preset, records: dict) -> list[Claim]:
    """The paper's claims; ``preset`` is the ``Preset`` that produced ``metrics``, ``records``
    maps (dataset, method, seed) to a run's record (its per-sample test scores)."""
    claims: list[Claim] = []
    for ds in preset.datasets:
        claims += _lossless(metrics, ds, preset, records)
        if ds not in SATURATED:
            claims += _saving(metrics, ds, preset)
            claims += _against_baselines(metrics, ds, preset, records)
    return claims


def _lossless(m: Metrics, ds: str, preset, records: dict) -> list[Claim]:
    ib, full, noop = _acc(ds, "infobatch_r0.5"), _acc(ds, "full"), _acc(ds, NOOP)
    if ib not in m or full not in m or noop not in m:  # no claim without its no-op arm
        return []
    t = PAPER_TABLE1
    saturated = ds in SATURATED
    seeds = sorted(m.by_seed(ib))
    low_name = f"{ds}/infobatch_r0.5/low_fraction"
    low = f"{m.mean(low_name):.2f}" if low_name in m else "n/a"
    saved = (m.mean(f"{ds}/infobatch_r0.5/saved_fraction"), m.mean(f"{ds}/{NOOP}/saved_fraction"))
    return [Claim(
        id=f"lossless/{ds}",
        statement=f"InfoBatch at the paper's defaults (r = {R}, delta = {DELTA}) trains to the "
        f"full-data accuracy, within {LOSSLESS_MARGIN} points" + (
            " (on a task full data saturates: a weak test, since little can be lost there)"
            if saturated else ""),
        paper=f"Table 1 (R-18) full vs r = 0.5: CIFAR-10 {t['cifar10']['full']} vs "
        f"{t['cifar10']['infobatch'][1]}, CIFAR-100 {t['cifar100']['full']} vs "
        f"{t['cifar100']['infobatch'][1]}",
        measured=f"full {m.fmt(full)}, InfoBatch {m.fmt(ib)}, random pruning of the same "
        f"passes {m.fmt(noop)}; InfoBatch - full {m.gap(ib, full)}",
        criterion="InfoBatch r = 0.5's test accuracy (points) vs full data's; SE over seeds and "
        "the shared test set's samples; the no-op arm (random pruning of the same passes) "
        "through the same test",
        test=non_inferiority(m.by_seed(ib), m.by_seed(full), tolerance=LOSSLESS_MARGIN,
                             source=LOSSLESS_SOURCE, control=m.by_seed(noop),
                             control_name=NOOP_NAME,
                             items=(_items(records, ds, "infobatch_r0.5", seeds),
                                    _items(records, ds, "full", seeds),
                                    _items(records, ds, NOOP, seeds))),
        regime=regime(ds, preset)[0], needs=regime(ds, preset)[1], test_set="shared",
        rests_on=(f"rewards-data/{ds}",),
        moved=f"the same passes skipped as the no-op arm (saved {saved[0]:.3f} vs "
        f"{saved[1]:.3f}); InfoBatch skips only among the {low} of samples below the mean loss "
        f"and weights the kept ones by 1/(1 - r) = {1 / (1 - R):g}, the no-op skips uniformly "
        "with weight 1",
    )]  # fmt: skip


def _needs_at(epochs: int, delta: float) -> str:
    """What the paper's 0.40 needs of the loss distribution at ``epochs`` epochs."""
    share = needed_below_mean(epochs, delta)
    if share > 1:
        return (f"is out of reach at our {epochs} epochs whatever the losses (ceiling "
                f"{saving_ceiling(epochs, R, delta):.3f})")  # fmt: skip
    return f"needs {share:.0%} of the samples below the mean at our {epochs} epochs"


def _saving(m: Metrics, ds: str, preset) -> list[Claim]:
    name = f"{ds}/infobatch_r0.5/saved_fraction"
    if name not in m:
        return []
    low_name = f"{ds}/infobatch_r0.5/low_fraction"  # absent when no epoch pruned
    low = m.mean(low_name) if low_name in m else None
    E, P = preset.epochs, pruned_epochs(preset.epochs, preset.delta)
    formula = "n/a" if low is None else f"{R} x {low:.3f} x {P} / {E} = {R * low * P / E:.3f}"
    needs = (f"{PAPER_SETTING}, where the paper saves 40 % at r = {R}, delta = {DELTA}: that "
             f"needs >= {needed_below_mean(PAPER_EPOCHS):.0%} of the samples below the mean loss "
             f"in every pruned epoch (a few hard samples far above it); ours "
             f"{'n/a' if low is None else f'{low:.2f}'} below the mean, {E} epochs (ceiling "
             f"{saving_ceiling(E, R, preset.delta):.3f})")  # fmt: skip
    reg = regime(ds, preset, needs)
    return [
        Claim(
            id=f"saves-cost/{ds}",
            statement="at the same defaults InfoBatch skips at least 40% of the forward/backward "
            f"sample passes (derived: the schedule saves r x (share of samples below the mean "
            f"loss) x (pruned epochs) / E, at most r x delta = {R * DELTA:.4f}, so 40% needs >= "
            f"{PAPER_SAVED / (R * DELTA):.0%} of the samples below the mean loss in every pruned "
            "epoch: a loss distribution with a few hard samples far above the rest)",
            paper="abstract: 'losslessly saves 40% overall cost' on CIFAR-10/100 (official "
            "README: 40.9% on CIFAR-100, r = 0.5)",
            measured=f"saved {m.fmt(name, 3)} of the passes; the formula r x (share below the "
            f"mean loss) x (pruned epochs) / E gives {formula}; the paper's 0.40 "
            f"{_needs_at(E, preset.delta)}, and needs {needed_below_mean(PAPER_EPOCHS):.0%} at "
            f"the official {PAPER_EPOCHS}",
            criterion=f"InfoBatch r = 0.5's share of passes saved, per seed, vs the paper's "
            f"{PAPER_SAVED}",
            test=threshold(m.by_seed(name), threshold=PAPER_SAVED, source=SAVED_SOURCE),
            regime=reg[0], needs=reg[1], test_set="none", rests_on=(f"saving-reachable/{ds}",),
        ),
        *_wall_clock(m, ds, preset),
    ]  # fmt: skip


def _wall_clock(m: Metrics, ds: str, preset) -> list[Claim]:
    key = f"{ds}/interleaved/time_ratio"
    if key not in m:
        return []
    ratios = m.by_seed(key)  # repeat k -> InfoBatch / full seconds
    r = np.array(list(ratios.values()))
    saved = m.mean(f"{ds}/interleaved/saved_fraction")
    bound = 1 - TIME_EFFICIENCY * saved  # the time ratio if half the saved passes' share is saved
    q1, med, q3 = np.percentile(r, [25, 50, 75])
    full_s = m.mean(f"{ds}/interleaved/full_seconds")
    needs = (f"ResNets on GPU, where a sample's forward/backward pass costs far more than "
             f"InfoBatch's O(1) per-sample bookkeeping (paper Sec. 3.3; {PAPER_SETTING}); ours "
             f"{setting(ds, preset)}, timed at one thread ({full_s:.2f} s per full-data run)")  # fmt: skip
    reg = regime(ds, preset, needs)
    return [
        Claim(
            id=f"wall-clock/{ds}",
            statement="the skipped passes turn into saved training time: at least half their "
            "share of the passes is saved as time",
            paper="Sec. 3.3 / Table 1: O(1) per-sample cost, overall training time saved "
            "~ tracks the pruned samples",
            measured=f"InfoBatch/full training time, {len(r)} interleaved repeats at 1 "
            f"thread: median {med:.3f} (quartiles {q1:.3f}-{q3:.3f}, range {r.min():.3f}-"
            f"{r.max():.3f}; per repeat {', '.join(f'{x:.3f}' for x in r)}); summed epoch "
            f"seconds {m.mean(f'{ds}/interleaved/infobatch_seconds'):.2f} s vs "
            f"{full_s:.2f} s (means); passes saved {saved:.3f}",
            criterion=f"per repeat, training time InfoBatch r = 0.5 / full data (their epochs "
            f"interleaved in one process at 1 thread) vs 1 - {TIME_EFFICIENCY} x passes saved "
            f"= {bound:.3f}",
            test=threshold(ratios, threshold=bound, higher_is_better=False, source=TIME_SOURCE),
            regime=reg[0], needs=reg[1], test_set="none",
        ),
    ]  # fmt: skip


def _against_baselines(m: Metrics, ds: str, preset, records: dict) -> list[Claim]:
    claims = []
    ib = _acc(ds, "infobatch_r0.7")
    refs = {
        "random": ("random dynamic pruning (InfoBatch's per-epoch kept counts, weight 1)",
                   f"Table 1 at 70%: InfoBatch {_paper_row('infobatch', 2)} vs static Random "
                   f"{_paper_row('random_static', 2)}; the dynamic Random* row was not found "
                   "in a readable source"),
        "hard": ("hard pruning (the lowest-loss samples dropped, same total budget, no "
                 "rescaling or annealing)",
                 "Sec. 3 and the ablation (soft vs hard pruning); the ablation's numbers were "
                 "not found in a readable source"),
    }  # fmt: skip
    reg = regime(ds, preset)
    for kind, (label, paper) in refs.items():
        base = _acc(ds, f"{kind}_r0.7")
        if ib not in m or base not in m:
            continue
        seeds = sorted(m.by_seed(ib))
        items = (_items(records, ds, "infobatch_r0.7", seeds),
                 _items(records, ds, f"{kind}_r0.7", seeds))  # fmt: skip
        claims.append(
            Claim(
                id=f"beats-{kind}/{ds}",
                statement=f"at InfoBatch r = 0.7's pass budget, InfoBatch is more accurate than "
                f"{label}, by more than {BEAT_MARGIN} point",
                paper=paper,
                measured=f"InfoBatch {m.fmt(ib)} vs {kind} {m.fmt(base)}: gap {m.gap(ib, base)}",
                criterion=f"InfoBatch r = 0.7's test accuracy (points) vs {kind} pruning's at "
                "the same budget (every method's lr tuned on validation); SE over seeds and the "
                "shared test set's samples",
                test=superiority(
                    m.by_seed(ib),
                    m.by_seed(base),
                    margin=BEAT_MARGIN,
                    source=BEAT_SOURCE,
                    items=items,
                ),
                regime=reg[0],
                needs=reg[1],
                test_set="shared",
                rests_on=(f"rewards-data/{ds}",) if kind == "random" else (),
            )
        )
    return claims


# ------------------------------------------------------------------------------ premises
def make_premises(metrics: Metrics, preset, records: dict) -> list[Premise]:
    """Preconditions the claims rest on, per dataset: the task rewards data (full data beats
    random pruning of InfoBatch r = 0.5's passes by more than the lossless tolerance: else
    skipping passes costs nothing there, and neither lossless nor beats-random can tell
    InfoBatch's choice of passes from skipping them), and the schedule can reach the paper's
    saving at all (its ceiling r x pruned epochs / E above 0.40)."""
    premises: list[Premise] = []
    for ds in preset.datasets:
        full, noop = _acc(ds, "full"), _acc(ds, NOOP)
        if full in metrics and noop in metrics:
            seeds = sorted(metrics.by_seed(full))
            premises.append(Premise(
                id=f"rewards-data/{ds}",
                statement="the task rewards data: random pruning of the passes InfoBatch r = 0.5 "
                f"skips costs more than the lossless tolerance ({LOSSLESS_MARGIN} points)",
                measured=f"full {metrics.fmt(full)} vs random pruning of the same passes "
                f"{metrics.fmt(noop)}: gap {metrics.gap(full, noop)}",
                criterion="full data's test accuracy (points) vs the no-op arm's; SE over seeds "
                "and the shared test set's samples",
                test=superiority(metrics.by_seed(full), metrics.by_seed(noop),
                                 margin=LOSSLESS_MARGIN, source=LOSSLESS_SOURCE,
                                 items=(_items(records, ds, "full", seeds),
                                        _items(records, ds, NOOP, seeds))),
                paper="Table 1: static Random at 30 / 50 / 70% loses "
                f"{_paper_row('random_static', 0)} / {_paper_row('random_static', 1)} / "
                f"{_paper_row('random_static', 2)} against full data's CIFAR-10 "
                f"{PAPER_TABLE1['cifar10']['full']}, CIFAR-100 {PAPER_TABLE1['cifar100']['full']}",
            ))  # fmt: skip
        if ds not in SATURATED and f"{ds}/infobatch_r0.5/saved_fraction" in metrics:
            E, ceiling = preset.epochs, saving_ceiling(preset.epochs, R, preset.delta)
            premises.append(Premise(
                id=f"saving-reachable/{ds}",
                statement=f"the schedule can save the paper's {PAPER_SAVED:.0%} at all: its "
                f"ceiling r x pruned epochs / E (every sample below the mean loss) lies above it",
                measured=f"ceiling {R} x {pruned_epochs(E, preset.delta)} / {E} = {ceiling:.4f} "
                f"({E} epochs, delta {preset.delta}: the last "
                f"{E - pruned_epochs(E, preset.delta) - 1} anneal, epoch 0 prunes nothing)",
                criterion="the ceiling of the schedule that ran vs the paper's saving",
                test=threshold([ceiling], threshold=PAPER_SAVED,
                               source=SAVED_SOURCE),
                paper=f"Sec. 3.3: prune ratio r = {R}, annealing delta = {DELTA}; the official "
                f"{PAPER_EPOCHS} epochs give a ceiling of {saving_ceiling(PAPER_EPOCHS):.3f}",
            ))  # fmt: skip
    return premises


# ------------------------------------------------------------------------------ checks
def make_checks(metrics: Metrics, records: dict, preset) -> list[Check]:
    """Invariants of the code; ``records`` maps (dataset, method, seed) to a run's record."""
    checks: list[Check] = []
    for ds in preset.datasets:
        runs = {k: v for k, v in records.items() if k[0] == ds}
        checks += _counters(ds, runs) + _annealing(ds, runs, preset) + _budget(metrics, ds)
        checks += _saving_formula(ds, runs)
    return checks


def _saving_formula(ds: str, runs: dict) -> list[Check]:
    """The saving of the paper's schedule on our task against its formula, r x (share below
    the mean loss, averaged over the epochs that pruned) x (epochs that pruned) / E, for every
    InfoBatch run: on the selection's pruned counts (global under torchrun too); ``counters``
    ties them to the passes the training loop counted."""
    ib = [(m, r) for (_, m, _), r in runs.items()
          if m.startswith("infobatch") and r.get("low_fraction") is not None]  # fmt: skip
    if not ib:
        return []
    worst, worst_loop, slack = 0.0, 0.0, 0.0
    for m, r in ib:
        ratio, E, n = float(m.split("_r")[1]), len(r["epochs"]), max(r["kept_per_epoch"])
        formula = ratio * r["low_fraction"] * r["pruned_epochs"] / E
        worst = max(worst, abs(r["predicted_saved_fraction"] - formula))
        worst_loop = max(worst_loop, abs(r["saved_fraction"] - formula))
        slack = max(slack, r["pruned_epochs"] / (E * n))
    return [Check(
        id=f"saving-formula/{ds}",
        statement="the passes saved follow r x (share below the mean loss) x (pruned epochs) / E",
        measured=f"max |saved - formula| {worst:.1e} on the selection's counts, {worst_loop:.1e} "
                 f"on the loop's, over {len(ib)} InfoBatch runs",
        criterion=f"<= one sample per pruned epoch ({slack:.1e}) on the selection's counts",
        holds=worst <= slack + 1e-12,
        why="each pruned epoch skips r of the below-mean samples, rounded to a whole sample "
            "(the official keeps floor((1 - r) x |D_low|)), and no other epoch skips any",
    )]  # fmt: skip


def _counters(ds: str, runs: dict) -> list[Check]:
    pruned = [r for (_, m, _), r in runs.items() if m != "full"]
    if not pruned:
        return []
    worst = max(abs(r["saved_fraction"] - r["predicted_saved_fraction"]) for r in pruned)
    return [Check(
        id=f"counters/{ds}",
        statement="the passes counted in the training loop equal those the sampler planned "
                  "(N - kept, summed over epochs)",
        measured=f"max |saved - predicted| {worst:.2e} over {len(pruned)} pruned runs",
        criterion="<= 0.01 (exact on one process; DDP drops a tail shorter than the world size)",
        holds=worst <= 0.01,
        why="the loop trains on exactly the indices the sampler drew for the epoch, and "
            "`update` counts each of them once (one process: both counts are sum_t kept_t)",
    )]  # fmt: skip


def _annealing(ds: str, runs: dict, preset) -> list[Check]:
    ib = [r for (_, m, _), r in runs.items() if m.startswith("infobatch")]
    if not ib:
        return []
    E = preset.epochs
    n_full = math.ceil(round((1 - preset.delta) * E, 9))
    n = max(ep["samples"] for r in ib for ep in r["epochs"])
    last = [ep for r in ib for ep in r["epochs"][E - n_full :]]
    all_seen = all(ep["samples"] == n for ep in last)
    unit = all(ep["weight_min"] == 1.0 and ep["weight_max"] == 1.0 for ep in last)
    pruned_before = all(min(ep["samples"] for ep in r["epochs"][: E - n_full]) < n
                        for r in ib) if E > n_full else True  # fmt: skip
    return [Check(
        id=f"annealing/{ds}",
        statement="the last ceil((1 - delta) E) epochs train on every sample with weight 1",
        paper="Sec. 3.3 (annealing), delta = 0.875",
        measured=f"last {n_full} of {E} epochs, {len(ib)} InfoBatch runs: every sample seen "
                 f"{all_seen}, all weights 1 {unit}; earlier epochs pruned {pruned_before}",
        criterion="all samples seen and all weights == 1 in each of those epochs",
        holds=all_seen and unit,
        why="InfoBatch._select resets every weight to 1 and returns all N indices in any epoch "
            "that does not prune, and the last ceil((1 - delta) E) epochs never prune",
    )]  # fmt: skip


def _budget(m: Metrics, ds: str) -> list[Check]:
    names = [f"{ds}/{k}_r0.7/saved_fraction" for k in ("infobatch", "random", "hard")]
    have = [n for n in names if n in m]
    if len(have) < 2:
        return []
    sv = {n.split("/")[1]: m.mean(n) for n in have}
    spread = max(sv.values()) - min(sv.values())
    return [Check(
        id=f"equal-budget/{ds}",
        statement="the baselines used InfoBatch r = 0.7's pass budget",
        measured="passes saved " + ", ".join(f"{k} {v:.4f}" for k, v in sv.items()),
        criterion="saved fractions within 0.01",
        holds=spread <= 0.01,
        why="random pruning keeps InfoBatch r = 0.7's per-epoch kept counts; hard pruning drops "
            "its mean per-epoch share every epoch (rounded to whole samples)",
    )] + _noop_budget(m, ds)  # fmt: skip


def _noop_budget(m: Metrics, ds: str) -> list[Check]:
    ib, noop = f"{ds}/infobatch_r0.5/saved_fraction", f"{ds}/{NOOP}/saved_fraction"
    if ib not in m or noop not in m:
        return []
    worst = max(abs(m.by_seed(ib)[s] - m.by_seed(noop)[s]) for s in m.by_seed(ib))
    return [Check(
        id=f"noop-budget/{ds}",
        statement="the lossless claim's no-op arm skipped the passes InfoBatch r = 0.5 skipped",
        measured=f"max |saved InfoBatch r = 0.5 - saved {NOOP}| over the seeds {worst:.2e}",
        criterion="<= 1e-9 on every seed",
        holds=worst <= 1e-9,
        why=f"{NOOP} keeps InfoBatch r = 0.5's per-epoch kept counts of the same seed",
    )]  # fmt: skip

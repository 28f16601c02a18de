"""The paper's claims, the premises they rest on and the code's checks, computed from the
metrics.

A claim is a statement of the paper measured against the strongest baseline, with its margin
stated against the seeds' standard error and its source, and the paper's own figure beside
it; a premise is a precondition of our setting that is not the paper's statement (the rule
stopped at all); a check is an invariant of the code that holds by construction. None is
ever typed in: a verdict (holds / fails / inconclusive) comes from a test on paired per-seed
values.

The no-op arm of this package is the rule switched off: training to the end and keeping the
last epoch (``final``), read from the same run as Label Wave's own epoch. Where it can pass a
criterion (``near-oracle``, ``near-oracle-epoch``, ``vs-holdout``) it is run through the same
test, and a criterion it passes too cannot tell Label Wave from doing nothing (the verdict is
then inconclusive).
"""

from __future__ import annotations

import numpy as np

from iclr24_common import (
    Check,
    Claim,
    Metrics,
    Premise,
    Source,
    all_of,
    non_inferiority,
    none_of,
    superiority,
    threshold,
)

NO_PAPER_NUMBER = ("none found: the paper's tables could not be read here (searched the arXiv "
                   "HTML 2502.07551v1 and third-party summaries, of which only the openings are "
                   "stored, and the official repository at 178a761 and HEAD cf3e9eb, whose READMEs "
                   "and code report no numbers)")  # fmt: skip

# The margins were fixed with the first claims (b376f51), before the first default run
# (9026342), and are unchanged since; none is derived from the paper's numbers, which could not
# be read here. Each one's reason is written beside it (the reasons for the two "near" margins
# were written down at the issue-50 change, before its default rerun; the values are b376f51's).
MARGINS_COMMIT = "b376f51"
# beats-final: 10 test-accuracy points: the paper's figures show training to the end far below
# the peak under 40 % symmetric noise, so the gain it describes is a large one
BEATS_FINAL_MARGIN = 10.0
BEATS_FINAL_SOURCE = Source.ours(
    "10 test-accuracy points: the paper's figures (Fig. 1-3) show the last epoch far below the "
    "peak under 40% symmetric noise, so the gain described is large; no number read from the "
    "paper", commit=MARGINS_COMMIT)  # fmt: skip
# near-oracle: "near the best epoch" read as within 5 test-accuracy points of the test oracle:
# half of the 10-point beats-final margin, so that "near the peak" is nearer the peak than the
# drop to the final epoch the paper describes (the paper gives no number for "near")
NEAR_POINTS = 5.0
NEAR_POINTS_SOURCE = Source.ours(
    "5 test-accuracy points: our reading of 'near the best epoch' (the paper gives no number), "
    "half of the 10-point drop to the final epoch that beats-final requires, so that a stop "
    "counted near the peak is closer to it than to the end", commit=MARGINS_COMMIT)  # fmt: skip
# near-oracle-epoch: within 6 epochs of the oracle's: two windows of the k = 3 moving average,
# the finest the smoothed curve can place a minimum (each MA value mixes 3 epochs' PC)
NEAR_EPOCHS = 6.0
NEAR_EPOCHS_SOURCE = Source.ours(
    "6 epochs (of the default's 100-epoch budget): our reading of 'near the best epoch' (the "
    "paper gives no number): two widths of the k = 3 moving average, since each MA value mixes "
    "3 epochs' PC and so cannot place a minimum more finely than a window on either side",
    commit=MARGINS_COMMIT)  # fmt: skip
# vs-holdout: "matches or beats" hold-out early stopping = no worse by more than 1 test-accuracy
# point (accuracy tables are read to the whole point)
HOLDOUT_TOLERANCE = 1.0
HOLDOUT_SOURCE = Source.ours(
    "1 test-accuracy point: 'matches' read to the whole point, as accuracy tables are; no "
    "number read from the paper", commit=MARGINS_COMMIT)  # fmt: skip

# The paper's regime: CIFAR-10 / CIFAR-100 (50,000 training images) with ResNet-18 for 200
# epochs at batch 128 (official main.py at cf3e9eb: EPOCH 200, BATCH_SIZE 128, LR 0.01)
PAPER_EPOCHS = 200
PAPER_SETTING = (
    "CIFAR-10 / CIFAR-100 (50,000 training images, 32x32 RGB) with ResNet-18 trained 200 "
    "epochs at batch 128, lr 0.01 (the paper's experiments; tmllab/2024_ICLR_LabelWave@cf3e9eb "
    "LabelWave/main.py: EPOCH 200, BATCH_SIZE 128, LR 0.01, all 50,000 images)"
)


def regime(preset) -> tuple[str, str]:
    """``paper`` on CIFAR for the official 200 epochs; else ``below`` with what the paper's
    effect needs and ours. (The rule, the first local minimum of the k = 3 moving average, is
    the paper's by a second-hand transcription: the README's "Window and patience".)"""
    if preset.data != "digits" and preset.train.epochs >= PAPER_EPOCHS:
        return "paper", ""
    model = f"a {preset.width}-wide MLP" if preset.data == "digits" else "ResNet-18"
    data = (
        "sklearn digits (1,257 training images of 8x8)" if preset.data == "digits" else preset.data
    )
    return "below", (f"{PAPER_SETTING}; ours {data} with {model}, {preset.train.epochs} epochs "
                     f"at batch {preset.train.batch_size}")  # fmt: skip


def _groups(preset) -> list[str]:
    return [spec.replace(":", "") for spec in preset.noises]


def _holdouts(preset) -> list[str]:
    return [f"holdout{round(100 * f)}" for f in preset.holdouts]


def strongest_holdout(metrics: Metrics, preset, g: str) -> str:
    """The hold-out fraction with the best mean test accuracy on noise group ``g``."""
    return max(_holdouts(preset), key=lambda h: metrics.mean(f"{g}/{h}/test_acc"))


def _runs(metrics: Metrics, groups: list[str], name: str) -> np.ndarray:
    """A per-run metric over every noise kind and seed (one value per training run)."""
    return np.concatenate([metrics.values(f"{g}/{name}") for g in groups])


def _stops(stopped: np.ndarray) -> str:
    return f"the rule stopped on {int(np.sum(stopped))} of {len(stopped)} runs"


def _moved(metrics: Metrics, preset, groups: list[str]) -> str:
    """How far Label Wave moved from its no-op (the rule switched off keeps the last epoch),
    in the rule's own terms: the epoch it kept."""
    kept = _runs(metrics, groups, "labelwave/epoch")
    return (f"Label Wave kept epoch {kept.mean():.3g} on average (runs: {kept.min():g}-"
            f"{kept.max():g}); the rule switched off keeps epoch "
            f"{preset.train.epochs}")  # fmt: skip


def make_claims(metrics: Metrics, preset,
                items: dict | None = None) -> tuple[list[Claim], list[Premise]]:  # fmt: skip
    """The claims and the premises they rest on. ``items[group][rule][seed]``: every test
    example's score under that rule's epoch where every seed shares one test set (CIFAR);
    ``None`` where each seed splits its own (digits)."""
    groups, claims = _groups(preset), []
    where, needs = regime(preset)
    test_set = "per-seed" if items is None else "shared"

    def its(g: str, *rules: str) -> tuple | None:
        return None if items is None else tuple(items[g][r] for r in rules)

    premises = []
    for g in groups:
        stopped = metrics.by_seed(f"{g}/labelwave/stopped")
        premises.append(Premise(
            id=f"stops/{g}",
            statement="Label Wave's rule fires: the k = 3 moving average of PC reaches a first "
            "local minimum inside the training budget on every run (a rule that never fires "
            "keeps its moving-average minimum over the whole budget, not the early stop the "
            "paper describes)",
            paper="Algorithm 1 stops at the first local minimum of the k-epoch moving average, "
            "k = 3 best of {1, 2, 3, 5, 10} (Appendix E); second-hand: a transcription of the "
            "paper, not read from its PDF here",
            measured=_stops(np.array(list(stopped.values()))),
            criterion="runs on which the rule did not stop, counted over the seeds",
            test=none_of({s: 1.0 - v for s, v in stopped.items()}),
        ))  # fmt: skip
    for g in (g for g in groups if g.startswith("sym")):
        lw = metrics.by_seed(f"{g}/labelwave/test_acc")
        final = metrics.by_seed(f"{g}/final/test_acc")
        claims.append(Claim(
            id=f"beats-final/{g}",
            statement="Label Wave's stop beats training to the end under symmetric noise by "
            f"more than {BEATS_FINAL_MARGIN:g} test-accuracy points (the final model has "
            "fitted the mislabeled examples)",
            paper=NO_PAPER_NUMBER,
            measured=f"test acc Label Wave {metrics.fmt(f'{g}/labelwave/test_acc')}, final epoch "
            f"{metrics.fmt(f'{g}/final/test_acc')} (points)",
            criterion="Label Wave's test accuracy vs the final epoch's (points; the final epoch "
            "is itself the rule switched off)",
            test=superiority(lw, final, margin=BEATS_FINAL_MARGIN, source=BEATS_FINAL_SOURCE,
                             items=its(g, "labelwave", "final")),
            regime=where, needs=needs, test_set=test_set, rests_on=(f"stops/{g}",),
        ))  # fmt: skip
    claims += _near_oracle(metrics, preset, groups, its, where, needs, test_set)
    for g in groups:
        h = strongest_holdout(metrics, preset, g)
        lw, ho = metrics.by_seed(f"{g}/labelwave/test_acc"), metrics.by_seed(f"{g}/{h}/test_acc")
        claims.append(Claim(
            id=f"vs-holdout/{g}",
            statement="Label Wave (all training data, no validation) matches or beats early "
            "stopping on a hold-out validation set carved from the noisy training data: at "
            f"most {HOLDOUT_TOLERANCE:g} test-accuracy point below it, where training to the "
            "end is not",
            paper=NO_PAPER_NUMBER + "; abstract-level summaries say it beats 5%-30% hold-out",
            measured=f"test acc Label Wave {metrics.fmt(f'{g}/labelwave/test_acc')}, strongest "
            f"hold-out ({h}) {metrics.fmt(f'{g}/{h}/test_acc')}, final epoch (control) "
            f"{metrics.fmt(f'{g}/final/test_acc')} (points)",
            criterion=f"Label Wave's test accuracy vs the strongest hold-out rule's ({h}); "
            "no-op control: the final epoch (the rule switched off, the same run)",
            test=non_inferiority(lw, ho, tolerance=HOLDOUT_TOLERANCE, source=HOLDOUT_SOURCE,
                                 control=metrics.by_seed(f"{g}/final/test_acc"),
                                 control_name="final epoch",
                                 items=its(g, "labelwave", h, "final")),
            regime=where, needs=needs, test_set=test_set, rests_on=(f"stops/{g}",),
            moved=_moved(metrics, preset, [g]),
        ))  # fmt: skip
    return claims, premises


def _near_oracle(metrics: Metrics, preset, groups: list[str], its, where: str, needs: str,
                 test_set: str) -> list[Claim]:  # fmt: skip
    """Near the oracle in accuracy (every noise kind), and in epochs."""
    epochs = float(preset.train.epochs)
    acc = [non_inferiority(metrics.by_seed(f"{g}/labelwave/test_acc"),
                           metrics.by_seed(f"{g}/oracle/test_acc"), tolerance=NEAR_POINTS,
                           source=NEAR_POINTS_SOURCE,
                           control=metrics.by_seed(f"{g}/final/test_acc"),
                           control_name="final epoch", items=its(g, "labelwave", "oracle", "final"))
           for g in groups]  # fmt: skip
    offsets = _runs(metrics, groups, "labelwave/epochs_from_oracle")
    never = np.abs(epochs - _runs(metrics, groups, "oracle/epoch"))  # the last epoch's offset
    behind = {g: metrics.gap(f"{g}/oracle/test_acc", f"{g}/labelwave/test_acc") for g in groups}
    rests = tuple(f"stops/{g}" for g in groups)
    return [
        Claim(
            id="near-oracle",
            statement="Label Wave stops near the best epoch without validation data: within "
            f"{NEAR_POINTS:g} test-accuracy points of the test oracle on every noise kind, "
            "where training to the end is not",
            paper=NO_PAPER_NUMBER + "; the paper shows the PC minimum next to the test-accuracy "
            "peak (its Fig. 1-3)",
            measured="oracle - Label Wave (points): "
            + "; ".join(f"{g} {b}" for g, b in behind.items()),
            criterion=f"all of: on every noise kind, Label Wave's test accuracy vs the test "
            f"oracle's (non-inferior within {NEAR_POINTS:g} points); no-op control: the final "
            "epoch (the rule switched off, the same run)",
            test=all_of(*acc),
            regime=where, needs=needs, test_set=test_set, rests_on=rests,
            moved=_moved(metrics, preset, groups),
        ),
        Claim(
            id="near-oracle-epoch",
            statement=f"Label Wave's epoch lies within {NEAR_EPOCHS:g} epochs of the test "
            "oracle's (the best epoch), where the final epoch does not",
            paper=NO_PAPER_NUMBER + "; the paper shows the PC minimum next to the test-accuracy "
            "peak (its Fig. 1-3)",
            measured=f"mean |t_LW - t_best| = {offsets.mean():.3g} epochs (final epoch: "
            f"{never.mean():.3g}) over {len(offsets)} runs",
            criterion=f"per run, |t_LW - t_best| below {NEAR_EPOCHS:g} epochs; no-op control: "
            "the final epoch's distance to the oracle's",
            test=threshold(offsets, threshold=NEAR_EPOCHS, higher_is_better=False,
                           control=never, control_name="final epoch", source=NEAR_EPOCHS_SOURCE),
            regime=where, needs=needs, test_set="none", rests_on=rests,
            moved=_moved(metrics, preset, groups),
        ),
    ]  # fmt: skip


def make_checks(metrics: Metrics, preset) -> list[Check]:
    groups = _groups(preset)
    drift = max(max(metrics.values(f"{g}/labelwave/kept_vs_logged")) for g in groups)
    replay = min(min(metrics.values(f"{g}/labelwave/replay_agrees")) for g in groups)
    off = {g: max(abs(r - float(g.split(":")[1])) for r in metrics.values(
        f"{g.replace(':', '')}/noise/realised_rate")) for g in preset.noises}  # fmt: skip
    return [
        Check(
            id="kept-state",
            statement="the model Label Wave kept is the model of the epoch it selected",
            measured=f"max |test acc of kept state - logged test acc at that epoch| = {drift:g}",
            criterion="0 on every run",
            holds=drift == 0.0,
            why="train() loads LabelWave.best_state (a deep copy taken at the selected epoch) and "
            "evaluates it with the same deterministic predict() on the same test set",
        ),
        Check(
            id="online-equals-replay",
            statement="the callback run inside the loop and Algorithm 1 replayed on the logged "
            "PC sequence select the same epoch and stop at the same epoch",
            measured=f"agreement on {'all' if replay == 1.0 else 'not all'} runs",
            criterion="all runs agree",
            holds=replay == 1.0,
            why="label_wave_stop replays the same LabelWave.observe step on the PC sequence the "
            "callback logged",
        ),
        Check(
            id="noise-rate",
            statement="the realised noise rate is the requested one",
            measured="max |realised - requested|: "
            + ", ".join(f"{g} {v:.3f}" for g, v in off.items()),
            criterion="<= 0.05 on every seed",
            holds=max(off.values()) <= 0.05,
            why="each label flips with the requested probability on average (the official "
            "builders); over the >= 1,000 training examples the binomial spread is ~0.015, so "
            "0.05 is past 3 of its standard deviations",
        ),
    ]

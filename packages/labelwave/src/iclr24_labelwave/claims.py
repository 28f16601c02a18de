"""The paper's claims and the code's checks, computed from the metrics.

A claim is a statement of the paper measured against the strongest baseline, with its margin
stated against the seeds' standard error and the paper's own figure beside it; a check is
an invariant of the code that holds by construction. Neither is ever typed in: a claim's
verdict (holds / fails / inconclusive) comes from a test on paired per-seed values.

The degenerate control of this package is the rule that never fires: training to the end and
keeping the last epoch (``final``). Where it can pass a criterion (``near-oracle``,
``vs-holdout``) it is run through the same test, and a criterion it passes too cannot tell
Label Wave from doing nothing (the verdict is then inconclusive).
"""

from __future__ import annotations

import numpy as np

from iclr24_common import Check, Claim, Metrics, all_of, non_inferiority, superiority, threshold

NO_PAPER_NUMBER = ("none found: the paper's tables could not be read here (searched the arXiv "
                   "HTML 2502.07551v1 and third-party summaries, of which only the openings are "
                   "stored, and the official repository at 178a761 and HEAD cf3e9eb, whose READMEs "
                   "and code report no numbers)")  # fmt: skip

# beats-final: 10 test-accuracy points, the v2 criterion (fixed before the first default run):
# the paper's figures show training to the end far below the peak under 40 % symmetric noise,
# so the gain it describes is a large one, not a point or two.
BEATS_FINAL_MARGIN = 10.0
# near-oracle: "near the best epoch" read as within 5 test-accuracy points of the test oracle
# and within 6 epochs of its epoch (the v2 criterion; the paper gives no number for "near").
NEAR_POINTS = 5.0
NEAR_EPOCHS = 6.0
# Every claim that reads Label Wave's epoch needs a stop: the rule fires (patience runs out
# inside the budget) on more than half of the runs, by more than 2 SE. A rule that never fires
# keeps its moving-average minimum over the whole budget, which is not the early stop the
# paper describes (issue 38: in smoke, near-oracle held with 0 of 2 runs stopping).
STOP_RATE = 0.5
# vs-holdout: "matches or beats" hold-out early stopping = no worse by more than 1 test-accuracy
# point (the v2 criterion: accuracy tables are read to the whole point).
HOLDOUT_TOLERANCE = 1.0


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


def make_claims(metrics: Metrics, preset) -> list[Claim]:
    groups, claims = _groups(preset), []
    for g in (g for g in groups if g.startswith("sym")):
        lw = metrics.by_seed(f"{g}/labelwave/test_acc")
        final = metrics.by_seed(f"{g}/final/test_acc")
        stopped = metrics.values(f"{g}/labelwave/stopped")
        claims.append(Claim(
            id=f"beats-final/{g}",
            statement="Label Wave's stop beats training to the end under symmetric noise "
            "(the final model has fitted the mislabeled examples)",
            paper=NO_PAPER_NUMBER,
            measured=f"test acc Label Wave {metrics.fmt(f'{g}/labelwave/test_acc')}, final epoch "
            f"{metrics.fmt(f'{g}/final/test_acc')} (points); {_stops(stopped)}",
            criterion="all of: Label Wave's test accuracy vs the final epoch's (points; the final "
            "epoch is itself the never-fires control); per run, the rule stopped (1) or not (0), "
            f"above {STOP_RATE:g}",
            test=all_of(superiority(lw, final, margin=BEATS_FINAL_MARGIN),
                        threshold(stopped, threshold=STOP_RATE)),
        ))  # fmt: skip
    claims.append(_near_oracle(metrics, preset, groups))
    for g in groups:
        h = strongest_holdout(metrics, preset, g)
        lw, ho = metrics.by_seed(f"{g}/labelwave/test_acc"), metrics.by_seed(f"{g}/{h}/test_acc")
        stopped = metrics.values(f"{g}/labelwave/stopped")
        claims.append(Claim(
            id=f"vs-holdout/{g}",
            statement="Label Wave (all training data, no validation) matches or beats early "
            "stopping on a hold-out validation set carved from the noisy training data",
            paper=NO_PAPER_NUMBER + "; abstract-level summaries say it beats 5%-30% hold-out",
            measured=f"test acc Label Wave {metrics.fmt(f'{g}/labelwave/test_acc')}, strongest "
            f"hold-out ({h}) {metrics.fmt(f'{g}/{h}/test_acc')}, final epoch (control) "
            f"{metrics.fmt(f'{g}/final/test_acc')} (points); {_stops(stopped)}",
            criterion=f"all of: Label Wave's test accuracy vs the strongest hold-out rule's ({h}), "
            "control: the final epoch (the rule never fires); per run, the rule stopped (1) or "
            f"not (0), above {STOP_RATE:g}",
            test=all_of(non_inferiority(lw, ho, tolerance=HOLDOUT_TOLERANCE,
                                        control=metrics.by_seed(f"{g}/final/test_acc"),
                                        control_name="final epoch"),
                        threshold(stopped, threshold=STOP_RATE)),
        ))  # fmt: skip
    return claims


def _stops(stopped: np.ndarray) -> str:
    return f"the rule stopped on {int(np.sum(stopped))} of {len(stopped)} runs"


def _near_oracle(metrics: Metrics, preset, groups: list[str]) -> Claim:
    """Near the oracle in accuracy (every noise kind) and in epochs, and only if it stopped."""
    epochs = float(preset.train.epochs)
    acc = [non_inferiority(metrics.by_seed(f"{g}/labelwave/test_acc"),
                           metrics.by_seed(f"{g}/oracle/test_acc"), tolerance=NEAR_POINTS,
                           control=metrics.by_seed(f"{g}/final/test_acc"),
                           control_name="final epoch") for g in groups]  # fmt: skip
    offsets = _runs(metrics, groups, "labelwave/epochs_from_oracle")
    never = np.abs(epochs - _runs(metrics, groups, "oracle/epoch"))  # the last epoch's offset
    near = threshold(offsets, threshold=NEAR_EPOCHS, higher_is_better=False, control=never,
                     control_name="final epoch")  # fmt: skip
    stopped = _runs(metrics, groups, "labelwave/stopped")
    fired = threshold(stopped, threshold=STOP_RATE)
    behind = {g: metrics.gap(f"{g}/oracle/test_acc", f"{g}/labelwave/test_acc") for g in groups}
    return Claim(
        id="near-oracle",
        statement="Label Wave stops near the best epoch without validation data",
        paper=NO_PAPER_NUMBER + "; the paper shows the PC minimum next to the test-accuracy "
        "peak (its Fig. 1-3)",
        measured="oracle - Label Wave (points): " + "; ".join(f"{g} {b}" for g, b in behind.items())
        + f"; mean |t_LW - t_best| = {offsets.mean():.3g} epochs (final epoch: {never.mean():.3g}) "
        f"over {len(offsets)} runs; the rule stopped on {int(stopped.sum())} of {len(stopped)} runs",
        criterion=f"all of: on every noise kind, Label Wave's test accuracy vs the test oracle's "
        f"(non-inferior within {NEAR_POINTS:g} points); per run, |t_LW - t_best| below "
        f"{NEAR_EPOCHS:g} epochs; per run, the rule stopped (1) or not (0), above {STOP_RATE:g}; "
        "control for the first two: the final epoch (the rule never fires)",
        test=all_of(*acc, near, fired),
    )  # fmt: skip


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
            "evaluates it with the same deterministic accuracy() on the same test set",
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

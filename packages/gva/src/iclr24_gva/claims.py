"""The paper's claims and the code's checks, computed from the metrics.

The paper reports GVA qualitatively (curves, no table): Figure 1 (Walker2d reward per
checkpoint oscillating while the BC loss is smooth), Section 3.2 / Figure 3 (EMA, larger
batches and smaller learning rates damp the oscillations; EMA nearly for free) and
Section 4 (EMA lowers and steadies the validation loss of a language model before the
learning-rate cool-down). No numbers were found: searched the arXiv/OpenReview abstract,
the OpenReview reviews and the ICLR poster text. Our settings differ from the paper's
(a 4-d linear system and a pendulum instead of MuJoCo, a 2-layer character model instead
of a GPT). The four behaviour-cloning claims are made once per environment, with the same
criteria: ``linear/gva-exists``, ``pendulum/gva-exists``, ...
"""

from __future__ import annotations

import math

import numpy as np

from iclr24_common import Check, Claim, Metrics

PAPER_FIG1 = ("Fig. 1 and Sec. 3 (qualitative, no numbers published): Walker2d reward of "
              "consecutive checkpoints jumps sharply while the BC loss barely moves")  # fmt: skip
PAPER_EMA = ("Sec. 3.2, Fig. 3 (qualitative): EMA removes the oscillations at no cost in "
             "reward, across MuJoCo tasks")  # fmt: skip
PAPER_VR = ("Sec. 3.2 (qualitative): larger batches and smaller learning rates also damp "
            "GVA, at a cost in compute or in progress")  # fmt: skip
PAPER_LM = ("Sec. 4, LM figure (qualitative): EMA iterates have lower and smoother validation "
            "loss than raw iterates before the lr cool-down")  # fmt: skip


def _per_seed(metrics: Metrics, name: str) -> np.ndarray:
    return np.asarray(metrics.values(name), dtype=float)


def make_claims(metrics: Metrics, preset) -> list[Claim]:
    claims = []
    for env, task in preset.tasks().items():
        if f"{env}/small_batch/dJ" in metrics:
            claims += bc_claims(metrics, preset, task)
    if "lm/val" in metrics:
        claims.append(lm_claim(metrics))
    return claims


def bc_claims(metrics: Metrics, preset, task) -> list[Claim]:
    """The paper's four behaviour-cloning statements, measured in one environment."""
    env = task.name
    L = f"{env}/small_batch/"
    rel_dJ, rel_dloss = _per_seed(metrics, L + "rel_dJ"), _per_seed(metrics, L + "rel_dloss")
    ratio = rel_dJ / np.maximum(rel_dloss, 1e-12)
    dJ, dJ_ema = _per_seed(metrics, L + "dJ"), _per_seed(metrics, L + "ema/dJ")
    n = len(dJ)
    need = math.ceil(2 * n / 3)
    fixed = int((dJ_ema <= 0.3 * dJ).sum())
    J, J_ema = metrics.mean(L + "J_mean"), metrics.mean(L + "ema/J_mean")
    ema_gap = metrics.gap(L + "dJ", L + "ema/dJ")
    large_gap = metrics.gap(L + "dJ", f"{env}/large_batch/dJ")
    lr_gap = metrics.gap(L + "dJ", f"{env}/small_lr/dJ")
    cost = metrics.mean(f"{env}/large_batch/grad_examples") / metrics.mean(L + "grad_examples")
    return [
        Claim(
            id=f"{env}/gva-exists",
            statement="Under minibatch SGD, the rollout reward of consecutive checkpoints "
            "changes far more (relatively) than the behaviour-cloning loss does",
            paper=PAPER_FIG1,
            measured=f"relative |dJ| {metrics.fmt(L + 'rel_dJ', 3)} vs relative |dloss| "
            f"{metrics.fmt(L + 'rel_dloss', 3)}; ratio per seed "
            f"{', '.join(f'{r:.1f}' for r in ratio)}",
            criterion="(mean rel |dJ|) / (mean rel |dloss|) >= 10 over seeds, small-batch "
            "run, second half of training",
            holds=bool(rel_dJ.mean() >= 10 * rel_dloss.mean()),
        ),
        Claim(
            id=f"{env}/ema-fixes-gva",
            statement="An EMA of the iterates removes the reward oscillation without "
            "lowering the reward",
            paper=PAPER_EMA,
            measured=f"mean |dJ| raw {metrics.fmt(L + 'dJ', 3)}, EMA "
            f"{metrics.fmt(L + 'ema/dJ', 3)} (gap {ema_gap}); EMA <= 0.3x raw in {fixed} of "
            f"{n} seeds; mean J raw {J:.4f}, EMA {J_ema:.4f}",
            criterion=f"EMA |dJ| <= 0.3x raw in >= {need} of {n} seeds and mean J(EMA) >= "
            "0.99 mean J(raw)",
            holds=bool(fixed >= need and J_ema >= 0.99 * J),
        ),
        Claim(
            id=f"{env}/large-batch-damps-gva",
            statement="Reducing SGD variance with a larger batch also damps the oscillation "
            "(at a cost in compute)",
            paper=PAPER_VR,
            measured=f"mean |dJ| batch {preset.batch_size}: {metrics.fmt(L + 'dJ', 3)}, "
            f"batch {preset.large_batch}: {metrics.fmt(f'{env}/large_batch/dJ', 3)} "
            f"(gap {large_gap}) for {cost:.0f}x the gradient evaluations",
            criterion="small-batch |dJ| - large-batch |dJ| > 2 SE (paired over seeds)",
            holds=large_gap.beyond_noise(2.0),
        ),
        Claim(
            id=f"{env}/small-lr-damps-gva",
            statement="Reducing SGD variance with a smaller learning rate also damps the "
            "oscillation (at a cost in progress)",
            paper=PAPER_VR,
            measured=f"mean |dJ| lr {task.lr:g}: {metrics.fmt(L + 'dJ', 3)}, lr "
            f"{task.small_lr:g}: {metrics.fmt(f'{env}/small_lr/dJ', 3)} (gap {lr_gap}); "
            f"mean J {J:.4f} vs {metrics.mean(f'{env}/small_lr/J_mean'):.4f}",
            criterion="lr |dJ| - small-lr |dJ| > 2 SE (paired over seeds)",
            holds=lr_gap.beyond_noise(2.0),
        ),
    ]


def lm_claim(metrics: Metrics) -> Claim:
    loss_gap = metrics.gap("lm/val", "lm/ema/val")
    d, d_ema = _per_seed(metrics, "lm/dval"), _per_seed(metrics, "lm/ema/dval")
    return Claim(
        id="lm-ema",
        statement="In autoregressive language modelling, the EMA iterates' validation "
        "loss is lower and steadier than the raw iterates' before the lr cool-down",
        paper=PAPER_LM,
        measured=f"val loss raw {metrics.fmt('lm/val', 4)}, EMA "
        f"{metrics.fmt('lm/ema/val', 4)} nats/char (gap {loss_gap}); mean |d val| "
        f"raw {metrics.fmt('lm/dval', 3)}, EMA {metrics.fmt('lm/ema/dval', 3)}",
        criterion="raw - EMA loss > 2 SE (paired over seeds), and EMA's mean "
        "|d val| below raw's in every seed",
        holds=bool(loss_gap.beyond_noise(2.0) and (d_ema < d).all()),
    )


def make_checks(metrics: Metrics, preset) -> list[Check]:
    names = [n for n in metrics.names() if n.endswith("/crn_repeat_error")]
    worst = max(max(metrics.values(n)) for n in names)
    radius = metrics.mean("linear/expert/closed_loop_radius")
    batch = {"small_batch": preset.batch_size, "large_batch": preset.large_batch,
             "small_lr": preset.batch_size}  # fmt: skip
    budgets = {env: {metrics.mean(f"{env}/{c}/grad_examples") / b for c, b in batch.items()}
               for env in preset.tasks()}  # fmt: skip
    checks = [
        Check(
            id="common-random-numbers",
            statement="re-evaluating the final policy on the stored rollouts reproduces its J",
            measured=f"max |J_again - J| = {worst:.1e}",
            criterion="== 0 on every configuration and seed",
            holds=worst == 0.0,
        ),
        Check(
            id="expert-stabilises",
            statement="the LQR expert's (unsaturated) closed loop A - BK is stable, and only "
            "just (marginal: errors compound slowly)",
            measured=f"spectral radius {radius:.4f}",
            criterion="0.9 < radius < 1",
            holds=0.9 < radius < 1.0,
        ),
        Check(
            id="equal-step-budgets",
            statement="within an environment, every configuration takes the same number of "
            "SGD steps",
            measured="; ".join(f"{env}: {sorted(s)}" for env, s in budgets.items()),
            criterion="; ".join(f"{env}: all == {t.steps}" for env, t in preset.tasks().items()),
            holds=all(budgets[env] == {float(t.steps)} for env, t in preset.tasks().items()),
        ),
    ]
    if "pendulum/small_batch/expert_J" in metrics:
        held = min(metrics.values("pendulum/small_batch/expert_J_train_dist"))
        checks.append(
            Check(
                id="pendulum-expert-balances",
                statement="the pendulum's saturated LQR expert keeps it upright from the "
                "training distribution for the whole evaluation horizon",
                measured=f"expert J from the training distribution: min over seeds {held:.4f}; "
                f"on the (wider) evaluation distribution "
                f"{metrics.fmt('pendulum/small_batch/expert_J', 3)}",
                criterion="J == 1 from the training distribution, every seed",
                holds=held == 1.0,
            )
        )
    return checks

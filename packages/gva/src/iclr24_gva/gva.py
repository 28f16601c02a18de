"""Butterfly Effects of SGD Noise: Error Amplification in Behavior Cloning and Autoregression
(Block, Foster, Krishnamurthy, Simchowitz & Zhang, ICLR 2024), https://arxiv.org/abs/2310.11428

The paper's fix for gradient variance amplification (GVA) is an exponential moving average
(EMA) of the SGD iterates, evaluated instead of the last iterate:

    theta_bar_t = (1 - beta_t) * theta_bar_{t-1} + beta_t * theta_t,    theta_bar_0 = theta_0

with a weight beta_t on the newest iterate. Two schedules are in use:

- constant: beta_t = 1 - decay (the usual ``decay = 0.999`` EMA);
- warm-up / power: beta_t = max(beta_min, (1 + t / inv_gamma) ** -power). With power = 1,
  inv_gamma = 1 and beta_min = 0 this is Polyak's uniform average of all iterates; with
  power < 1 the average forgets old iterates, and beta_min caps its memory at ~1/beta_min
  steps (the paper's EMA, Section 4: a decay that warms up, then stays fixed).

The first update copies the iterate (beta_0 = 1), as ``torch.optim.swa_utils.AveragedModel``
does, so the average never carries the random initialisation.

The measurements of GVA (reward per checkpoint, its checkpoint-to-checkpoint jumps and the
behaviour-cloning loss's) are below the EMA: they are the paper's Figure 1 in numbers.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn


@dataclass(frozen=True)
class EMASchedule:
    """beta_t, the weight of the newest iterate at update t = 0, 1, 2, ...

    ``EMASchedule.constant(0.999)`` or ``EMASchedule.power(power, inv_gamma, beta_min)``.
    """

    kind: str = "power"
    """constant or power."""
    decay: float = 0.999
    """constant: beta_t = 1 - decay for t >= 1."""
    power: float = 1.0
    """power: the exponent of (1 + t / inv_gamma) (1: Polyak averaging)."""
    inv_gamma: float = 1.0
    """power: the time scale of the warm-up, in updates."""
    beta_min: float = 0.0
    """power: the floor of beta_t (0: no floor; 1e-3 keeps the last ~1000 iterates)."""

    def __post_init__(self):
        if self.kind not in ("constant", "power"):
            raise ValueError("kind must be constant or power")
        if not 0.0 <= self.decay <= 1.0:
            raise ValueError("decay must be in [0, 1]")
        if self.power < 0 or self.inv_gamma <= 0 or not 0.0 <= self.beta_min <= 1.0:
            raise ValueError("need power >= 0, inv_gamma > 0 and beta_min in [0, 1]")

    @classmethod
    def constant(cls, decay: float = 0.999) -> EMASchedule:
        return cls(kind="constant", decay=decay)

    @classmethod
    def power_law(cls, power: float = 1.0, inv_gamma: float = 1.0, beta_min: float = 0.0):
        return cls(kind="power", power=power, inv_gamma=inv_gamma, beta_min=beta_min)

    def beta(self, t: int) -> float:
        """The weight of the iterate at update ``t`` (``t = 0`` copies: beta_0 = 1)."""
        if t <= 0:
            return 1.0
        if self.kind == "constant":
            return 1.0 - self.decay
        return max(self.beta_min, (1.0 + t / self.inv_gamma) ** -self.power)


class EMA:
    """An exponential moving average of a model's parameters and floating-point buffers.

    >>> ema = EMA(model, EMASchedule.power_law(power=1.0, beta_min=1e-2))
    >>> for batch in data: loss(model, batch).backward(); opt.step(); ema.update(model)
    >>> ema.module(x)        # the averaged model, a deep copy in eval mode

    Integer buffers (BatchNorm's ``num_batches_tracked``) are copied, not averaged.
    ``state_dict()`` holds the averaged weights and the update count, to be saved in a
    checkpoint beside the raw weights.
    """

    def __init__(self, model: nn.Module, schedule: EMASchedule | None = None):
        self.schedule = schedule or EMASchedule()
        self.module = copy.deepcopy(model).eval().requires_grad_(False)
        self.step = 0

    @torch.no_grad()
    def update(self, model: nn.Module) -> float:
        """Fold the model's current weights into the average; returns the beta used."""
        beta = self.schedule.beta(self.step)
        mine = list(self.module.parameters()) + list(self.module.buffers())
        theirs = list(model.parameters()) + list(model.buffers())
        if len(mine) != len(theirs):
            raise ValueError("the model's parameters and buffers differ from the EMA's")
        floats = [(a, b.detach()) for a, b in zip(mine, theirs) if a.is_floating_point()]
        if floats:
            torch._foreach_lerp_([a for a, _ in floats], [b for _, b in floats], beta)
        for a, b in zip(mine, theirs):
            if not a.is_floating_point():
                a.copy_(b)
        self.step += 1
        return beta

    def state_dict(self) -> dict:
        return {"module": self.module.state_dict(), "step": self.step}

    def load_state_dict(self, state: dict) -> None:
        self.module.load_state_dict(state["module"])
        self.step = int(state["step"])


# ---------------------------------------------------------------- the measurements of GVA
def mean_abs_jump(values) -> float:
    """mean_t |v_t - v_{t-1}| over consecutive checkpoints (the paper's oscillation)."""
    v = np.asarray(values, dtype=float)
    return float(np.abs(np.diff(v)).mean()) if v.size > 1 else 0.0


def mean_rel_jump(values) -> float:
    """mean_t |v_t - v_{t-1}| / |v_{t-1}|: a scale-free jump, to compare reward with loss."""
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return 0.0
    return float((np.abs(np.diff(v)) / np.maximum(np.abs(v[:-1]), 1e-12)).mean())


def plateaued(reward, block: int, tol: float) -> bool:
    """The plateau rule: the reward has stopped rising when each of the last two blocks of
    ``block`` checkpoints has a mean at most ``tol`` above its predecessor's (three flat
    blocks in a row; a single flat block is too easily a dip in a rising curve)."""
    r = np.asarray(reward, dtype=float)
    if block < 1 or r.size < 3 * block:
        return False
    means = [r[r.size - k * block :][:block].mean() for k in (3, 2, 1)]
    return bool(means[1] - means[0] < tol and means[2] - means[1] < tol)


def late_std(values) -> float:
    """Standard deviation over the second half of training."""
    v = np.asarray(values, dtype=float)
    return float(v[len(v) // 2 :].std()) if v.size else math.nan


def curve_summary(reward, loss, excess=None, train_loss=None, start: int | None = None
                  ) -> dict[str, float]:  # fmt: skip
    """The paper's GVA numbers for one run's checkpoints from ``start`` on (the measured
    window; default the second half): reward J_t and BC validation loss L_t, and, given, the
    BC loss above the label-noise floor (E_t = L_t - floor in expectation) and the BC
    training loss (the loss the paper plots, Fig. 1)."""
    start = len(reward) // 2 if start is None else start
    extra = {}
    if excess is not None:
        extra = {"excess_final": float(excess[-1]), "rel_dexcess": mean_rel_jump(excess[start:])}
    if train_loss is not None:
        extra |= {"train_loss": float(np.mean(train_loss[start:])),
                  "rel_dtrain": mean_rel_jump(train_loss[start:])}  # fmt: skip
    return extra | {
        "J_mean": float(np.mean(reward[start:])),
        "J_final": float(reward[-1]),
        "dJ": mean_abs_jump(reward[start:]),
        "rel_dJ": mean_rel_jump(reward[start:]),
        "J_std": float(np.std(reward[start:])),
        "loss_final": float(loss[-1]),
        "rel_dloss": mean_rel_jump(loss[start:]),
    }

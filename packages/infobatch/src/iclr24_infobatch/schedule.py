"""Step-based learning-rate schedules driven by epoch progress.

While InfoBatch prunes, epochs have fewer steps than a full epoch, so a OneCycle or cosine
schedule built for ``epochs * steps_per_full_epoch`` steps would not reach its end. The
official example rebuilds ``OneCycleLR`` every epoch with ``steps_per_epoch=len(loader)``
and ``last_epoch=epoch * len(loader) - 1``; :class:`EpochProgressScheduler` does the same
in one object: step i of the n steps of epoch e is mapped to the virtual step

    v = e * S + floor(i * S / n)        (S = steps of a full epoch)

of a scheduler built for ``num_epochs * S`` steps, so the schedule position tracks the
fraction of the epochs done, whatever each epoch's length.

Works with schedulers whose ``get_lr`` is a closed form of ``last_epoch``: ``OneCycleLR``
(including its momentum cycling) and ``LambdaLR`` (use :func:`cosine_lambda` for cosine).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import torch

_CLOSED_FORM = (torch.optim.lr_scheduler.OneCycleLR, torch.optim.lr_scheduler.LambdaLR)


def cosine_lambda(total_steps: int, final_factor: float = 0.0) -> Callable[[int], float]:
    """Multiplier of cosine annealing from 1 to ``final_factor`` over ``total_steps``
    (for ``LambdaLR``; equal to ``CosineAnnealingLR(T_max=total_steps, eta_min=final_factor
    * base_lr)``)."""

    def factor(step: int) -> float:
        t = min(step, total_steps) / total_steps
        return final_factor + (1.0 - final_factor) * 0.5 * (1.0 + math.cos(math.pi * t))

    return factor


class EpochProgressScheduler:
    """Drive ``scheduler`` (built for ``num_epochs * steps_per_full_epoch`` steps) by epoch
    progress.

    >>> sched = EpochProgressScheduler(OneCycleLR(opt, 0.1, total_steps=E * S), S)
    >>> for epoch in range(E):
    ...     sched.begin_epoch(epoch, len(loader))   # len(loader) shrinks while pruning
    ...     for batch in loader:
    ...         ...; opt.step(); sched.step()
    """

    def __init__(self, scheduler: torch.optim.lr_scheduler.LRScheduler, steps_per_full_epoch: int):
        if not isinstance(scheduler, _CLOSED_FORM):
            raise TypeError(
                f"{type(scheduler).__name__} is not a closed-form schedule; use OneCycleLR or "
                "LambdaLR (cosine_lambda for cosine annealing)"
            )
        if steps_per_full_epoch < 1:
            raise ValueError("steps_per_full_epoch must be >= 1")
        self.scheduler = scheduler
        self.steps_per_full_epoch = int(steps_per_full_epoch)
        self.epoch, self.steps_in_epoch, self.step_in_epoch = 0, 1, 0

    def virtual_step(self) -> int:
        s = self.steps_per_full_epoch
        return self.epoch * s + (self.step_in_epoch * s) // self.steps_in_epoch

    def begin_epoch(self, epoch: int, steps_in_epoch: int) -> None:
        """Start ``epoch``, which will have ``steps_in_epoch`` optimizer steps; sets the LR of
        its first step."""
        self.epoch, self.steps_in_epoch, self.step_in_epoch = (
            int(epoch),
            max(1, int(steps_in_epoch)),
            0,
        )
        self._apply()

    def step(self) -> None:
        """After an optimizer step: move to the next step of the epoch."""
        self.step_in_epoch += 1
        self._apply()

    def _apply(self) -> None:
        total = getattr(self.scheduler, "total_steps", None)
        v = self.virtual_step()
        if total is not None:  # OneCycleLR refuses to go past its last step
            v = min(v, total)
        self.scheduler.last_epoch = v - 1
        with warnings.catch_warnings():  # begin_epoch(0) runs before the first optimizer.step()
            warnings.filterwarnings("ignore", message="Detected call of `lr_scheduler.step")
            self.scheduler.step()  # last_epoch -> v, lr (and momentum) from the closed form

    def get_last_lr(self) -> list[float]:
        return self.scheduler.get_last_lr()

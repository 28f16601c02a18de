"""Monotonicity audit: does a trained model really respect its monotone features?

Two empirical checks on a set of points ``X`` (the guarantee of SMNN is structural; the audit
is what a user runs to verify any model, SMNN or not):

* pairwise: raise one monotone feature by a step (several step sizes, relative to that
  feature's range in ``X``), keep the others; the prediction must not move against the
  declared direction by more than ``tol``;
* gradient (torch models only): the sign of ``d prediction / d x_j`` from autograd must agree
  with the declared direction, up to ``-tol``.

The violation rate is the fraction of all those checks that failed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from .smnn import normalize_monotone


@dataclass
class AuditResult:
    """What :func:`monotonicity_audit` measured."""

    violation_rate: float
    """Failed checks / all checks (pairwise and gradient together)."""
    pairwise_violation_rate: float
    """Failed pairwise checks / pairwise checks."""
    gradient_violation_rate: float | None
    """Failed gradient-sign checks / gradient checks (None when the model has no autograd)."""
    n_checks: int
    """Number of checks made (pairwise + gradient)."""
    worst_violation: float
    """Largest move against the declared direction seen in a pairwise check (0 if none)."""
    per_feature: dict[int, float] = field(default_factory=dict)
    """Violation rate of each monotone feature (pairwise and gradient together)."""

    @property
    def ok(self) -> bool:
        return self.violation_rate == 0.0


def _as_callable(model, dtype: torch.dtype) -> tuple[Callable[[torch.Tensor], torch.Tensor], bool]:
    """A function (n, d) tensor -> (n,) tensor, and whether autograd can go through it."""
    if hasattr(model, "as_module") and callable(model.as_module):  # our sklearn estimators
        model = model.as_module()
    if isinstance(model, nn.Module):
        # a float64 copy, in eval mode: the audit should not confuse float32 rounding with a
        # violation, nor change the user's model
        net = copy.deepcopy(model).to(dtype).eval()
        dev = next((p.device for p in net.parameters()), torch.device("cpu"))

        def f(x: torch.Tensor) -> torch.Tensor:
            return net(x.to(dev)).reshape(x.shape[0], -1)[:, -1].to(x.device)

        return f, True
    predict = getattr(model, "predict", None) or model
    if not callable(predict):
        raise TypeError("model must be a torch module, an estimator with predict, or a callable")

    def g(x: torch.Tensor) -> torch.Tensor:
        out = np.asarray(predict(x.detach().cpu().numpy()), dtype=np.float64)
        return torch.as_tensor(out.reshape(x.shape[0], -1)[:, -1], dtype=x.dtype)

    return g, False


def monotonicity_audit(
    model,
    X,
    monotone: Mapping[int, int] | Sequence[int] | None = None,
    *,
    steps: Sequence[float] = (0.01, 0.1, 0.5),
    tol: float = 1e-6,
    gradient: bool = True,
    dtype: torch.dtype = torch.float64,
    chunk: int = 65536,
) -> AuditResult:
    """Audit ``model`` on the points ``X`` (n, d) for the declared ``monotone`` directions.

    ``model``: a torch module (batch, d) -> (batch,) or (batch, 1); an SMNN estimator; or any
    object with ``predict`` (pairwise checks only). ``monotone`` defaults to the model's own
    ``monotone`` / ``monotone_`` attribute. ``steps`` are fractions of each feature's range.
    A check fails when the prediction moves against the direction by more than
    ``tol * max(1, |prediction|)`` (pairwise), or when ``direction * gradient < -tol``.
    """
    X = torch.as_tensor(np.asarray(X, dtype=np.float64), dtype=dtype)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty (n, d) array, got shape {tuple(X.shape)}")
    n, d = X.shape
    if monotone is None:
        monotone = getattr(model, "monotone_", None) or getattr(model, "monotone", None)
        if monotone is None:
            raise ValueError("pass monotone={index: +1 | -1}: the model does not declare it")
    mono = normalize_monotone(monotone, d)
    f, has_grad = _as_callable(model, dtype)
    span = (X.max(0).values - X.min(0).values).clamp_min(1e-12)
    span = torch.where(span > 1e-12, span, torch.ones_like(span))

    fails: dict[int, int] = {}
    counts: dict[int, int] = {}
    n_pair_fail = n_pair = 0
    worst = 0.0
    with torch.no_grad():
        base = torch.cat([f(X[i : i + chunk]) for i in range(0, n, chunk)])  # (n,)
        for j, sign in mono.items():
            Xs = X.repeat(len(steps), 1)  # (k * n, d)
            delta = torch.tensor(steps, dtype=dtype).repeat_interleave(n) * span[j]
            Xs[:, j] += delta  # raise feature j, keep the others
            up = torch.cat([f(Xs[i : i + chunk]) for i in range(0, len(Xs), chunk)])
            change = sign * (up - base.repeat(len(steps)))  # >= 0 when monotone
            bad = change < -tol * base.abs().repeat(len(steps)).clamp_min(1.0)
            fails[j] = int(bad.sum())
            counts[j] = len(Xs)
            n_pair_fail += fails[j]
            n_pair += len(Xs)
            worst = max(worst, float((-change).clamp_min(0).max()))

    n_grad_fail = n_grad = 0
    if gradient and has_grad:
        for i in range(0, n, chunk):
            x = X[i : i + chunk].clone().requires_grad_(True)
            (grad,) = torch.autograd.grad(f(x).sum(), x)  # rows are independent: d y_i / d x_i
            for j, sign in mono.items():
                bad = int((sign * grad[:, j] < -tol).sum())
                fails[j] += bad
                counts[j] += len(x)
                n_grad_fail += bad
                n_grad += len(x)

    total = n_pair + n_grad
    return AuditResult(
        violation_rate=(n_pair_fail + n_grad_fail) / total,
        pairwise_violation_rate=n_pair_fail / n_pair,
        gradient_violation_rate=(n_grad_fail / n_grad) if n_grad else None,
        n_checks=total,
        worst_violation=worst,
        per_feature={j: fails[j] / counts[j] for j in mono},
    )

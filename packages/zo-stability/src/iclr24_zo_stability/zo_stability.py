"""General Stability Analysis for Zeroth-Order Optimization Algorithms (Liu, Zhang, Gu & Chen,
ICLR 2024). https://openreview.net/forum?id=AfhNyr73Ma

The zeroth-order (ZO) gradient estimates the paper analyses and the three optimisers built on
them. An estimate sees the loss ``f`` only through values at query points; every estimator
here is linear in those values and evaluates all its query points in *one* batched call
``f(P)`` with ``P: (..., Q, d) -> (..., Q)`` (leading dimensions are independent runs).

With ``K`` directions ``u_1..u_K`` and smoothing radius ``mu`` (e_i: the i-th basis vector):

    2-point Gaussian  g = 1/K sum_k (f(w + mu u_k) - f(w)) / mu * u_k,        u_k ~ N(0, I_d)
    2-point sphere    g = d/K sum_k (f(w + mu u_k) - f(w)) / mu * u_k,        u_k ~ Unif(S^{d-1})
    1-point Gaussian  g = 1/K sum_k  f(w + mu u_k) / mu * u_k                 (u_k as above)
    1-point sphere    g = d/K sum_k  f(w + mu u_k) / mu * u_k
    coordinate        g = sum_i (f(w + mu e_i) - f(w - mu e_i)) / (2 mu) * e_i

Queries per estimate: K + 1, K + 1, K, K and 2d. The Gaussian estimates are unbiased for the
gradient of the Gaussian smoothing f_mu(w) = E f(w + mu u), u ~ N(0, I); the sphere estimates
for the ball smoothing E f(w + mu v), v ~ Unif(B^d); coordinate i is exactly the i-th partial
derivative of the segment average (1 / 2mu) int_{-mu}^{mu} f(w + s e_i) ds, so the coordinate
estimate is exact on quadratics and within (beta mu / 2) sqrt(d) of the gradient of a
beta-smooth f (O(mu^2) when f has a bounded third derivative).

The optimisers (paper Section 3, the ZO versions of SGD, GD and SVRG):

    ZO-SGD   w <- w - lr * g(f_i; w)                      f_i: one example (or a mini-batch)
    ZO-GD    w <- w - lr * g(F_S; w)                      F_S: the empirical risk
    ZO-SVRG  w <- w - lr * (g(f_i; w) - g(f_i; w~) + g(F_S; w~))   w~: the epoch's snapshot;
             both g(f_i, .) terms use the same directions, so their noise cancels near w~.

g(F_S; w) is estimated per example, (1/n) sum_i g(f_i; w, U_i) with independent directions
U_i (``Estimator.per_example``): the same n (Q) example evaluations as one estimate of F_S
itself, with n times less direction noise; without it a ZO-SVRG snapshot with K = 1 is a
rank-one guess that biases a whole epoch (our runs diverged that way).

``ZOSGD``, ``ZOGD`` and ``ZOSVRG`` drive any torch model's parameters through loss values
only (``model_objective`` builds the batched objective with ``torch.func``), with a query
budget. The batched, coupled runs of the stability experiment use ``Estimator`` directly
(``stability.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch

KINDS = ("coord", "gauss2", "sphere2", "gauss1", "sphere1")
"""The estimators: coordinate, 2-point Gaussian / sphere, 1-point Gaussian / sphere."""

Objective = Callable[[torch.Tensor], torch.Tensor]
"""A batched loss: parameter points ``(..., Q, d)`` -> values ``(..., Q)``."""


class QueryBudgetExhausted(RuntimeError):
    """The next step would spend more loss queries than the optimiser's budget allows."""


@dataclass(frozen=True)
class Estimate:
    """One gradient estimate: ``grad (..., d)``, the loss queries it spent (per run) and, for the
    2-point estimates, the loss at ``w`` itself (``value``; None for the others)."""

    grad: torch.Tensor
    queries: int
    value: torch.Tensor | None = None


@dataclass(frozen=True)
class Estimator:
    """A zeroth-order gradient estimate (see the module docstring for the formulas)."""

    kind: str = "gauss2"
    """coord, gauss2, sphere2, gauss1 or sphere1."""
    mu: float = 1e-3
    """Smoothing radius (the issue's default; float32 cancels at this mu: use float64)."""
    K: int = 1
    """Random directions per estimate (ignored by coord, which always spends 2d queries)."""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"estimator kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if not self.mu > 0:
            raise ValueError(f"mu must be > 0, got {self.mu}")
        if self.K < 1:
            raise ValueError(f"K must be >= 1, got {self.K}")

    @property
    def random(self) -> bool:
        return self.kind != "coord"

    def queries(self, d: int) -> int:
        """Loss evaluations per estimate in dimension d."""
        return 2 * d if self.kind == "coord" else self.K + (self.kind.endswith("2"))

    def draw(self, shape: tuple[int, ...], d: int, generator: torch.Generator | None = None,
             dtype=torch.float64, device=None) -> torch.Tensor | None:  # fmt: skip
        """Directions ``(*shape, K, d)`` (None for coord): standard normal, or uniform on the
        unit sphere for the sphere kinds."""
        if not self.random:
            return None
        where = generator.device if generator is not None else device
        u = torch.randn(*shape, self.K, d, generator=generator, dtype=dtype, device=where)
        u = u.to(device) if device is not None else u  # a CPU generator serves any device
        if self.kind.startswith("sphere"):
            u = u / u.norm(dim=-1, keepdim=True)
        return u

    def points(self, w: torch.Tensor, U: torch.Tensor | None) -> torch.Tensor:
        """Query points ``(..., Q, d)`` for ``w (..., d)`` and directions ``U (..., K, d)``."""
        if self.kind == "coord":
            eye = torch.eye(w.shape[-1], dtype=w.dtype, device=w.device)
            return w.unsqueeze(-2) + self.mu * torch.cat([eye, -eye])  # (..., 2d, d)
        shifted = w.unsqueeze(-2) + self.mu * U  # (..., K, d)
        if self.kind.endswith("2"):
            return torch.cat([w.unsqueeze(-2), shifted], dim=-2)  # (..., K + 1, d)
        return shifted

    def combine(self, values: torch.Tensor, U: torch.Tensor | None) -> torch.Tensor:
        """The estimate ``(..., d)`` from the loss ``values (..., Q)`` at ``points(w, U)``."""
        if self.kind == "coord":
            d = values.shape[-1] // 2
            return (values[..., :d] - values[..., d:]) / (2 * self.mu)
        if self.kind.endswith("2"):
            coef = (values[..., 1:] - values[..., :1]) / self.mu  # (..., K)
        else:
            coef = values / self.mu
        scale = U.shape[-1] if self.kind.startswith("sphere") else 1.0
        return scale / self.K * torch.einsum("...k,...kd->...d", coef, U)

    def __call__(self, f: Objective, w: torch.Tensor, U: torch.Tensor | None = None,
                 generator: torch.Generator | None = None) -> Estimate:  # fmt: skip
        """Estimate the gradient of ``f`` at ``w (..., d)`` with one batched call of ``f``;
        directions ``U`` are drawn from ``generator`` when not given."""
        if self.random and U is None:
            U = self.draw(w.shape[:-1], w.shape[-1], generator, w.dtype, w.device)
        values = f(self.points(w, U))
        value = values[..., 0] if self.kind.endswith("2") else None
        return Estimate(self.combine(values, U), self.queries(w.shape[-1]), value)

    def per_example(self, f: Objective, w: torch.Tensor, n: int, U: torch.Tensor | None = None,
                    generator: torch.Generator | None = None) -> Estimate:  # fmt: skip
        """The average over n examples of each example's own estimate, with independent
        directions per example: (1/n) sum_i g(f_i; w, U_i). ``f`` maps points
        ``(..., n, Q, d)`` to ``(..., n, Q)`` (row i: example i's loss); ``U``: ``(..., n, K, d)``.
        Same example evaluations as one estimate of the mean loss, n times less direction
        noise (for coord both are the same estimate). ``queries``: example losses spent."""
        wn = w.unsqueeze(-2).expand(*w.shape[:-1], n, w.shape[-1])
        est = self(f, wn, U, generator)
        value = None if est.value is None else est.value.mean(-1)
        return Estimate(est.grad.mean(-2), n * est.queries, value)

    def pair(self, f: Objective, w: torch.Tensor, w_snap: torch.Tensor,
             U: torch.Tensor | None = None,
             generator: torch.Generator | None = None) -> tuple[Estimate, Estimate]:  # fmt: skip
        """Estimates at ``w`` and at the snapshot ``w_snap`` with the *same* directions, in one
        batched call (the two stochastic terms of ZO-SVRG)."""
        if self.random and U is None:
            U = self.draw(w.shape[:-1], w.shape[-1], generator, w.dtype, w.device)
        P = torch.cat([self.points(w, U), self.points(w_snap, U)], dim=-2)
        values = f(P)
        q = values.shape[-1] // 2
        a, b = values[..., :q], values[..., q:]
        n = self.queries(w.shape[-1])
        value = a[..., 0] if self.kind.endswith("2") else None
        return Estimate(self.combine(a, U), n, value), Estimate(self.combine(b, U), n)


# ------------------------------------------------------------------ torch models as black boxes
def model_objective(model: torch.nn.Module, loss_fn: Callable[..., torch.Tensor],
                    inputs: torch.Tensor, targets: torch.Tensor, per_example: bool = False,
                    chunk: int | None = None) -> Objective:  # fmt: skip
    """The batched loss of a model's flat parameter vector, through ``torch.func`` (no
    autograd, no hooks: the model is a black box that is only evaluated).

    ``per_example=False``: ``(Q, d) -> (Q,)``, value q = ``loss_fn(model(inputs), targets)``
    with the parameters set to row q. ``per_example=True``: ``(n, Q, d) -> (n, Q)``, row i
    evaluates example i alone (``loss_fn(model(inputs[i:i+1]), targets[i:i+1])``) at its own
    points, for ``Estimator.per_example``. ``chunk`` bounds the points evaluated at once."""
    from torch.func import functional_call, vmap

    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    names, shapes = [n for n, _ in named], [p.shape for _, p in named]
    sizes = [math.prod(s) for s in shapes]
    buffers = dict(model.named_buffers())

    def one(theta, x, t):
        params = {n: v.view(s) for n, v, s in zip(names, theta.split(sizes), shapes)}
        return loss_fn(functional_call(model, (params, buffers), (x,)), t)

    over_points = vmap(one, in_dims=(0, None, None), chunk_size=chunk)
    if per_example:
        rows = vmap(lambda P, x, t: over_points(P, x[None], t[None]))

        def objective(P: torch.Tensor) -> torch.Tensor:
            with torch.no_grad():
                return rows(P, inputs, targets)

        return objective

    def objective(P: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return over_points(P.reshape(-1, P.shape[-1]), inputs, targets).reshape(P.shape[:-1])

    return objective


class ZOSGD:
    """Zeroth-order SGD on torch parameters: ``w <- w - lr * g(objective; w)``.

    ``params``: the tensors to optimise (e.g. ``model.parameters()``); ``objective``: what
    ``step`` is given, a batched loss of the flat parameter vector (``model_objective``), on
    one mini-batch. ``query_budget`` caps the loss evaluations over the optimiser's life:
    a step that would pass it raises ``QueryBudgetExhausted`` and changes nothing.
    """

    def __init__(self, params: Iterable[torch.Tensor], lr: float, estimator: Estimator | None = None,
                 query_budget: int | None = None,
                 generator: torch.Generator | None = None):  # fmt: skip
        self.params = [p for p in params if p.requires_grad]
        if not self.params:
            raise ValueError("no parameters to optimise")
        if not lr > 0:
            raise ValueError(f"lr must be > 0, got {lr}")
        if query_budget is not None and query_budget < 1:
            raise ValueError(f"query_budget must be >= 1, got {query_budget}")
        self.lr, self.estimator = lr, estimator or Estimator()
        self.query_budget, self.generator = query_budget, generator
        self.queries = 0
        self.d = sum(p.numel() for p in self.params)

    @property
    def remaining(self) -> float:
        """Queries left in the budget (inf without one)."""
        return math.inf if self.query_budget is None else self.query_budget - self.queries

    def _spend(self, n: int) -> None:
        if n > self.remaining:
            raise QueryBudgetExhausted(
                f"a step needs {n} queries; {self.remaining} of {self.query_budget} are left"
            )
        self.queries += n

    def _vector(self) -> torch.Tensor:
        return torch.cat([p.detach().reshape(-1) for p in self.params])

    def _move(self, direction: torch.Tensor) -> None:
        with torch.no_grad():
            for p, g in zip(self.params, direction.split([p.numel() for p in self.params])):
                p.sub_(self.lr * g.view_as(p))

    def step(self, objective: Objective) -> Estimate:
        """One update from one gradient estimate of ``objective`` at the current parameters."""
        self._spend(self.estimator.queries(self.d))
        est = self.estimator(objective, self._vector(), generator=self.generator)
        self._move(est.grad)
        return est


class ZOGD(ZOSGD):
    """Zeroth-order gradient descent, the paper's ZO-GD: every step estimates the gradient of
    the full empirical risk F_S. With ``examples=n`` the objective is per-example
    (``model_objective(..., per_example=True)``) and the estimate is (1/n) sum_i g(f_i; w)
    with independent directions per example (what the experiment runs); without it, one
    estimate of the full-batch objective."""

    def step(self, objective: Objective, examples: int | None = None) -> Estimate:
        if examples is None:
            return super().step(objective)
        self._spend(examples * self.estimator.queries(self.d))
        est = self.estimator.per_example(objective, self._vector(), examples,
                                         generator=self.generator)  # fmt: skip
        self._move(est.grad)
        return est


class ZOSVRG(ZOSGD):
    """Zeroth-order SVRG (paper Section 3; the ZO-SVRG of Liu et al., NeurIPS 2018):
    ``snapshot(full_objective)`` stores w~ and g~ = g(F_S; w~) at the start of each epoch
    (per example with ``examples=n``, as ``ZOGD.step``); ``step(objective)`` moves along
    g(f_i; w) - g(f_i; w~) + g~, the two f_i terms with the same directions (one batched call
    of 2Q points)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.w_snap: torch.Tensor | None = None
        self.g_snap: torch.Tensor | None = None

    def snapshot(self, full_objective: Objective, examples: int | None = None) -> Estimate:
        n = 1 if examples is None else examples
        self._spend(n * self.estimator.queries(self.d))
        self.w_snap = self._vector()
        if examples is None:
            est = self.estimator(full_objective, self.w_snap, generator=self.generator)
        else:
            est = self.estimator.per_example(full_objective, self.w_snap, examples,
                                             generator=self.generator)  # fmt: skip
        self.g_snap = est.grad
        return est

    def step(self, objective: Objective) -> Estimate:
        if self.w_snap is None:
            raise RuntimeError("ZOSVRG.step before the first snapshot(full_objective)")
        self._spend(2 * self.estimator.queries(self.d))
        at_w, at_snap = self.estimator.pair(
            objective, self._vector(), self.w_snap, generator=self.generator
        )
        v = at_w.grad - at_snap.grad + self.g_snap
        self._move(v)
        return Estimate(v, 2 * at_w.queries, at_w.value)

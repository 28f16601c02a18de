"""The coupled stability harness: an algorithm on S and on its neighbour S' with the same
randomness (same example indices, same directions, same start), in float64.

P coupled pairs run as one batch of 2P runs (rows 0..P-1 on S, rows P..2P-1 on S'), so every
step is one batched loss call for all runs and all query points. Pair j draws its indices
and directions from its own generators (seeded by seed j, the algorithm and the estimator),
so its trajectory does not depend on which other pairs share the batch.

Recorded: delta_t = ||w_t - w'_t|| for every step t, the training loss of the S-run at every
step, and the parameters at a few checkpoints (for the constants L, beta, |f| the bounds need).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import torch

from .problems import Problem, hessian_norms, hessian_spectra, per_example_grads
from .zo_stability import Estimator

ALGORITHMS = ("sgd", "gd", "svrg")


def generator(seed: int, *tags) -> torch.Generator:
    """A torch generator for (seed, tags), stable across processes and Python versions."""
    key = zlib.crc32(repr((seed, *tags)).encode())
    return torch.Generator().manual_seed(key)


@dataclass
class Coupled:
    """P coupled trajectories."""

    delta: np.ndarray
    """(P, T + 1): ||w_t - w'_t||, t = 0..T."""
    train_loss: np.ndarray
    """(P, T + 1): F_S(w_t) of the run on S."""
    test_loss: np.ndarray | None
    """(P, T + 1): the test loss of the run on S (when test data were given), for the
    generalisation gap at any step (the equal-training-loss comparison)."""
    checkpoints: list[int]
    W: torch.Tensor
    """(C, 2P, d): parameters of every run at the checkpoints."""
    W_final: torch.Tensor
    """(2P, d)"""
    queries: int
    """Loss queries per run: evaluations of one example's loss (a full-batch estimate at Q
    points costs n Q)."""


class _Directions:
    """Each pair's own stream of directions (seed, algorithm, estimator), drawn step by step
    and shared by the pair's two runs."""

    def __init__(self, seeds, estimator: Estimator, algorithm: str, d: int, device=None):
        self.device = device
        self.gens = [generator(s, "directions", algorithm, estimator.kind, estimator.K)
                     for s in seeds]  # fmt: skip
        self.estimator, self.d = estimator, d

    def __call__(self, *shape: int) -> torch.Tensor | None:
        if not self.estimator.random:
            return None
        U = torch.stack([self.estimator.draw(shape, self.d, g) for g in self.gens])
        return torch.cat([U, U]).to(self.device)  # (2P, *shape, K, d)


def example_indices(seed: int, steps: int, n: int) -> torch.Tensor:
    """SGD / SVRG example indices (steps,), from the seed alone: every estimator and
    algorithm of a seed visits the examples in the same order."""
    return torch.randint(n, (steps,), generator=generator(seed, "indices"))


def run_coupled(problem: Problem, algorithm: str, estimator: Estimator, X: torch.Tensor,
                y: torch.Tensor, w0: torch.Tensor, lrs: torch.Tensor, seeds: list[int],
                epoch: int = 0, n_checkpoints: int = 12, X_test: torch.Tensor | None = None,
                y_test: torch.Tensor | None = None) -> Coupled:  # fmt: skip
    """Run ``algorithm`` (sgd, gd or svrg) on 2P datasets ``X (2P, n, p)``, ``y (2P, n)``
    (rows j and P + j: S and S' of ``seeds[j]``) from ``w0 (2P, d)`` with step sizes
    ``lrs (T,)``; both runs of a pair share the example indices and every direction.
    ``epoch``: SVRG's inner steps per snapshot (default n). ``X_test (P, m, p)``, ``y_test
    (P, m)``: when given, the S-runs' test loss is recorded at every step."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}")
    R, n, _ = X.shape
    P, T, d = R // 2, len(lrs), w0.shape[-1]
    if len(seeds) != P:
        raise ValueError(f"{R} runs need {P} seeds, got {len(seeds)}")
    epoch = epoch or n
    device = X.device
    idx = torch.stack([example_indices(s, T, n) for s in seeds] * 2).to(device)  # (2P, T)
    draw = _Directions(seeds, estimator, algorithm, d, device)
    rows = torch.arange(R, device=device)
    q = estimator.queries(d)
    X_rows, y_rows = X.unsqueeze(-2), y.unsqueeze(-1)  # example i alone: (2P, n, 1, p), (2P, n, 1)

    def losses(points, Xb, yb):
        """The S-runs and the S'-runs in two calls of identical shape on fresh (aligned)
        copies: one batched call would put the runs of a pair at different places of one
        tensor, where vectorised and scalar tails of transcendental kernels (and BLAS on
        differently aligned rows) round differently; this way a pair stays bit-identical
        until its data differ."""
        half = lambda a, s: a[s].clone()  # noqa: E731
        S, S2 = slice(None, P), slice(P, None)
        return torch.cat([problem.losses(half(points, S), half(Xb, S), half(yb, S)),
                          problem.losses(half(points, S2), half(Xb, S2), half(yb, S2))])  # fmt: skip

    def full(W) -> torch.Tensor:  # g(F_S; W) = mean_i g(f_i; W, U_i) -> (2P, d)
        if not estimator.random:  # coord: the per-example mean is the full-batch estimate
            return estimator(lambda P_: losses(P_, X, y).mean(-1), W).grad
        f = lambda P_: losses(P_, X_rows, y_rows).squeeze(-1)  # noqa: E731
        return estimator.per_example(f, W, n, draw(n)).grad

    checkpoints = sorted({int(t) for t in np.linspace(0, T, n_checkpoints)})
    W = w0.clone()
    delta = torch.zeros(P, T + 1, dtype=W.dtype, device=device)  # stays on the device
    train = torch.zeros(P, T + 1, dtype=W.dtype, device=device)
    test = None if X_test is None else torch.zeros(P, T + 1, dtype=W.dtype, device=device)
    snaps, queries = [], 0
    w_snap = g_snap = None

    def record(t):
        delta[:, t] = (W[:P] - W[P:]).norm(dim=-1)
        train[:, t] = problem.mean_loss(W[:P], X[:P], y[:P])
        if test is not None:
            test[:, t] = problem.mean_loss(W[:P], X_test, y_test)
        if t in checkpoints:
            snaps.append(W.clone())

    record(0)
    for t in range(T):
        if algorithm == "gd":
            step, queries = full(W), queries + n * q
        else:
            xb, yb = X[rows, idx[:, t]].unsqueeze(-2), y[rows, idx[:, t]].unsqueeze(-1)

            def one(points, xb=xb, yb=yb):  # f_i at points -> (2P, Q)
                return losses(points, xb, yb).squeeze(-1)

            if algorithm == "sgd":
                step, queries = estimator(one, W, draw()).grad, queries + q
            else:
                if t % epoch == 0:  # snapshot: w~ and g(F_S; w~)
                    w_snap, g_snap, queries = W.clone(), full(W), queries + n * q
                at_w, at_snap = estimator.pair(one, W, w_snap, draw())
                step, queries = at_w.grad - at_snap.grad + g_snap, queries + 2 * q
        W = W - lrs[t] * step
        record(t + 1)
    return Coupled(delta.cpu().numpy(), train.cpu().numpy(),
                   None if test is None else test.cpu().numpy(), checkpoints, torch.stack(snaps),
                   W, queries)  # fmt: skip


def constants(problem: Problem, coupled: Coupled, X: torch.Tensor, y: torch.Tensor,
              X_test: torch.Tensor, y_test: torch.Tensor, hessian_iters: int = 20,
              hessian_checkpoints: int = 4, seed: int = 0,
              exact_hessian: bool = False) -> dict[str, np.ndarray]:  # fmt: skip
    """Per pair, over the checkpoints of both runs: L = max ||grad f(w; z)|| and
    F = max |f(w; z)| over the training examples (S, resp. S') and the test set (where the
    bound is applied); beta = sup ||Hessian f_i|| over the training examples (closed form for
    the linear models, exact over every w; power iteration at a few checkpoints for the MLP,
    a lower estimate). ``beta_upper``: the linear models' beta; for the MLP, with
    ``exact_hessian``, the largest Frobenius norm of the exact per-example Hessians at those
    checkpoints (an upper estimate of their spectral norms, which are ``beta_exact``; the
    path between checkpoints is not sampled), else NaN."""
    P = X.shape[0] // 2
    L, Fmax = np.zeros(P), np.zeros(P)
    Xa, ya = torch.cat([X, X_test], dim=1), torch.cat([y, y_test], dim=1)
    pair_max = lambda v: torch.maximum(v[:P], v[P:]).amax(-1).cpu().numpy()  # noqa: E731
    for w in coupled.W:
        L = np.maximum(L, pair_max(per_example_grads(problem, w, Xa, ya).norm(dim=-1)))
        Fmax = np.maximum(Fmax, pair_max(problem.losses(w.unsqueeze(-2), Xa, ya).abs().squeeze(-2)))
    if problem.beta(X) is not None:
        beta = np.array([max(problem.beta(X[j]), problem.beta(X[P + j])) for j in range(P)])
        exact, upper = beta.copy(), beta.copy()
    else:
        beta, exact, upper = np.zeros(P), np.zeros(P), np.zeros(P)
        pick = np.unique(np.linspace(0, len(coupled.W) - 1, hessian_checkpoints).astype(int))
        for i in pick:
            h = hessian_norms(
                problem, coupled.W[i], X, y, hessian_iters, generator(seed, "hessian")
            )
            beta = np.maximum(beta, pair_max(h))
            if exact_hessian:
                spec, frob = hessian_spectra(problem, coupled.W[i], X, y)
                exact, upper = np.maximum(exact, pair_max(spec)), np.maximum(upper, pair_max(frob))
        if not exact_hessian:
            exact, upper = np.full(P, np.nan), np.full(P, np.nan)
    inf = lambda a: np.where(np.isnan(a), np.inf, a)  # noqa: E731  (an overflowed run)
    out = {"L": inf(L), "F": inf(Fmax), "beta": inf(beta)}
    if problem.beta(X) is not None or exact_hessian:
        out |= {"beta_exact": inf(exact), "beta_upper": inf(upper)}
    return out


def growth_slope(delta: np.ndarray, lrs: np.ndarray, lo: float, hi: float = 1.0,
                 boot: int = 200, points: int = 20) -> tuple[float, float]:  # fmt: skip
    """Log-log slope of the seeds' mean divergence against the cumulative step size sum_s lr_s,
    fitted at ``points`` log-spaced steps in [lo T, hi T]; with its bootstrap standard error
    over seeds (``boot`` resamples, fixed generator). delta: (P, T + 1), lrs: (T,)."""
    T = delta.shape[1] - 1
    steps = np.unique(np.geomspace(max(1, lo * T), hi * T, points).astype(int))
    x = np.log(np.concatenate([[0.0], np.cumsum(lrs)])[steps])

    def fit(rows):
        m = delta[rows][:, steps].mean(0)
        ok = m > 0
        return np.polyfit(x[ok], np.log(m[ok]), 1)[0] if ok.sum() >= 2 else np.nan

    P = delta.shape[0]
    rng = np.random.default_rng(0)
    draws = [fit(rng.integers(P, size=P)) for _ in range(boot)]
    return float(fit(np.arange(P))), float(np.nanstd(draws, ddof=1))

"""The reproduction: the grid {ZO-SGD, ZO-GD, ZO-SVRG} x {coordinate, 2-point Gaussian,
2-point sphere, 1-point Gaussian} x {least squares, ridge logistic, breast-cancer logistic,
tanh MLP on digits}, each cell a batch of coupled runs on S and S' (>= 10 seeds), its measured
divergence next to its bound. ``iclr24-zo-stability reproduce --help``.

Step sizes come from the bounds' conditions (``bounds.common_step``): one step per cell for
every estimator, the largest for which both the coordinate and the 2-point updates are
non-expansive (convex) or contractive (strongly convex) in expectation; in the non-convex
cell that step caps lr_t = min(cap, cap t_c / t), which meets the lr_t <= c / t condition
of the non-convex bound. beta for the step is the closed form for the linear models and twice
the power-iteration estimate at the start for the MLP. A 1-point estimate has no
non-expansive step: it runs at its own condition (``bounds.one_point_step``, sum_t lr_t e <= 1
with e = (L / mu) sqrt(d / K) from its variance, L twice the largest gradient norm at the
start), and for ZO-SGD / ZO-SVRG every 2-point estimate is run again at that step (cells
``<2-point>@<1-point>``), so the 2-point vs 1-point ordering compares equal steps (issue 50).
"""

from __future__ import annotations

import argparse
import functools
import time
from dataclasses import dataclass, replace

import numpy as np
import torch

from iclr24_common import ExperimentApp, Metrics, Paper, Report, RunContext, preset_option

from .bounds import Constants, common_step, divergence_bound, expansion, one_point_step, step_limit
from .claims import equal_loss, make_checks, make_claims, make_premises
from .data import Neighbours, breast_cancer, digits, make_least_squares, make_logistic
from .figures import plot_bounds, plot_divergence
from .problems import Problem, hessian_norms, per_example_grads
from .stability import ALGORITHMS, constants, generator, run_coupled
from .zo_stability import KINDS, Estimator

PAPER = Paper(
    title="General Stability Analysis for Zeroth-Order Optimization Algorithms",
    authors="Liu, Zhang, Gu & Chen",
    openreview="AfhNyr73Ma",
    code=None,  # no official code is public
)
PAPER_NEEDS_DATA = False  # the paper preset generates its data or reads scikit-learn's bundled sets

PROBLEMS = ("least-squares", "ridge-logistic", "breast-cancer", "mlp-digits")


@dataclass(frozen=True)
class Preset:
    """One scale of the grid; each default says where it comes from."""

    seeds: tuple[int, ...] = tuple(range(20))
    """Coupled pairs (S, S') per cell (issue: >= 10; 20 keep the 1-point cells' SE small)."""
    problems: tuple[str, ...] = PROBLEMS
    """Which losses (issue: least squares, ridge logistic, breast-cancer logistic, MLP)."""
    algorithms: tuple[str, ...] = ALGORITHMS
    """sgd, gd, svrg (paper Section 3)."""
    estimators: tuple[str, ...] = ("coord", "gauss2", "sphere2", "gauss1")
    """Estimator kinds (the paper's coordinate, 2-point and 1-point estimates)."""
    mu: float = 1e-3
    """Smoothing radius of *every* estimator (issue 38: one mu rule for all; the earlier issue's
    mu = 1e-3). A 1-point run that diverges at it is reported as diverged, never as stable."""
    K: int = 1
    """Random directions per estimate (issue: 2-point = 2 queries)."""
    n: int = 200
    """Training examples of every problem."""
    p: int = 20
    """Features of the generated problems."""
    n_test: int = 1000
    """Test examples (generated; digits: at most this many; breast cancer: the rest)."""
    noise: float = 0.5
    """Least-squares label noise."""
    ridge: float = 0.25
    """Ridge penalty of the strongly convex logistic loss (its alpha)."""
    hidden: int = 5
    """tanh units of the MLP."""
    components: int = 10
    """Principal components of the digits fed to the MLP."""
    epochs: float = 5.0
    """ZO-SGD / ZO-SVRG steps = epochs x n (SVRG: one snapshot per epoch of n steps)."""
    strong_epochs: float = 15.0
    """The same for the strongly convex problem: 'bounded' is only visible after several
    contraction times 1 / (lr alpha) (~570 steps here); 5 epochs were 1.8 of them."""
    gd_steps: int = 150
    """ZO-GD steps (each touches all n examples)."""
    decay_after: float = 1.0
    """Non-convex: lr_t = cap until t_c = decay_after x n, then cap t_c / t."""
    n_factors: tuple[float, ...] = (0.25, 0.5, 1.0)
    """The n-sweep (issue 38: slope in n): ZO-SGD on n x factor examples with the steps and
    step sizes of the full-n cell, for the rate estimators (at most n: breast cancer has 569)."""
    rate_estimators: tuple[str, ...] = ("coord", "gauss2")
    """Estimators whose growth rates in T and n are compared with the paper's orders."""
    blowup: float = 10.0
    """A run diverged if it is non-finite or its training loss ever exceeds blowup x the
    starting loss."""
    workers: int | None = 2
    """Processes for the units on the local executor (``--workers`` overrides; None: one per
    thread). 2 processes x 1 thread: the default took 68.5 s on this 2-core machine under the
    CPU lock, against 118.3 s for 1 process x 2 threads (2026-12-05; the 64 cells are small
    float64 batches that one thread keeps busy, so two processes nearly halve the time)."""

    def __post_init__(self):
        for name, allowed in (("problems", PROBLEMS), ("algorithms", ALGORITHMS),
                              ("estimators", KINDS)):  # fmt: skip
            values = getattr(self, name)
            bad = [v for v in values if v not in allowed]
            if not values or bad:
                raise ValueError(f"{name} must be a non-empty subset of {', '.join(allowed)}")
        if len(self.seeds) < 2:
            raise ValueError("need at least 2 seeds (margins are stated against their SE)")
        if min(self.n, self.p, self.n_test, self.hidden, self.components, self.K,
               self.gd_steps) < 1:  # fmt: skip
            raise ValueError("n, p, n_test, hidden, components, K and gd_steps must be >= 1")
        if self.workers is not None and self.workers < 1:
            raise ValueError("workers must be >= 1 (or None: one per thread)")
        if not (self.mu > 0 and self.ridge > 0 and self.blowup > 1):
            raise ValueError("mu and ridge must be > 0 and blowup > 1")
        if not self.n_factors or not all(0 < f <= 1 for f in self.n_factors):
            raise ValueError("n_factors: values in (0, 1] (two or more for the slope in n)")
        bad = [k for k in self.rate_estimators if k not in self.estimators]
        if bad:
            raise ValueError(f"rate_estimators must be among estimators, got {', '.join(bad)}")
        if min(self.epochs, self.strong_epochs) * self.n < 10 or self.decay_after <= 0:
            raise ValueError("epochs x n must be >= 10 steps and decay_after > 0")
        if self.n > 560:
            raise ValueError("n must be <= 560 (breast cancer has 569 examples)")
        if "mlp-digits" in self.problems and self.components > min(self.n_min, 64):
            # PCA fitted on the n training digits (8 x 8 = 64 pixels): sklearn would raise
            raise ValueError(
                "components must be <= n (x the smallest n_factor) and <= 64 (the digits' PCA)"
            )

    @property
    def n_min(self) -> int:
        return n_of(self, min(self.n_factors))


def n_of(preset: Preset, factor: float) -> int:
    return max(2, int(round(preset.n * factor)))


PRESETS = {
    "smoke": Preset(
        seeds=(0, 1, 2),
        n=40,
        p=6,
        n_test=200,
        hidden=3,
        components=5,
        epochs=2,
        strong_epochs=4,
        gd_steps=20,
        n_factors=(0.5, 1.0),  # the slope in n from two sizes: 8 sweep cells, not 16
    ),  # fmt: skip
    "default": Preset(),
    # larger d and n, more steps (the paper's own d, n and steps were not recoverable)
    "paper": Preset(
        n=500,
        p=100,
        n_test=5000,
        hidden=16,
        components=30,
        epochs=10,
        strong_epochs=30,
        gd_steps=500,
    ),  # fmt: skip
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    preset_option(parser, "--epochs", field="epochs", type=float, help="ZO-SGD/SVRG epochs")
    preset_option(parser, "--mu", field="mu", type=float, help="smoothing radius")


# ------------------------------------------------------------------ the cells
def problem_of(preset: Preset, name: str) -> Problem:
    return {
        "least-squares": Problem("least-squares"),
        "ridge-logistic": Problem("logistic", lam=preset.ridge),
        "breast-cancer": Problem("logistic"),
        "mlp-digits": Problem("mlp", hidden=preset.hidden),
    }[name]


def neighbours(preset: Preset, name: str, seed: int) -> Neighbours:
    if name == "least-squares":
        return make_least_squares(preset.n, preset.p, preset.n_test, preset.noise, seed)
    if name == "ridge-logistic":
        return make_logistic(preset.n, preset.p, preset.n_test, seed)
    if name == "breast-cancer":
        return breast_cancer(preset.n, seed)
    return digits(preset.n, preset.components, seed, preset.n_test)


def estimator_of(preset: Preset, kind: str) -> Estimator:
    return Estimator(kind, mu=preset.mu, K=preset.K)  # one mu for every estimator


def steps_of(preset: Preset, algorithm: str, problem: str) -> int:
    if algorithm == "gd":
        return preset.gd_steps
    epochs = preset.strong_epochs if problem == "ridge-logistic" else preset.epochs
    return int(round(epochs * preset.n))


@dataclass
class Batch:
    """Every seed's S (rows 0..P-1) and S' (rows P..2P-1), test sets and the start."""

    problem: Problem
    X: torch.Tensor
    y: torch.Tensor
    w0: torch.Tensor
    X_test: torch.Tensor
    y_test: torch.Tensor
    beta0: float
    """Smoothness used to choose the step sizes."""
    L0: float = 1.0
    """Twice the largest per-example gradient norm at the start: the L of the 1-point
    estimate's step condition (its runs barely move under it; check step-conditions holds the
    condition to the L measured over the region the runs visit)."""


@functools.lru_cache(maxsize=4)
def make_batch(preset: Preset, name: str, seeds: tuple[int, ...], device: str = "cpu") -> Batch:
    """(Cached: the twelve cells of a problem share it in a process, and an n-sweep cell its
    full-n and its smaller batch; nothing downstream modifies it.)"""
    problem = problem_of(preset, name)
    sets = [neighbours(preset, name, s) for s in seeds]
    swapped = [s.neighbour() for s in sets]
    X = torch.stack([s.X for s in sets] + [x for x, _ in swapped])
    y = torch.stack([s.y for s in sets] + [t for _, t in swapped])
    m = min(len(s.y_test) for s in sets)
    w0 = torch.stack([problem.init(sets[0].p, generator(s, "init")) for s in seeds] * 2)
    beta0 = problem.beta(X)
    if beta0 is None:  # MLP: twice the largest per-example curvature at the start
        beta0 = 2 * float(hessian_norms(problem, w0, X, y, 30, generator(0, "beta0")).max())
    # the 1-point condition's L: over the training and test examples (the bound's L covers
    # both), twice the largest gradient norm at the start
    X_test = torch.stack([s.X_test[:m] for s in sets] * 2)
    y_test = torch.stack([s.y_test[:m] for s in sets] * 2)
    L0 = 2 * float(per_example_grads(problem, w0, torch.cat([X, X_test], 1),
                                     torch.cat([y, y_test], 1)).norm(dim=-1).max())  # fmt: skip
    to = lambda t: t.to(device)  # noqa: E731
    return Batch(problem, to(X), to(y), to(w0), to(X_test), to(y_test), beta0, L0)


def split_kind(kind: str) -> tuple[str, str]:
    """A cell's estimator and the estimator whose step condition it runs at: "gauss2" ->
    (gauss2, gauss2); "gauss2@gauss1" -> (gauss2, gauss1), the 2-point estimate at the 1-point
    one's step (the 2-point vs 1-point ordering at equal step sizes)."""
    base, _, at = kind.partition("@")
    return base, at or base


def one_point(kind: str) -> bool:
    """The cell's own estimator is a 1-point one (not a 2-point one at a 1-point step)."""
    return split_kind(kind)[0].endswith("1")


def schedule(preset: Preset, batch: Batch, algorithm: str, problem: str,
             kind: str = "coord") -> torch.Tensor:  # fmt: skip
    """Step sizes (T,) from the bounds' conditions (module docstring); a cell at a 1-point
    estimator's step (``kind`` gauss1, or gauss2@gauss1) also meets that estimator's own
    condition (``one_point_step``: sum_t lr_t <= 1 / e)."""
    p = batch.problem
    c = Constants(L=1.0, beta=batch.beta0, alpha=p.alpha)
    ests = [estimator_of(preset, k) for k in preset.estimators if not k.endswith("1")]
    ests = ests or [estimator_of(preset, "coord")]
    d = p.dim(batch.X.shape[-1])
    cap = common_step(p.convexity, c, d, ests, algorithm, preset.n)
    T = steps_of(preset, algorithm, problem)
    lrs = torch.full((T,), cap, dtype=torch.float64)
    if p.convexity == "nonconvex":
        t_c = preset.decay_after * preset.n
        t = torch.arange(1, T + 1, dtype=torch.float64)
        lrs = torch.minimum(lrs, cap * t_c / t)
    step_kind = split_kind(kind)[1]
    if step_kind.endswith("1"):
        c1 = Constants(L=batch.L0, beta=batch.beta0, alpha=p.alpha)
        m = preset.n if algorithm == "gd" else 1
        lrs = torch.clamp(lrs, max=one_point_step(estimator_of(preset, step_kind), d, c1, T, m))
    return lrs.to(batch.X.device)


def measure_cell(preset: Preset, name: str, algorithm: str, kind: str, seeds,
                 device: str = "cpu") -> dict:  # fmt: skip
    """One cell: coupled runs for every seed, their divergence, losses, constants and bound."""
    t0 = time.perf_counter()
    batch = make_batch(preset, name, tuple(seeds), device)
    p, P, est = batch.problem, len(seeds), estimator_of(preset, split_kind(kind)[0])
    lrs = schedule(preset, batch, algorithm, name, kind)
    run = run_coupled(p, algorithm, est, batch.X, batch.y, batch.w0, lrs, list(seeds),
                      X_test=batch.X_test[:P], y_test=batch.y_test[:P])  # fmt: skip
    d, n = batch.w0.shape[-1], preset.n
    # the exact Hessians (an upper estimate of beta) where the rate-T claim reads beta: the
    # MLP's ZO-SGD cells of the rate estimators (a few seconds each; elsewhere power iteration)
    exact = algorithm == "sgd" and kind in preset.rate_estimators
    const = constants(p, run, batch.X, batch.y, batch.X_test, batch.y_test, seed=seeds[0],
                      exact_hessian=exact)  # fmt: skip
    c = Constants(L=float(const["L"].max()), beta=float(const["beta"].max()), alpha=p.alpha,
                  F=float(const["F"].max()))  # fmt: skip
    beta_more = {k: float(const[k].max()) for k in ("beta_exact", "beta_upper") if k in const}
    lrs_np = lrs.cpu().numpy()
    if np.isfinite([c.L, c.beta, c.F]).all():
        bound = divergence_bound(algorithm, est, d, n, lrs_np, c, p.convexity)
    else:  # a run overflowed: the loss is not Lipschitz on the region it visited
        bound = np.full(len(lrs_np) + 1, np.inf)
    wS, wS2 = run.W_final[:P], run.W_final[P:]
    Xt, yt = batch.X_test[:P], batch.y_test[:P]
    test = p.mean_loss(wS, Xt, yt)
    f_S = p.losses(wS.unsqueeze(-2), Xt, yt).squeeze(-2)  # (P, m)
    f_S2 = p.losses(wS2.unsqueeze(-2), Xt, yt).squeeze(-2)
    first_hit = []  # SGD coupling: delta must stay 0 until example k is first drawn
    if algorithm == "sgd":
        from .stability import example_indices

        for j, s in enumerate(seeds):
            k = int(torch.nonzero((batch.X[j] != batch.X[P + j]).any(-1))[0].cpu())
            hits = torch.nonzero(example_indices(s, len(lrs), n) == k)  # on the CPU
            t_hit = int(hits[0]) if len(hits) else len(lrs)
            first_hit.append(float(run.delta[j, : t_hit + 1].max()))
    T = len(lrs)
    diverged = diverged_runs(run.delta, run.train_loss, preset.blowup)
    per_seed = {
        "delta_T": np.where(diverged, np.inf, run.delta[:, -1]),
        "diverged": diverged.astype(float),
        "L_delta_T": c.L * np.where(diverged, np.inf, run.delta[:, -1]),
        "train_loss": run.train_loss[:, -1],
        "test_loss": test.cpu().numpy(),
        "gen_gap": test.cpu().numpy() - run.train_loss[:, -1],
        "loss_diff": (f_S - f_S2).abs().mean(-1).cpu().numpy(),
        "L_seed": const["L"],
        "beta_seed": const["beta"],
    }
    if first_hit:
        per_seed["delta_before_k"] = np.array(first_hit)
    return {
        "per_seed": {k: np.asarray(v, dtype=float) for k, v in per_seed.items()},
        "delta": run.delta,  # (P, T + 1)
        "train": run.train_loss,  # (P, T + 1)
        "test": run.test_loss,  # (P, T + 1)
        "queries_per_step": est.queries(d),
        "lrs": lrs_np,
        "bound": bound,  # (T + 1,)
        "constants": {"L": c.L, "beta": c.beta, "alpha": c.alpha, "F": c.F, **beta_more},
        "beta0": batch.beta0,
        "L0": batch.L0,
        "lr_limit": lr_limit(
            p, estimator_of(preset, split_kind(kind)[1]), d, n, algorithm, batch.beta0, T, batch.L0
        ),
        "step_kind": split_kind(kind)[1],
        "queries": run.queries,
        "queries_expected": expected_queries(algorithm, est, d, n, T),
        "d": d,
        "T": T,
        "finite": bool(np.isfinite(run.delta).all()),
        "diverged": int(diverged.sum()),
        "one_point": one_point(kind),
        "seconds": time.perf_counter() - t0,
    }


def diverged_runs(delta: np.ndarray, train: np.ndarray, blowup: float) -> np.ndarray:
    """Per pair: diverged if its divergence or either loss is non-finite, or the S-run's
    training loss ever exceeds ``blowup`` x its starting loss (a loss blow-up)."""
    finite = np.isfinite(delta).all(-1) & np.isfinite(train).all(-1)
    with np.errstate(invalid="ignore"):
        blown = np.nanmax(np.where(np.isfinite(train), train, np.inf), -1) > blowup * train[:, 0]
    return ~finite | blown


def measure_n_cell(preset: Preset, name: str, kind: str, factor: float, seeds,
                   device: str = "cpu") -> dict:  # fmt: skip
    """The n-sweep: ZO-SGD on n x factor examples with the full-n cell's steps and step sizes
    (so only n changes), final divergence per seed."""
    t0 = time.perf_counter()
    lrs = schedule(preset, make_batch(preset, name, tuple(seeds), device), "sgd", name)
    small = replace(preset, n=n_of(preset, factor), n_factors=(1.0,))
    batch = make_batch(small, name, tuple(seeds), device)
    est, P = estimator_of(preset, kind), len(seeds)
    run = run_coupled(batch.problem, "sgd", est, batch.X, batch.y, batch.w0, lrs, list(seeds))
    diverged = diverged_runs(run.delta, run.train_loss, preset.blowup)
    return {
        "n": small.n,
        "delta_T": np.where(diverged, np.inf, run.delta[:, -1]),
        "diverged": int(diverged.sum()),
        "P": P,
        "seconds": time.perf_counter() - t0,
    }


def lr_limit(problem: Problem, est: Estimator, d: int, n: int, algorithm: str,
             beta0: float, T: int = 1, L0: float = 1.0) -> float:  # fmt: skip
    """The step-size condition of this estimator: non-expansive (contractive) for the
    coordinate and 2-point estimates; for a 1-point estimate (whose expansion L / mu has no
    non-expansive regime) its own condition over T steps, ``one_point_step`` at L0, under the
    2-point estimates' limit."""
    if est.kind.endswith("1"):
        c1 = Constants(L=L0, beta=beta0, alpha=problem.alpha)
        return one_point_step(est, d, c1, T, n if algorithm == "gd" else 1)
    c0 = Constants(L=1.0, beta=beta0, alpha=problem.alpha)
    kind = "convex" if problem.convexity == "nonconvex" else problem.convexity
    return step_limit(kind, c0, expansion(est, d, c0, n if algorithm == "gd" else 1).gamma)


def expected_queries(algorithm: str, est: Estimator, d: int, n: int, T: int) -> int:
    """Example losses per run: SGD T Q; GD T n Q; SVRG 2 T Q + (snapshots) n Q."""
    q = est.queries(d)
    if algorithm == "sgd":
        return T * q
    if algorithm == "gd":
        return T * n * q
    return 2 * T * q + -(-T // n) * n * q


def cell_key(name: str, algorithm: str, kind: str, seeds) -> str:
    return f"v4/{name}/{algorithm}/{kind}/seeds-{'-'.join(map(str, seeds))}"


# the order units are handed to the executor: the slowest problems first (the MLP's coordinate
# estimate costs 2 d = 122 losses a step; breast cancer's coordinate cells 2 x 31), coordinate
# cells before the others, each problem's n-sweep after its cells (a worker that draws a
# problem's next unit reuses its batch), so that two workers end together
COST_ORDER = ("mlp-digits", "ridge-logistic", "breast-cancer", "least-squares")


def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    seeds = list(ctx.seeds)
    cells = [(name, alg, kind) for name in preset.problems for alg in preset.algorithms
             for kind in preset.estimators]  # fmt: skip
    # the 2-point estimates again at each 1-point estimate's step (ZO-SGD, ZO-SVRG): the
    # 2-point vs 1-point ordering compares them at equal step sizes
    cells += [(name, alg, f"{k2}@{k1}") for name in preset.problems for alg in preset.algorithms
              if alg in ("sgd", "svrg") for k2 in preset.estimators if k2.endswith("2")
              for k1 in preset.estimators if k1.endswith("1")]  # fmt: skip
    # the n-sweep's cells below the full n (n x 1.0 is the full-n ZO-SGD cell itself, read
    # from it below: the one step that needs an earlier unit, a copy, nothing computed)
    n_cells = [(name, kind, f) for name in preset.problems for kind in preset.rate_estimators
               for f in sorted(preset.n_factors)
               if not (f == 1.0 and "sgd" in preset.algorithms)]  # fmt: skip
    ctx.log.info("%d cells x %d coupled pairs + %d n-sweep cells (float64, %d threads)",
                 len(cells), len(seeds), len(n_cells), ctx.threads)  # fmt: skip
    # every cell (problem, algorithm, estimator) and every n-sweep cell is an independent
    # unit: each builds its problem's data from the seeds, seeds its runs itself and reads
    # nothing from ctx, so the pool (or Ray) gives the serial run's numbers. No timing here
    # is a claim (cell_seconds is a record), so nothing stays serial in the driver.
    jobs = {(name, alg, kind): cell_key(name, alg, kind, seeds) for name, alg, kind in cells}
    jobs |= {(name, kind, f): f"{cell_key(name, 'sgd', kind, seeds)}/n-{f}"
             for name, kind, f in n_cells}  # fmt: skip

    def cost(j: tuple) -> tuple:  # problem, then coordinate cells, then the rest, sweep last
        return COST_ORDER.index(j[0]), isinstance(j[2], float), "coord" not in j[1:]

    def unit(j: tuple):
        if isinstance(j[2], float):  # (problem, estimator, n factor)
            return functools.partial(measure_n_cell, preset, *j, tuple(seeds), ctx.device)
        return functools.partial(measure_cell, preset, *j, tuple(seeds), ctx.device)

    units = ctx.cached_parallel({jobs[j]: unit(j) for j in sorted(jobs, key=cost)},
                                desc="cells")  # fmt: skip
    metrics, results = Metrics(), {}
    for name, alg, kind in cells:  # the metrics in the serial run's order
        res = results[(name, alg, kind)] = units[jobs[(name, alg, kind)]]
        for metric, values in res["per_seed"].items():
            for s, v in zip(seeds, values):
                metrics.add(f"{name}/{alg}/{kind}/{metric}", s, v)
        for s in seeds:
            metrics.add(f"{name}/{alg}/{kind}/cell_seconds", s, res["seconds"])
    sweep = {}
    for name in preset.problems:
        for kind in preset.rate_estimators:
            for f in sorted(preset.n_factors):
                if (name, kind, f) in jobs:
                    res = units[jobs[(name, kind, f)]]
                else:  # the full-n cell itself
                    r = results[(name, "sgd", kind)]
                    res = {
                        "n": preset.n,
                        "delta_T": r["per_seed"]["delta_T"],
                        "diverged": r["diverged"],
                        "P": len(seeds),
                        "seconds": 0.0,
                    }
                sweep[(name, kind, res["n"])] = res
                for s, v in zip(seeds, res["delta_T"]):
                    metrics.add(f"{name}/sgd/{kind}/n-{res['n']}/delta_T", s, v)
    ctx.save_partial(metrics)
    for key, per_seed in equal_loss(results, preset).items():
        for metric, values in per_seed.items():
            for s, v in zip(seeds, values):
                metrics.add(f"{key}/equal_loss/{metric}", s, v)
    ctx.save_figure(plot_divergence(results, preset), "divergence.png")
    ctx.save_figure(plot_bounds(results, preset), "bound_vs_measured.png")
    summary = {
        "/".join(key): {"bound_T": float(r["bound"][-1]), **r["constants"], "T": r["T"],
                        "lr_first": float(r["lrs"][0]), "lr_last": float(r["lrs"][-1]),
                        "queries_per_run": r["queries"]}
        for key, r in results.items()
    }  # fmt: skip
    premises = make_premises(results, preset, sweep)
    return Report(metrics, make_claims(metrics, results, preset, sweep, premises),
                  make_checks(results, preset), extra={"cells": summary},
                  premises=premises)  # fmt: skip


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())

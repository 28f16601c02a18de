"""The reproduction: PAPER, the presets, the measurements and ``run``; the command line is
``app`` at the bottom (``iclr24-scl-relu reproduce --help``).

(Template example: ridge, its penalty chosen on a validation split, against least squares,
on generated data with as many features as examples. Replace it with the paper's protocol.)
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

from iclr24_common import ExperimentApp, Metrics, Paper, Report, RunContext, preset_option

from .baselines import least_squares_fit
from .claims import make_checks, make_claims
from .data import load_csv, make_regression
from .figures import plot_validation
from .scl_relu import ridge_fit, ridge_predict

PAPER = Paper(
    title="TODO: the paper's title",
    authors="TODO: surnames",
    arxiv="0000.00000",
    code=None,  # TODO: the official code's URL, if any
)
USES_TORCH = False  # TODO: remove when the package trains with torch (then --device works)


@dataclass(frozen=True)
class Preset:
    """One preset's scale; each default cites where it comes from."""

    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    """Random seeds (data, split)."""
    data: str = "generated"
    """generated, or csv (the paper's table, read from --data-dir)."""
    n_train: int = 60
    """Training examples (as many as features: where least squares overfits)."""
    n_val: int = 60
    """Validation examples, for choosing the penalty (never the test split)."""
    n_test: int = 2000
    """Test examples."""
    d: int = 60
    """Features."""
    noise: float = 1.0
    """Noise standard deviation."""
    lams: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0, 100.0)
    """Ridge penalties tried on validation (the baseline has nothing to tune)."""

    def __post_init__(self):
        if self.data not in ("generated", "csv"):
            raise ValueError("data must be generated or csv")
        if min(self.n_train, self.n_val, self.n_test, self.d) < 1:
            raise ValueError("n_train, n_val, n_test and d must be >= 1")
        if not self.lams or min(self.lams) < 0:
            raise ValueError("lams must be non-negative")


PRESETS = {
    "smoke": Preset(seeds=(0, 1), n_test=500),
    "default": Preset(),
    "paper": Preset(data="csv"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    preset_option(parser, "--n-train", field="n_train", type=int, help="training examples")


def split(preset: Preset, seed: int, table=None):
    """Train / validation / test arrays for one seed."""
    n = preset.n_train + preset.n_val + preset.n_test
    if table is None:
        X, y = make_regression(n, preset.d, preset.noise, seed)
    else:
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(table[1]))
        X, y = table[0][order], table[1][order]
    a, b = preset.n_train, preset.n_train + preset.n_val
    return (X[:a], y[:a]), (X[a:b], y[a:b]), (X[b:n], y[b:n])


def measure(preset: Preset, seed: int, table=None) -> dict[str, float]:
    """Test MSE of ridge (penalty chosen on validation) and of least squares, for one seed."""
    (Xtr, ytr), (Xva, yva), (Xte, yte) = split(preset, seed, table)
    mse = lambda X, y, w: float(np.mean((ridge_predict(X, w) - y) ** 2))  # noqa: E731
    val = {lam: mse(Xva, yva, ridge_fit(Xtr, ytr, lam)) for lam in preset.lams}
    best = min(val, key=val.get)
    w = ridge_fit(Xtr, ytr, best)
    out = {f"ridge/val_mse_lam{lam:g}": v for lam, v in val.items()}
    out.update({
        "ridge/test_mse": mse(Xte, yte, w),
        "ridge/chosen_lam": best,
        # the normal equations X^T (X w - y) + lam w = 0 at the solution
        "ridge/stationarity": float(np.abs(Xtr.T @ (Xtr @ w - ytr) + best * w).max()),
        "least_squares/test_mse": mse(Xte, yte, least_squares_fit(Xtr, ytr)),
    })  # fmt: skip
    return out


def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    table = load_csv(ctx.data_dir) if preset.data == "csv" else None  # fails at once if absent
    metrics = Metrics()
    for seed in ctx.seeds:
        metrics.update(seed, ctx.cached(f"seed{seed}", lambda s=seed: measure(preset, s, table)))
        ctx.save_partial(metrics)
    ctx.save_figure(plot_validation(metrics, preset), "validation.png")
    return Report(metrics, make_claims(metrics, preset), make_checks(metrics, preset))


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())

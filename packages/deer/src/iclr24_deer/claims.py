"""The paper's claims and the code's checks, computed from the measured metrics."""

from __future__ import annotations

import math

from iclr24_common import Check, Claim, Metrics


def _has(metrics: Metrics, *names: str) -> bool:
    return all(n in metrics for n in names)


def make_claims(metrics: Metrics, preset, rows: list[dict] | None = None) -> list[Claim]:
    """The paper's claims; ``preset`` is the ``Preset`` that produced ``metrics``."""
    claims = []
    if _has(metrics, "equiv/err_fp32", "equiv/err_fp64"):
        e32, e64 = max(metrics.values("equiv/err_fp32")), max(metrics.values("equiv/err_fp64"))
        its = max(metrics.values("equiv/iters_max"))
        grid = f"hidden {list(preset.eq_hidden)} x T {list(preset.eq_lengths)}"
        claims.append(Claim(
            id="no-accuracy-loss",
            statement="DEER returns the sequential RNN's output (no approximation), in few Newton "
            "iterations",
            paper="Sec. 4.1 (official experiments/02_compare_outputs): DEER GRU outputs match the "
            "sequential GRU to float precision",
            measured=f"max |DEER - nn.GRU / GRUCell loop| = {e32:.2e} (fp32), {e64:.2e} (fp64); "
            f"max {its:.0f} iterations; {grid}, all seeds",
            criterion="err <= 1e-5 (fp32) and <= 1e-10 (fp64) and iterations <= 20",
            holds=e32 <= 1e-5 and e64 <= 1e-10 and its <= 20,
        ))  # fmt: skip
    if _has(metrics, "equiv/grad_relerr_fp32"):
        g32 = max(metrics.values("equiv/grad_relerr_fp32"))
        g64 = max(metrics.values("equiv/grad_relerr_fp64"))
        claims.append(Claim(
            id="exact-gradients",
            statement="gradients by DEER's adjoint scan equal backpropagation through the "
            "sequential loop",
            paper="Sec. 3 (official deer_iteration custom derivative): gradients from the same "
            "linear operator, no back-propagation through the iterations",
            measured=f"relative L2 error {g32:.2e} (fp32), {g64:.2e} (fp64), hidden "
            f"{preset.grad_hidden}, T {preset.grad_length}",
            criterion="relative error <= 1e-4 in both precisions, every seed",
            holds=g32 <= 1e-4 and g64 <= 1e-4,
        ))  # fmt: skip
    if _has(metrics, "train/loss_rel_gap"):
        gap = max(metrics.values("train/loss_rel_gap"))
        claims.append(Claim(
            id="training-unchanged",
            statement="training a GRU with DEER gives the same training result as sequential "
            "training",
            paper="Sec. 4.3 (EigenWorms): no meaningful difference between DEER and sequential "
            "training",
            measured=f"final train loss DEER {metrics.fmt('train/deer_final_loss')} vs sequential "
            f"{metrics.fmt('train/seq_final_loss')}; max relative gap {gap:.1e}; test acc DEER "
            f"{metrics.fmt('train/deer_test_acc', 3)} vs {metrics.fmt('train/seq_test_acc', 3)}",
            criterion=f"|loss_DEER - loss_seq| / loss_seq <= 2% for every seed "
            f"({preset.train_steps} steps)",
            holds=gap <= 0.02,
        ))  # fmt: skip
        seq, deer = "train/seq_seconds_per_step", "train/deer_seconds_per_step"
        ratios = [a / b for a, b in zip(metrics.values(seq), metrics.values(deer))]
        claims.append(Claim(
            id="training-faster",
            statement="training a GRU with DEER is faster than with the sequential method on "
            "long sequences",
            paper="abstract, Sec. 4.3: training more than 10x faster (EigenWorms, GPU)",
            measured=f"{sum(ratios) / len(ratios):.2f}x (per seed "
            f"{', '.join(f'{r:.2f}' for r in ratios)}) = s/step of nn.GRU "
            f"({metrics.fmt(seq, 3)}) / DEER ({metrics.fmt(deer, 3)}); width {preset.width}",
            criterion="DEER step faster than the sequential nn.GRU step (ratio > 1) for every "
            "seed",
            holds=min(ratios) > 1.0,
        ))  # fmt: skip
    if _has(metrics, "ode/ode_relerr"):
        oe = max(metrics.values("ode/ode_relerr"))
        claims.append(Claim(
            id="ode-matches-solver",
            statement="DEER solves non-linear ODEs (the two-body system of the HNN experiment) "
            "in parallel",
            paper="Sec. 4.2 (two-body HNN, official experiments/03_hnn_ode): DEER ODE solutions "
            "match the sequential solver",
            measured=f"max |DEER - solve_ivp| / max|y| = {oe:.2e}, "
            f"{metrics.fmt('ode/ode_iters', 3)} iterations, {preset.ode_points} points",
            criterion="relative error <= 1e-3 (the mid-point scheme's discretisation error) and "
            "converged",
            holds=oe <= 1e-3 and min(metrics.values("ode/ode_converged")) == 1.0,
        ))  # fmt: skip
    if _has(metrics, "eigenworms/test_acc"):
        gap = max(metrics.values("eigenworms/init_logit_gap"))
        acc = metrics.mean("eigenworms/test_acc")
        claims.append(Claim(
            id="no-accuracy-loss-eigenworms",
            statement="DEER equals the sequential GRU on real data",
            paper="Sec. 4.3",
            measured=f"max logit gap {gap:.2e} at initialisation, EigenWorms T = 17,984",
            criterion="gap <= 1e-4",
            holds=gap <= 1e-4,
        ))  # fmt: skip
        claims.append(Claim(
            id="eigenworms-accuracy",
            statement="a 5-layer GRU trained with DEER classifies EigenWorms well",
            paper="official logged runs: validation accuracy 0.972 and 0.944 "
            "(experiments/04_rnn_eigenworms/results); the paper's table value was not found",
            measured=f"test accuracy {metrics.fmt('eigenworms/test_acc', 3)}, validation "
            f"{metrics.fmt('eigenworms/val_acc', 3)} ({preset.epochs} epochs)",
            criterion="mean test accuracy >= 0.80 (5 classes, chance 0.2)",
            holds=acc >= 0.80,
        ))  # fmt: skip
    if rows:
        n0 = min(r["hidden"] for r in rows)
        top = max((r for r in rows if r["hidden"] == n0), key=lambda r: r["T"])
        claims.append(Claim(
            id="speedup",
            statement="DEER evaluates a GRU faster than the sequential method when T is long and "
            "hidden small",
            paper="abstract, Sec. 4.1 (V100): GPU evaluation up to 3 orders of magnitude faster",
            measured=f"hidden {n0}, T {top['T']}: DEER {top['speedup_deer_vs_loop']:.1f}x vs "
            f"GRUCell loop, {top['speedup_deer_vs_nngru']:.2f}x vs nn.GRU; {top['iters_deer']} "
            f"iterations x {math.ceil(math.log2(top['T']))} scan levels",
            criterion="speed-up vs the GRUCell loop > 1 at the largest T of the smallest hidden "
            "size",
            holds=top["speedup_deer_vs_loop"] > 1.0,
        ))  # fmt: skip
    return claims


def make_checks(metrics: Metrics, preset) -> list[Check]:
    """Invariants of the code: every DEER solve converged."""
    checks = []
    if "equiv/nonconverged" in metrics:
        bad = sum(metrics.values("equiv/nonconverged"))
        checks.append(Check(
            id="newton-converged",
            statement="every DEER solve of the equivalence grid met the official convergence "
            "test within max_iter",
            measured=f"{bad:.0f} solves did not converge",
            criterion="0 non-converged solves, every seed",
            holds=bad == 0,
        ))  # fmt: skip
    return checks

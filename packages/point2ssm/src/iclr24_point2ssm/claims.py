"""The paper's claims and the code's checks, computed from the measured metrics."""

from __future__ import annotations

from iclr24_common import Check, Claim, Metrics


def make_claims(m: Metrics, preset) -> list[Claim]:
    """Claims of the paper; ``preset`` is the preset that produced ``m``."""
    conditions = preset.conditions
    avg = f"mean of {len(preset.seeds)} seed(s)"
    claims: list[Claim] = []
    if "clean" not in conditions:
        return claims
    p_c, n_c = m.mean("clean/point2ssm/compactness@3"), m.mean("clean/no-corr/compactness@3")
    claims.append(
        Claim(
            id="compactness",
            statement="Point2SSM's correspondences form a compact shape model: few modes explain "
            "most of the variance (far more than without correspondence)",
            paper="compactness curves on spleen/pancreas/LA (no single figure; not copied)",
            measured=f"compactness(3) {m.fmt('clean/point2ssm/compactness@3', 3)} vs no-corr "
            f"{m.fmt('clean/no-corr/compactness@3', 3)} (truth 0.94)",
            criterion=f">= 0.7 and >= 3x no-corr, {avg}",
            holds=bool(p_c >= 0.7 and p_c >= 3 * n_c),
        )
    )
    if "clean/point2ssm/mode1_r2" in m:
        r2 = m.mean("clean/point2ssm/mode1_r2")
        claims.append(
            Claim(
                id="first-mode",
                statement="the first mode of the learned SSM is the population's main variation",
                paper="qualitative (modes of variation shown); needs known modes, so no paper figure",
                measured=f"R^2 {m.fmt('clean/point2ssm/mode1_r2', 3)} (DG-AE "
                f"{m.fmt('clean/dg-ae/mode1_r2', 3)})",
                criterion=f"R^2(PCA mode 1 score, true elongation) >= 0.8, {avg}",
                holds=bool(r2 >= 0.8),
            )
        )
    p, d = m.mean("clean/point2ssm/p2s"), m.mean("clean/dg-ae/p2s")
    claims.append(
        Claim(
            id="surface-accuracy",
            statement="Point2SSM samples the surface more accurately than DG-AE",
            paper="benchmark table: Point2SSM best point-to-mesh distance of the networks (values not copied)",
            measured=f"P2S {m.fmt('clean/point2ssm/p2s', 3)} vs DG-AE {m.fmt('clean/dg-ae/p2s', 3)}",
            criterion=f"Point2SSM <= 0.9 x DG-AE, {avg}",
            holds=bool(p <= 0.9 * d),
        )
    )
    for cond in ("noisy", "partial"):
        if cond not in conditions:
            continue
        rel = {
            meth: m.mean(f"{cond}/{meth}/p2s") / m.mean(f"clean/{meth}/p2s") - 1
            for meth in ("point2ssm", "dg-ae")
        }
        claims.append(
            Claim(
                id=f"robust-{cond}",
                statement=f"Point2SSM degrades less than DG-AE under {cond} input",
                paper="robustness study (noise, partial, sparse): Point2SSM most robust (values not copied)",
                measured=f"relative P2S increase {rel['point2ssm']:+.1%} vs DG-AE "
                f"{rel['dg-ae']:+.1%}",
                criterion=f"Point2SSM's relative increase < DG-AE's, {avg}",
                holds=bool(rel["point2ssm"] < rel["dg-ae"]),
            )
        )
    return claims


def make_checks(m: Metrics, preset, trained_steps: dict[str, int]) -> list[Check]:
    """Invariants of the code: equal training budgets, and the floor's P2S of 0 on clean
    input (its points are surface samples)."""
    steps = sorted(set(trained_steps.values()))
    checks = [
        Check(
            id="equal-budget",
            statement="every trained model ran the preset's number of optimiser steps",
            measured=f"steps per model: {steps} over {len(trained_steps)} trainings",
            criterion=f"all == {preset.steps}",
            holds=steps == [preset.steps],
        )
    ]
    if "clean/no-corr/p2s" in m:
        worst = max(m.values("clean/no-corr/p2s"))
        checks.append(
            Check(
                id="floor-on-surface",
                statement="the no-correspondence floor's points lie on the surface (clean input)",
                measured=f"max P2S {worst:.1e}",
                criterion="<= 1e-5 on every seed (float32 ray casting)",
                holds=worst <= 1e-5,
            )
        )
    return checks

"""The paper's claims, their premises and the code's checks, computed from the measured
metrics (never typed in).

A claim's verdict (holds / fails / inconclusive) comes from a test on paired per-seed values
(``iclr24_common.verdicts``); a premise (every network stopped by patience) is measured and
can fail, and makes the claims that rest on it inconclusive; a check is an invariant that
holds by construction. Every claim is in the paper's regime: the data sizes, the official
structures and the numbers m of monotone inputs are the paper's (see the README).

The paper's own figures are quoted from its Tables 2-3 as a later paper reprints them (see
the README): Auto MPG MSE SMNN 7.44 +/- 1.20, LMN 7.58 +/- 1.20; COMPAS accuracy SMNN 69.3 %,
LMN 69.3 %; Loan SMNN 65.0 %, LMN 65.4 %; Heart SMNN 0.88, LMN 0.90; Blog Feedback RMSE SMNN
just under 0.151, LMN 0.160.
"""

from __future__ import annotations

import numpy as np

from iclr24_common import (
    Check,
    Claim,
    Metrics,
    Premise,
    Source,
    non_inferiority,
    none_of,
    superiority,
    threshold,
)

from . import data as D
from .baselines import GROWING_PEERS, MONOTONE_PEERS, NEURAL, UNCONSTRAINED

PAPER_TABLES = {  # the paper's Tables 2-3 (as reprinted; see the README): SMNN, LMN, best peer
    "compas": "SMNN 69.3 % +/- 0.9, LMN 69.3 % +/- 0.1, Constrained MNN 69.2 %, XGBoost "
    "68.5 % +/- 0.1 (Table 2)",
    "blogfeedback": "SMNN RMSE just under 0.151, LMN 0.160 +/- 0.001, XGBoost 0.176 (Table 2)",
    "loan": "SMNN 65.0 % +/- 0.1, LMN 65.4 % +/- 0.0, XGBoost 63.7 % (Table 2)",
    "heart": "SMNN 0.88 +/- 0.04, LMN 0.90 +/- 0.02, Constrained MNN 0.89 (Table 3)",
}
# The paper's "comparable" accuracy: an error (MSE) within 5 % of the best monotone peer's
# mean. The paper calls SMNN's Auto MPG 7.44 vs LMN's 7.58 (1.9 % apart) and Heart 0.88 vs
# LMN's 0.90 (2.2 % apart) comparable (Table 3); 5 % allows a little over twice the larger.
COMPARABLE = 0.05
COMPARABLE_WHY = ("the paper calls gaps of 1.9 % (Auto MPG MSE: SMNN 7.44 vs LMN 7.58) and "
                  "2.2 % (Heart accuracy: 0.88 vs LMN 0.90) to the best peer comparable "
                  "(Table 3); 5 % allows a little over twice the larger")  # fmt: skip
# "Comparable" classification accuracy: within 1 accuracy point (0.01) of the best peer (the
# paper calls Loan's 65.0 % vs LMN's 65.4 % and COMPAS 69.3 % vs 69.3 % comparable).
COMPARABLE_ACC = 0.01
COMPARABLE_ACC_WHY = ("the paper calls Loan 65.0 % vs LMN 65.4 % (0.4 points) and COMPAS "
                      "69.3 % vs 69.3 % comparable (Table 2); 1 point is 2.5x the larger gap "
                      "(its Heart 0.88 vs 0.90, Table 3, would allow 2)")  # fmt: skip
NOISE_COMPARATOR = "mlp"  # the paper's Figure 3 compares SMNN with the MLP
# "Grows much less" (Friedman #1 under noise): SMNN's slope of error on noise lower by more
# than the same 5 % of the unconstrained network's mean slope (a gain inside "comparable" is
# not "better").
BETTER = COMPARABLE
# Scalability: SMNN's time ratio (largest m / smallest m, m = 1 -> 20 monotone inputs) counted
# as flat: below 1.5 (the paper's figure shows a flat line; a 50 % rise over a 20x growth of m
# would be visible in it). A peer whose cost grows with m must grow at least 2x as much. Both
# are ours, fixed before any run that they decided, at the commits named in their sources.
SCALE_FLAT = 1.5
SCALE_FLAT_SOURCE = Source.ours(
    "a 50 % rise over a 20x growth of m would be visible in the paper's flat line (its "
    "scalability figure has no numbers)", commit="50a6460")  # fmt: skip
GROWS = 2.0
GROWS_SOURCE = Source.ours(
    "a peer 'lacks scalability' (Table 1) when its cost grows at least twice as much as "
    "SMNN's over the same m", commit="a96e54b")  # fmt: skip
CONTROL_NAME = {"test_mse": "linear regression", "test_accuracy": "logistic regression"}
# The comparators of the accuracy claims: the peers the paper's table for that dataset lists
# that run here. Table 3 (Auto MPG, Heart): LMN, COMET, Constrained MNN, Min-Max, DLN -> LMN
# and the lattice (our stand-in for DLN, where installed). Table 2 (COMPAS, Blog Feedback,
# Loan) adds XGBoost -> also monotone gradient boosting. UMNN (in neither table) and, on
# Auto MPG and Heart, the boosting are extra rows, reported but not the claim's comparator.
TABLE3_PEERS = ("lmn", "lattice")
TABLE2_PEERS = ("lmn", "lattice", "gbm")


def paper_peers(task: str) -> tuple[str, ...]:
    """The claim's comparators on ``task``: the paper's peers for that table (see above)."""
    return TABLE2_PEERS if task in ("compas", "blogfeedback", "loan") else TABLE3_PEERS


def _score(task: str) -> tuple[str, bool]:
    """The test metric of a task and whether higher is better."""
    if task in D.PAPER_DATASETS and D.PAPER_DATASETS[task].task == "classification":
        return "test_accuracy", True
    return ("test_rmse" if task in D.PAPER_DATASETS else "test_mse"), False


def _best(metrics: Metrics, task: str, models, higher: bool, metric: str) -> str | None:
    have = [m for m in models if f"{task}/{m}/{metric}" in metrics]
    if not have:
        return None
    pick = max if higher else min
    return pick(have, key=lambda m: metrics.mean(f"{task}/{m}/{metric}"))


def make_claims(metrics: Metrics, preset, models, tasks, items=None) -> list[Claim]:
    """The paper's claims measured here; ``preset`` is the ``Preset`` that produced ``metrics``;
    ``items`` maps ``task/model`` to the per-seed per-item test scores of the real datasets
    (one fixed test set: their SE includes the test items)."""
    claims = []
    claims += _noise_claim(metrics, tasks)
    if "autompg" in tasks:
        claims += _accuracy_claim(metrics, preset, models, tasks, "autompg", items)
    for task in [t for t in tasks if t in D.PAPER_DATASETS]:
        claims += _accuracy_claim(metrics, preset, models, tasks, task, items)
    claims += _scalability_claims(metrics, preset, models)
    return claims


def _accuracy_claim(metrics: Metrics, preset, models, tasks, task: str, items) -> list[Claim]:
    """SMNN "comparable" to the best monotone peer: non-inferiority on paired per-seed test
    errors (or accuracies), with the linear (logistic) regression as the no-op arm. Auto MPG
    splits its rows per seed; the real datasets score every seed on their official test set,
    so their SE includes the test items (an RMSE is judged as its MSE: per-item squared
    errors average to it)."""
    metric, higher = _score(task)
    judged = "test_mse" if metric == "test_rmse" else metric
    peer = _best(metrics, task, [m for m in models if m in paper_peers(task)], higher, judged)
    if not peer:
        return []
    shown_metric = metric if not higher else "test_accuracy"
    extra = [m for m in models if m in MONOTONE_PEERS and m not in paper_peers(task)
             and f"{task}/{m}/{shown_metric}" in metrics]  # fmt: skip
    extra_rows = "".join(f"; extra row (not in the paper's table), {m} "
                         f"{metrics.fmt(f'{task}/{m}/{shown_metric}')}" for m in extra)  # fmt: skip
    p, s = metrics.mean(f"{task}/{peer}/{judged}"), metrics.mean(f"{task}/smnn/{judged}")
    ctl = f"{task}/linear/{judged}"
    c = metrics.mean(ctl)
    shared = task in D.PAPER_DATASETS
    if higher:
        tol, source = COMPARABLE_ACC, Source.derived(
            f"1 accuracy point (0.01): {COMPARABLE_ACC_WHY}")  # fmt: skip
        moved = (f"SMNN's accuracy {s:.1%} vs logistic regression's {c:.1%} "
                 f"({(s - c) * 100:+.1f} points)")  # fmt: skip
    else:
        rel = COMPARABLE if judged == metric else (1 + COMPARABLE) ** 2 - 1
        tol = rel * p
        rmse = "" if judged == metric else (
            f"; an RMSE within {COMPARABLE:.0%} is an MSE within (1 + {COMPARABLE:g})^2 - 1 = {rel:.2%}")  # fmt: skip
        source = Source.derived(f"{rel:.4g} x the peer's mean MSE {p:.4g} = {tol:.4g}: "
                                f"{COMPARABLE_WHY}{rmse}")  # fmt: skip
        moved = f"SMNN's MSE {s:.4g} vs linear regression's {c:.4g} (SMNN / linear {s / c:.3g})"
    it = None
    if shared:
        if not items or any(f"{task}/{m}" not in items for m in ("smnn", peer, "linear")):
            raise ValueError(f"{task} scores every seed on one test set: give its per-item "
                             "scores (items=)")  # fmt: skip
        it = tuple(items[f"{task}/{m}"] for m in ("smnn", peer, "linear"))
    test = non_inferiority(
        metrics.by_seed(f"{task}/smnn/{judged}"), metrics.by_seed(f"{task}/{peer}/{judged}"),
        tolerance=tol, higher_is_better=higher, source=source, items=it,
        control=metrics.by_seed(ctl), control_name=CONTROL_NAME[judged],
    )  # fmt: skip
    if task == "autompg":
        gap = metrics.gap("autompg/smnn/test_mse", f"autompg/{peer}/test_mse")
        protocol = (f"{preset.autompg_folds}-fold CV per seed (the mean over the folds)"
                    if preset.autompg_folds else "one 60/20/20 split per seed")  # fmt: skip
        return [Claim(
            id="autompg-accuracy",
            statement=f"On Auto MPG, SMNN's test MSE is within {COMPARABLE:.0%} of the best "
            "peer's of the paper's Table 3 (the paper's 'as accurate as the state-of-the-art "
            "monotonic networks').",
            paper="Table 3: Auto MPG MSE, SMNN 7.44 +/- 1.20, LMN 7.58 +/- 1.20",
            measured=f"SMNN MSE {metrics.fmt('autompg/smnn/test_mse')} vs the best tuned "
            f"peer of the paper's Table 3 ({peer}) {metrics.fmt(f'autompg/{peer}/test_mse')} "
            f"(ratio of means {s / p:.3f}; SMNN - peer {gap}; {protocol}); no-op arm, linear "
            f"regression {metrics.fmt(ctl)}{extra_rows}",
            criterion=f"SMNN's test MSE vs the best of the paper's Table 3 peers run here "
            f"({', '.join(m for m in paper_peers(task) if m in models)}; best: {peer}), paired per seed; "
            f"tolerance {tol:.4g} = {COMPARABLE:.0%} of the peer's mean (the paper's "
            "'comparable'); the linear regression through the same test",
            test=test, regime="paper", test_set="per-seed",
            rests_on=_rests(metrics, [task], models, f"converged/{task}"), moved=moved,
        )]  # fmt: skip
    shown = shown_metric
    return [Claim(
        id=f"{task}-accuracy",
        statement=f"On {task}, SMNN is within "
        + ("1 accuracy point" if higher else f"{COMPARABLE:.0%} (RMSE)")
        + " of the best of the paper's peers for it (the paper's 'as accurate as the "
        "state-of-the-art monotonic networks').",
        paper=PAPER_TABLES[task],
        measured=f"SMNN {shown} {metrics.fmt(f'{task}/smnn/{shown}')} vs the best peer of the "
        f"paper's table ({peer}) {metrics.fmt(f'{task}/{peer}/{shown}')}; no-op arm, "
        f"{CONTROL_NAME[judged]} {metrics.fmt(f'{task}/linear/{shown}')}{extra_rows}",
        criterion=f"SMNN's {judged} vs the best of the paper's peers run here "
        f"({', '.join(m for m in paper_peers(task) if m in models)}; best: {peer}), paired per seed on "
        "the official test set (SE over seeds and test items); tolerance "
        + (f"{tol:g} (1 accuracy point)" if higher else f"{tol:.4g} (an RMSE within "
           f"{COMPARABLE:.0%} of the peer's)")
        + f"; the {CONTROL_NAME[judged]} through the same test",
        test=test, regime="paper", test_set="shared",
        rests_on=_rests(metrics, [task], models, f"converged/{task}"), moved=moved,
    )]  # fmt: skip


def _slopes(metrics: Metrics, model: str, noises: list[float]) -> dict[int, float] | None:
    """Per seed: the least-squares slope of the denoised test MSE on the noise std (MSE per
    unit of noise std), over every level the model was fitted at."""
    keys = [f"friedman_noise{nz:g}/{model}/test_mse" for nz in noises]
    if not all(k in metrics for k in keys):
        return None
    per = [metrics.by_seed(k) for k in keys]
    seeds = sorted(set.intersection(*(set(d) for d in per)))
    return {s: float(np.polyfit(noises, [d[s] for d in per], 1)[0]) for s in seeds}


def _noise_claim(metrics: Metrics, tasks) -> list[Claim]:
    """The paper's Figure 3: the MLP's error grows with the label noise, SMNN's much less.
    Judged on the growth itself (the per-seed slope of the error on the noise std) against the
    MLP, the network the paper compares with (the official friedman_train.py's 208-208 MLP);
    the same-structure ablation is reported beside it, not judged (the paper draws no
    conclusion from it about noise, and picking the comparator after seeing the slopes would
    choose the criterion from the data)."""
    noises = sorted(float(t.removeprefix("friedman_noise")) for t in tasks
                    if t.startswith("friedman_noise"))  # fmt: skip
    if len(noises) < 2:
        return []
    slopes = {m: _slopes(metrics, m, noises) for m in ("smnn", *UNCONSTRAINED)}
    slopes = {m: v for m, v in slopes.items() if v}
    base = NOISE_COMPARATOR
    if "smnn" not in slopes or base not in slopes:
        return []
    shown = [m for m in UNCONSTRAINED if m in slopes]
    margin = BETTER * abs(_mean(slopes[base]))

    def curve(m):
        return " -> ".join(
            f"{metrics.mean(f'friedman_noise{nz:g}/{m}/test_mse'):.3g}" for nz in noises
        )

    levels = "/".join(f"{nz:g}" for nz in noises)
    n = len(slopes["smnn"])
    return [
        Claim(
            id="friedman-noise-robust",
            statement="The monotone prior makes SMNN's error grow less with the label noise "
            f"than the MLP's (its slope lower by more than {BETTER:.0%} of the MLP's; the paper "
            "says 'much less').",
            paper="Figure 3 (Friedman #1, noise std 0, 2, 5, 10, 20): the MLP's denoised test "
            "error grows with the noise, SMNN's much less (no numbers found)",
            measured=f"denoised test MSE at noise {levels}: SMNN {curve('smnn')}"
            + "".join(f", {m} {curve(m)}" for m in shown)
            + f"; slope (MSE per unit noise std, mean of {n} per-seed fits): SMNN "
            f"{_mean(slopes['smnn']):.3g}"
            + "".join(f", {m} {_mean(slopes[m]):.3g}" for m in shown)
            + ("" if "same" not in slopes else " (same structure: reported, not judged)"),
            criterion=f"per seed, the least-squares slope of the denoised test MSE on the noise "
            f"std ({levels}); SMNN's vs the MLP's (the paper's comparator in Figure 3); margin "
            f"{margin:.4g} = {BETTER:.0%} of the MLP's mean slope",
            test=superiority(
                slopes["smnn"],
                slopes[base],
                margin=margin,
                higher_is_better=False,
                source=Source.derived(
                    f"{BETTER:.0%} x the MLP's mean slope {_mean(slopes[base]):.4g} = "
                    f"{margin:.4g}: a gain inside the 'comparable' band is not 'less' "
                    f"({COMPARABLE_WHY})"
                ),
            ),
            regime="paper",
            test_set="per-seed",
            rests_on=_rests(
                metrics,
                [f"friedman_noise{nz:g}" for nz in noises],
                ("smnn", *UNCONSTRAINED),
                "converged/friedman",
            ),
        )
    ]


def _ratios(metrics: Metrics, model: str, what: str, ms) -> dict[int, float] | None:
    """Per seed: the cost at the largest m over the cost at the smallest m."""
    lo, hi = f"scalability/{model}/{what}_m{ms[0]}", f"scalability/{model}/{what}_m{ms[-1]}"
    if lo not in metrics or hi not in metrics:
        return None
    a, b = metrics.by_seed(lo), metrics.by_seed(hi)
    return {s: b[s] / a[s] for s in sorted(set(a) & set(b))}


def _mean(d: dict[int, float]) -> float:
    return sum(d.values()) / len(d)


def _ms_per_epoch(metrics: Metrics, model: str, ms) -> str:
    return " -> ".join(
        f"{metrics.mean(f'scalability/{model}/epoch_seconds_m{m}') * 1e3:.0f}" for m in ms
    )


def _scalability_claims(metrics: Metrics, preset, models) -> list[Claim]:
    """SMNN's time per epoch against m: flat. The growing peers' times (UMNN, the lattice) are
    a check (:func:`_growth_check`): they grow by construction of our assemblies, and the
    peers the paper timed (the certified and min-max networks) have no CPU package; the
    parameter counts are a check too (closed forms)."""
    ms = sorted(preset.scal_m)
    if "scalability" not in preset.tasks or len(ms) < 2:
        return []
    t_s = _ratios(metrics, "smnn", "epoch_seconds", ms)
    if t_s is None:
        return []
    n = len(t_s)
    others = [m for m in ("lmn", *GROWING_PEERS) if m in models
              and f"scalability/{m}/epoch_seconds_m{ms[0]}" in metrics]  # fmt: skip
    measured = (
        f"time/epoch ratio m={ms[-1]} vs m={ms[0]} (mean of {n} per-seed ratios): SMNN "
        f"{_mean(t_s):.2f} ({_ms_per_epoch(metrics, 'smnn', ms)} ms)"
    )
    measured += "".join(
        f"; {m} {_mean(_ratios(metrics, m, 'epoch_seconds', ms)):.2f} "
        f"({_ms_per_epoch(metrics, m, ms)} ms, not judged)" for m in others
    )  # fmt: skip
    return [
        Claim(
            id="scalability",
            statement=f"SMNN's training time per epoch grows by less than {SCALE_FLAT:g}x from "
            f"m={ms[0]} to m={ms[-1]} monotone inputs (of 40).",
            paper="Section 4 scalability test (m = 1..20 monotone of 40 inputs): SMNN's training "
            "time stays flat (figure; no numbers found), where the certified and min-max "
            "networks' grow; Table 1: lattice and UMNN-type methods lack scalability in m",
            measured=measured,
            criterion=f"per-seed ratios (time at m={ms[-1]} / time at m={ms[0]}: median epoch, "
            f"the median over {preset.scal_rounds} interleaved rounds; one thread): SMNN's "
            f"below {SCALE_FLAT:g}; the peers' growth is the check peer-growth, not part of "
            "this claim (the paper's timed peers do not run here, and our UMNN assembly grows "
            "by construction)" + (" (1 seed: judged as 1 value)" if n == 1 else ""),
            test=threshold(
                t_s, threshold=SCALE_FLAT, higher_is_better=False, source=SCALE_FLAT_SOURCE
            ),
            regime="paper",
            test_set="none",
        )
    ]


def _growth_check(metrics: Metrics, preset, models) -> list[Check]:
    """The growing peers' time ratio over SMNN's: a check, since it holds by construction."""
    ms, t_s, peers = _scaling_ratios(metrics, preset, models, "epoch_seconds")
    if not t_s or not peers:
        return []
    grows = {m: {s: r[s] / t_s[s] for s in r if s in t_s} for m, r in peers.items()}
    return [
        Check(
            id="peer-growth",
            statement=f"a monotonic network whose cost grows with m (UMNN, lattices) grows more "
            f"than {GROWS:g}x as much as SMNN from m={ms[0]} to m={ms[-1]}",
            measured=", ".join(
                f"{m} time ratio {_mean(peers[m]):.3g} "
                f"({_ms_per_epoch(metrics, m, ms)} ms), {_mean(g):.3g}x SMNN's"
                for m, g in grows.items()
            ),  # fmt: skip
            criterion=f"each growing peer's time ratio over SMNN's > {GROWS:g} on every seed",
            holds=all(v > GROWS for g in grows.values() for v in g.values()),
            why="our UMNN runs one MonotonicNN (an integral by quadrature) per monotone input, "
            "a lattice has 2^m vertices: their cost grows with m by construction, so this "
            "cannot test the paper; the peers the paper timed (certified, min-max networks) "
            "have no CPU package",
        )
    ]


def _fit_counts(metrics: Metrics, tasks, models) -> dict[str, list[dict[int, float]]]:
    """Per network: the ``converged`` flags (per seed) of its fits on ``tasks``."""
    conv = {m: [metrics.by_seed(f"{t}/{m}/converged") for t in tasks
                if f"{t}/{m}/converged" in metrics] for m in models if m in NEURAL}  # fmt: skip
    return {m: v for m, v in conv.items() if v}


def _rests(metrics: Metrics, tasks, models, pid: str) -> tuple[str, ...]:
    """The premise a claim on ``tasks`` rests on, where a network was fitted there."""
    return (pid,) if _fit_counts(metrics, tasks, models) else ()


def premise_groups(tasks, models) -> list[tuple[str, list[str], tuple[str, ...]]]:
    """The groups of fits each claim compares, and its premise: ``(id, tasks, models)``."""
    noise = [t for t in tasks if t.startswith("friedman_noise")]
    groups = [("converged/friedman", noise, ("smnn", *UNCONSTRAINED))] if len(noise) > 1 else []
    return groups + [(f"converged/{t}", [t], tuple(models)) for t in tasks
                     if t == "autompg" or t in D.PAPER_DATASETS]  # fmt: skip


def make_premises(metrics: Metrics, preset, models, tasks) -> list[Premise]:
    """Every network fit a claim compares ends by early stopping, not by the epoch cap: a
    precondition of the accuracy and noise claims (not a statement of the paper), measured,
    one premise per claim; a capped fit makes that claim inconclusive."""
    out = []
    for pid, group, group_models in premise_groups(tasks, models):
        conv = _fit_counts(metrics, group, group_models)
        if not conv:
            continue
        seeds = sorted({s for v in conv.values() for d in v for s in d})
        # per seed: fits stopped by the cap (1 - converged; an Auto MPG CV unit counts its
        # folds' fraction)
        capped = {s: sum(1.0 - d[s] for v in conv.values() for d in v if s in d) for s in seeds}
        fits = sum(len(v) for v in conv.values())
        out.append(Premise(
            id=pid,
            statement=f"every network fit of {pid.split('/')[1]} ({', '.join(conv)}) is trained "
            f"to convergence under the same rule: early stopping after {preset.patience} epochs "
            f"without a better validation loss, cap {preset.max_epochs} epochs",
            paper="not a statement of the paper: the precondition of its comparisons (the "
            "official scripts take the epoch count as an unpublished argument)",
            measured=", ".join(
                f"{m} {sum(sum(d.values()) for d in v):.0f}/{sum(len(d) for d in v)}"
                for m, v in conv.items()
            )
            + " fits stopped by patience (mean best epoch: "
            + ", ".join(f"{m} {_mean_best(metrics, m, group):.0f}" for m in conv)
            + ")",
            criterion=f"the number of these network fits ({fits} per seed) stopped by the epoch "
            "cap rather than by patience: none (the total over the seeds below 0.5)",
            test=none_of(capped),
        ))  # fmt: skip
    return out


def make_checks(metrics: Metrics, preset, models, tasks) -> list[Check]:
    """Invariants of the code: the monotonicity guarantees (SMNN's by construction, the
    peers' by theirs), equal tuning and the parameter counts against m (closed forms of the
    structures). (Convergence is measured, so it is a premise.)"""
    checks = []
    rates = [v for t in tasks for s in ("violation_rate", "violation_rate_init")
             for v in _vals(metrics, f"{t}/smnn/{s}")]  # fmt: skip
    if rates:
        mlp = ", ".join(f"{t} {metrics.mean(f'{t}/mlp/violation_rate'):.3g}"
                        for t in tasks if f"{t}/mlp/violation_rate" in metrics)  # fmt: skip
        checks.append(
            Check(
                id="monotonicity-guarantee",
                statement="SMNN is monotone in the declared inputs for any weights, before and "
                "after training",
                paper="Theorem 1: monotone for any weights (exp weights, non-decreasing "
                "activations)",
                measured=f"max SMNN violation rate {max(rates):.3g} over {len(rates)} audits; "
                f"MLP mean rate: {mlp or 'not run'}",
                criterion="every SMNN audit (pairwise raises + autograd signs, float64, tol "
                "1e-6) finds 0 violations",
                holds=max(rates) == 0.0,
                why="Theorem 1: the monotone path has exp(.) (positive) weights and "
                "non-decreasing activations, so it is monotone for any weights",
            )
        )
    peers = [m for m in models if m in MONOTONE_PEERS]
    peer_rates = {m: max([v for t in tasks for v in _vals(metrics, f"{t}/{m}/violation_rate")],
                         default=0.0) for m in peers}  # fmt: skip
    if peer_rates:
        checks.append(
            Check(
                id="peers-monotone",
                statement="the monotone peers are monotone too (their own guarantees, wired "
                "to the declared directions)",
                measured=", ".join(f"{m} max {r:.3g}" for m, r in peer_rates.items()),
                criterion="every peer audit finds 0 violations",
                holds=all(r == 0.0 for r in peer_rates.values()),
                why="each peer's own construction: LMN's Lipschitz-bounded net plus a monotone "
                "residual, UMNN's integral of a positive integrand, the lattice's monotone "
                "projections, the boosting's monotonic_cst",
            )
        )
    trials = {m: [v for t in tasks for v in _vals(metrics, f"{t}/{m}/trials")] for m in models}
    trials = {m: v for m, v in trials.items() if v}
    if trials:
        counts = {m: sorted(set(v)) for m, v in trials.items()}
        checks.append(
            Check(
                id="equal-tuning",
                statement="every model is tuned the same way: the same number of configurations, "
                "chosen on the same validation split",
                measured=", ".join(
                    f"{m} {'/'.join(f'{c:.0f}' for c in v)}" for m, v in counts.items()
                ),  # fmt: skip
                criterion="one configuration count for all models on every task",
                holds=len({c for v in counts.values() for c in v}) == 1,
                why="fit_tuned fits each model on its grid of TRIALS configurations (GRIDS is "
                "asserted to have TRIALS points per model)",
            )
        )
    checks += _params_check(metrics, preset, models)
    checks += _growth_check(metrics, preset, models)
    return checks


def _scaling_ratios(metrics: Metrics, preset, models, quantity: str):
    """The sorted m grid, SMNN's per-seed ratio of ``quantity`` from the smallest m to the
    largest (None with one m), and each growing peer's that was measured."""
    ms = sorted(preset.scal_m)
    ours = _ratios(metrics, "smnn", quantity, ms) if len(ms) > 1 else None
    peers = {m: _ratios(metrics, m, quantity, ms) for m in GROWING_PEERS if m in models}
    return ms, ours, {m: r for m, r in peers.items() if r}


def _params_check(metrics: Metrics, preset, models) -> list[Check]:
    ms, p_s, peers = _scaling_ratios(metrics, preset, models, "params")
    if not p_s or not peers:
        return []

    def counts(model):
        return " -> ".join(f"{metrics.mean(f'scalability/{model}/params_m{m}'):.0f}" for m in ms)

    return [
        Check(
            id="params-vs-m",
            statement=f"SMNN's parameter count grows by less than {SCALE_FLAT:g}x from m={ms[0]} "
            f"to m={ms[-1]} monotone inputs; each growing peer's by more than {GROWS:g}x "
            "SMNN's ratio",
            measured=f"SMNN {counts('smnn')} (ratio {_mean(p_s):.3g})"
            + "".join(f", {m} {counts(m)} (ratio {_mean(r):.3g})" for m, r in peers.items()),
            criterion=f"SMNN's ratio < {SCALE_FLAT:g} and each peer's ratio > {GROWS:g} x "
            "SMNN's, on every seed",
            holds=all(v < SCALE_FLAT for v in p_s.values())
            and all(r[s] > GROWS * p_s[s] for r in peers.values() for s in r if s in p_s),
            why="parameter counts are closed forms of the structures: a monotone input moves "
            "from SMNN's ReLU unit to its exp unit (a few first-layer weights more), while "
            "UMNN adds one integrand network per monotone input and a lattice 2^m vertices",
        )
    ]


def _mean_best(metrics: Metrics, model: str, tasks) -> float:
    vals = [v for t in tasks for v in _vals(metrics, f"{t}/{model}/best_epoch")]
    return sum(vals) / len(vals) if vals else float("nan")


def _vals(metrics: Metrics, name: str) -> list[float]:
    """The values of a metric, or none where the model was not fitted on that task (the
    monotone peers at the lower Friedman noise levels)."""
    return metrics.values(name) if name in metrics else []

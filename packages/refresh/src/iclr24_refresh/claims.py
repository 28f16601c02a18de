"""The paper's claims, the premise they rest on and the code's checks, computed from the
metrics.

Claims compare each method with refresh against the same method without it (the official
best arguments for both; refresh itself has no tuned hyper-parameter), paired over seeds, on
the stream's one fixed test set (so the SE includes its examples: ``items=``). Two no-op
controls run through the same tests: the official step's budget spent in a random direction
(``random-step``), and, on ``no-harm/*`` (issue 50), refresh that never fires, which is the
baseline arm itself, bit for bit. The second passes any non-inferiority test against the
baseline it equals (a gap of exactly 0), so ``no-harm/*`` can no longer hold: it fails when
refresh harms and is otherwise inconclusive ("control passes"), which is what a
non-inferiority test can say about an intervention that moves the weights by 1e-5 of their
norm a step. ``improves/*`` is the claim that can tell refresh from nothing.
"""

from __future__ import annotations

from iclr24_common import (
    Check,
    Claim,
    Metrics,
    Premise,
    Source,
    all_of,
    non_inferiority,
    superiority,
)

PAPER_TABLE2 = (
    "Table 2 of arXiv 2403.13249 (class-IL gains of +refresh on CIFAR-10, CIFAR-100 and "
    "Tiny-ImageNet): the figures were not found in the stored copies searched (arXiv / "
    "OpenReview abstracts, the official repository's README); see the package README"
)
# the package issue's "no harm": refresh >= without refresh - 2 class-IL points (on the lower
# 2-SE bound of the paired gain)
NO_HARM_POINTS = 2.0
NO_HARM_SOURCE = Source.ours(
    "2 class-IL points: the package issue's reading of 'does not harm'; not derived from the "
    "paper, which reports gains only (Table 2 not retrieved here)",
    commit="d8f1f2c",
)
# "improves" has no size in the paper (abstract, Sec. 6; Table 2 unreadable here): any gain
# beyond 2 SE of the paired differences
IMPROVE_MARGIN = 0.0
IMPROVE_SOURCE = Source.paper(
    "refresh learning, specifically designed to enhance the CL performance", "abstract"
)
# the package's sanity premise "a large step lowers accuracy" has no size either: any drop
# beyond 2 SE
HURT_MARGIN = 0.0
HURT_SOURCE = Source.ours(
    "0: any drop past 2 SE shows the unlearning step acts on accuracy; the paper has no such "
    "experiment",
    commit="87ff975",
)

# The paper's regime: Split CIFAR-10 (5 tasks of 10,000 images), Split CIFAR-100 (10 of
# 5,000), Split Tiny-ImageNet (10 of 10,000) on ResNet-18 at batch 32 for the official epochs
# per task (CL-refresh-learning@7c90da5 utils/best_args.py; datasets/seq_*.py N_TASKS): SGD
# steps = tasks x ceil(n / 32) x epochs
PAPER_STEPS = {
    "cifar10": {"er": 5 * 313 * 50, "derpp": 5 * 313 * 50},
    "cifar100": {"er": 10 * 157 * 50, "derpp": 10 * 157 * 50},
    "tinyimg": {"er": 10 * 313 * 50, "derpp": 10 * 313 * 100},
}
PAPER_SETTING = (
    "Split CIFAR-10 / CIFAR-100 / Tiny-ImageNet (the benchmarks of paper Table 2) on "
    "ResNet-18 (width 64, 11.2M params), 50 epochs per task (DER++ on Tiny-ImageNet 100) at "
    "batch 32, buffer 500: 78,250 SGD steps on Split CIFAR-10, 78,500 on Split CIFAR-100 "
    "(joey-wang123/CL-refresh-learning@7c90da5 utils/best_args.py, datasets/seq_cifar10.py / "
    "seq_cifar100.py / seq_tinyimagenet.py)"
)


# The official step moves each tensor by delta = 1e-5 of its norm per SGD step (the code
# refreshes every iteration, derpp.py observe() at 7c90da5; the paper's experimental setup
# "runs every two iterations", quoted in the README: we follow the code), so the cumulative
# refresh displacement of a Split CIFAR-10 run is about 78,250 x 1e-5 = 0.78 of each tensor's
# norm; ours is the measured sum of |step| / |theta| per weight matrix
PAPER_CUMULATIVE = {d: {m: n * 1e-5 for m, n in by.items()} for d, by in PAPER_STEPS.items()}
# cost of the official 50 epochs per task on the default streams, from the default run of
# 2026-12-04 (7bd4b6c; 1 process, 1 thread): training took 26 s per seed for every arm of both
# streams at their own epochs (digits 5, gmm 2), linear in the epochs: 50 epochs is 10x
# (digits) and 25x (gmm), about 480 s per seed, 2,400 s for 5 seeds (~20 min on 2 workers),
# past the ~6 min of default wall time this package may take
FIFTY_EPOCHS_NOTE = (
    "the official 50 epochs per task (utils/best_args.py) on the default streams would take "
    "about 2,400 s of training for 5 seeds (10x digits' 5 epochs, 25x the mixture's 2; "
    "measured 26 s per seed at the default epochs) and still reach only 6,450 / 20,000 SGD "
    "steps, a cumulative refresh displacement of ~0.065 / 0.2 of each tensor's norm against "
    "the paper's ~0.78"
)


def regime(metrics: Metrics, preset, dataset: str, method: str) -> tuple[str, str]:
    """``paper`` on the paper's streams at their full ResNet-18 and the official number of SGD
    steps; else ``below`` with what the paper's effect needs and ours."""
    steps = metrics.mean(f"{dataset}/{method}/steps")
    need = PAPER_STEPS.get(dataset, {}).get(method)
    if need is not None and steps >= need and preset.width >= 64:
        return "paper", ""
    model = f"ResNet-18 width {preset.width}" if dataset in PAPER_STEPS else "an MLP"
    epochs = metrics.mean(f"{dataset}/{method}/epochs")
    ours = (
        f"ours {dataset}: {metrics.mean(f'{dataset}/{method}/tasks'):.0f} tasks on {model} "
        f"({metrics.mean(f'{dataset}/{method}/params'):,.0f} params), "
        f"{epochs:.0f} epoch{'' if epochs == 1 else 's'} per task at batch "
        f"{preset.batch_size}, buffer {preset.buffer_size}: {steps:.0f} SGD steps "
        f"({steps / PAPER_STEPS['cifar10']['er']:.1%} of a Split CIFAR-10 run); cumulative "
        f"refresh displacement per weight matrix {_cum(metrics, dataset, method + '+refresh')} "
        f"of its norm (paper: ~{PAPER_CUMULATIVE['cifar10']['derpp']:.2f}, 78,250 steps x "
        f"1e-5); {FIFTY_EPOCHS_NOTE}"
    )
    return "below", f"{PAPER_SETTING}; {ours}"


def _cum(metrics: Metrics, dataset: str, arm: str) -> str:
    """The cumulative refresh displacement of an arm's weight matrices (min-max over the
    tensors, mean over seeds), relative to each tensor's norm."""
    lo, hi = f"{dataset}/{arm}/cum_displacement_min", f"{dataset}/{arm}/cum_displacement_max"
    if lo not in metrics:
        return "n/a"
    return f"{metrics.mean(lo):.2g}-{metrics.mean(hi):.2g}"


def _acc(metrics: Metrics, dataset: str, arm: str) -> str:
    return metrics.fmt(f"{dataset}/{arm}/acc_cil", 4)


# ER + refresh is an extension: the official code has refresh in DER++ only (models/derpp.py at
# HEAD 7c90da5; models/er.py has no unlearn step)
EXTENSION = {"er": " (extension: the official code has refresh in DER++ only)"}


def make_claims(metrics: Metrics, preset,
                items: dict[str, dict[str, dict[int, list[float]]]]) -> tuple[list[Claim], list[Premise]]:  # fmt: skip
    """The claims and the premises they rest on; ``items[dataset][arm][seed]`` is every test
    example's final class-IL score of that arm (they average to its ``acc_cil``)."""
    claims, premises = [], []
    for d in preset.datasets:
        for m in preset.methods:
            ext = EXTENSION.get(m, "")
            ctl_arm = f"{m}+random-step"
            base_name, ref_name = f"{d}/{m}/acc_cil", f"{d}/{m}+refresh/acc_cil"
            base, ref = metrics.by_seed(base_name), metrics.by_seed(ref_name)
            ctl = metrics.by_seed(f"{d}/{ctl_arm}/acc_cil")
            its = items[d]
            trio = (its[f"{m}+refresh"], its[m], its[ctl_arm])
            gap = metrics.gap(ref_name, base_name)
            where, needs = regime(metrics, preset, d, m)
            steps = metrics.mean(f"{d}/{m}/steps")
            moved = (
                f"relative weight displacement of the final weights from {m}'s, "
                f"||theta - theta_{m}|| / ||theta_{m}||: refresh "
                f"{metrics.mean(f'{d}/{m}+refresh/weight_gap'):.2g}, random step "
                f"{metrics.mean(f'{d}/{ctl_arm}/weight_gap'):.2g}; cumulative refresh "
                f"displacement, the sum over its {steps:.0f} steps of |step| / |theta| per "
                f"weight matrix: {_cum(metrics, d, m + '+refresh')} (paper's setting: ~0.78)"
            )
            control = dict(control=ctl, control_name="random step of the official size")
            big = max(preset.scales)
            rests = ()
            if big > 1.0:
                arm = f"{m}+refresh{big:g}x"
                pid = f"large-step-hurts/{d}/{m}"
                rests = (pid,)
                premises.append(Premise(
                    id=pid,
                    statement=f"the unlearning step acts on accuracy: a {big:g}x refresh step "
                    f"lowers {m} class-IL accuracy below the baseline by more than 2 SE{ext}",
                    paper="none: the package's sanity check (the paper has no such experiment)",
                    measured=f"{arm} {_acc(metrics, d, arm)} vs {m} {_acc(metrics, d, m)}",
                    criterion=f"{m} class-IL accuracy (%) vs {arm}'s (the drop; SE over seeds "
                    "and the test examples)",
                    test=superiority(base, metrics.by_seed(f"{d}/{arm}/acc_cil"),
                                     margin=HURT_MARGIN, source=HURT_SOURCE,
                                     items=(its[m], its[arm])),
                ))  # fmt: skip
            claims.append(Claim(
                id=f"no-harm/{d}/{m}",
                statement=f"refresh (official step) improves or does not harm {m} class-IL "
                f"accuracy: at most {NO_HARM_POINTS:g} points below it, where neither a random "
                f"step of the same size nor refresh that never fires is{ext} (the second always "
                "passes: this claim can fail or be inconclusive, never hold)",
                paper=PAPER_TABLE2,
                measured=f"{m}+refresh {_acc(metrics, d, m + '+refresh')} vs {m} "
                f"{_acc(metrics, d, m)}; random step {_acc(metrics, d, ctl_arm)}",
                criterion=f"{m}+refresh class-IL accuracy (%) vs {m}'s (SE over seeds and the "
                "test examples); no-op controls, each through the same test: the official step "
                "size in a random direction, and refresh that never fires (the baseline arm)",
                test=all_of(
                    non_inferiority(ref, base, tolerance=NO_HARM_POINTS, source=NO_HARM_SOURCE,
                                    items=trio, **control),
                    # refresh that never fires is the baseline arm itself (issue 50)
                    non_inferiority(ref, base, tolerance=NO_HARM_POINTS, source=NO_HARM_SOURCE,
                                    items=(its[f"{m}+refresh"], its[m], its[m]), control=base,
                                    control_name="refresh never fires (the baseline itself)"),
                ),
                regime=where, needs=needs, test_set="shared", rests_on=rests, moved=moved,
            ))  # fmt: skip
            claims.append(Claim(
                id=f"improves/{d}/{m}",
                statement=f"refresh (official step) improves {m} class-IL accuracy by more "
                f"than 2 SE, where a random step of the same size does not{ext}",
                paper=PAPER_TABLE2,
                measured=f"gain {gap.mean:+.3g} class-IL points (random step "
                f"{metrics.gap(f'{d}/{ctl_arm}/acc_cil', base_name).mean:+.3g})",
                criterion=f"{m}+refresh class-IL accuracy (%) vs {m}'s (SE over seeds and the "
                "test examples); no-op control: the official step size in a random direction",
                test=superiority(ref, base, margin=IMPROVE_MARGIN, source=IMPROVE_SOURCE,
                                 items=trio, **control),
                regime=where, needs=needs, test_set="shared", moved=moved,
            ))  # fmt: skip
    return claims, premises


def make_checks(metrics: Metrics, preset) -> list[Check]:
    checks = []
    names = [n for n in metrics.names() if n.startswith("unified/") and n.endswith("abs_diff")]
    worst = max(max(metrics.values(n)) for n in names)
    checks.append(Check(
        id="unified-equals-standalone",
        statement="ER, DER, DER++, online EWC and LwF as Bregman instances of the unified "
        "objective give the standalone formulas' loss on the same batch and buffer draw",
        measured=f"max |unified - standalone| = {worst:.1e} over {len(names)} methods",
        criterion="max |unified - standalone| at most 1e-6",
        holds=worst <= 1e-6,
        why="Table 1: each method's loss is a Bregman divergence that equals its standalone "
        "formula algebraically; both are evaluated in float64 on the same batch and buffer draw",
    ))  # fmt: skip
    steps_ok, step_err, random_err = True, 0.0, 0.0
    for d in preset.datasets:
        for m in preset.methods:
            base = metrics.values(f"{d}/{m}/steps")
            arms = [f"{d}/{m}+refresh" + ("" if s == 1.0 else f"{s:g}x") for s in preset.scales]
            for arm in [*arms, f"{d}/{m}+random-step"]:
                steps_ok &= metrics.values(arm + "/steps") == base
                steps_ok &= metrics.values(arm + "/refresh_steps") == base
                if arm in arms and arm + "/step_rel_error" in metrics:
                    step_err = max(step_err, max(metrics.values(arm + "/step_rel_error")))
            random_err = max(random_err, max(metrics.values(f"{d}/{m}+random-step/step_rel_error")))
    checks.append(Check(
        id="equal-budgets",
        statement="with and without refresh (and with the random step), every arm takes the "
        "same SGD steps; refresh and the random step add one step per SGD step",
        measured="equal" if steps_ok else "differ",
        criterion="SGD and refresh step counts (counted in the training loop) equal on every seed",
        holds=bool(steps_ok),
        why="every arm runs the same epochs over the same batches (train_stream counts each "
        "SGD step; Refresh counts each unlearn call, made once per SGD step)",
    ))  # fmt: skip
    checks.append(Check(
        id="random-step-budget",
        statement="the no-op control spends the official step's budget: every weight matrix "
        "moves by delta * ||theta|| (first step of each run), in a random direction",
        measured=f"max relative error {random_err:.1e}",
        criterion="max relative error at most 1e-4",
        holds=random_err <= 1e-4,
        why="random_displacement scales a unit random vector to delta * ||theta_l|| per tensor "
        "(float32 rounding only)",
    ))  # fmt: skip
    if preset.variant.startswith("official"):
        checks.append(Check(
            id="refresh-step-size",
            statement="the official displacement of each weight matrix has norm "
            "scale * delta * ||theta|| (first refresh step of each run)",
            measured=f"max relative error {step_err:.1e}",
            criterion="max relative error at most 1%",
            holds=step_err <= 0.01,
            why="derpp.py's unlearn rescales each tensor's step to delta * ||theta_l||; only "
            "the 1e-3 noise and Fisher damping terms move it, by ~1e-3 relative",
        ))  # fmt: skip
    return checks

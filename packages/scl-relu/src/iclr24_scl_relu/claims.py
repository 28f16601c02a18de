"""The paper's claims and the code's checks, computed from the metrics.

A claim is a statement of the paper measured against its baseline (UFM without ReLU, batches
without binding, the network without the final ReLU); a check is an invariant of the code
that holds by construction. Neither is typed in: a claim's verdict (holds / fails /
inconclusive) comes from a test on per-seed values (see ``iclr24_common.verdicts``).

Where the baseline was measured at the same setting it is also run through a geometry
claim's test as its ``control`` (UFM without ReLU for UFM+, the unbound batches for binding):
a distance criterion that the baseline passes too could not tell the two apart.
"""

from __future__ import annotations

from dataclasses import replace

from iclr24_common import (
    Check,
    Claim,
    Metrics,
    all_of,
    non_inferiority,
    none_of,
    superiority,
    threshold,
)

from .geometry import etf_of_distance

# Distance (Frobenius, normalised Gram matrices) at which a run counts as reaching a geometry:
# the issue's tolerance; the converged UFM runs land at ~1e-6, far inside it.
TOL = 1e-2
# NC1 (within-class variability) that counts as collapse: the issue's tolerance.
NC1_TOL = 1e-6
# "Neither ETF nor OF": farther than half the ETF-OF distance at this k from both (0.160 for
# k = 10), fixed from the geometry alone (issue 38): the two balls of that radius do not overlap,
# and a geometry inside one of them is closer to that geometry than to the other (triangle
# inequality), so only a geometry outside both is attributable to neither. It replaces the
# ad-hoc 0.1 (lowered from the issue's 0.3 after a run; 0.3 is nearly the ETF-OF distance
# itself, 0.320 at k = 10).
FAR_FRACTION = 0.5
# The symmetry break in angles: majority-majority vs minority-minority class-mean angles
# differ by more than 5 degrees (our reading of a visible asymmetry, fixed before the default
# run; the paper states the break without a number).
ANGLE_GAP = 5.0
# Random batches that break the batch-graph condition end far from the OF: the issue's 0.3.
FAR_BATCH = 0.3
# "At the minimum": |loss - OF loss| of a run (sum of the anchors' losses; ~550 anchors here)
# below 1e-2: the float32 tolerance of the check of-is-a-lower-bound (set in v2), reused as it
# is, not tuned to the batched runs (issue 38). A run above it has not reached a global
# minimiser of its objective, so its geometry says nothing about the minimisers (stuck).
LOSS_TOL = 1e-2
# A network "at" the OF: ten times TOL (SGD on data does not reach the UFM's 1e-6). Also the
# margin by which the plain net must be farther from the OF ("without it they do not").
NET_OF = 0.1
# All-zero training embeddings (dead ReLU outputs) above 1 % would fake a collapse.
DEAD = 0.01
# "Without compromising test accuracy": non-inferior within 2 accuracy points (the v2 margin;
# five seeds resolve it, see Preset.seeds).
ACC_MARGIN = 0.02

# Searched: arXiv abs v1/v2, ar5iv, OpenReview AyXIDfvYg8, paperswithcode, an HTML mirror of
# the arXiv text (its section list only: setup App. E.1, accuracy App. E.7).
NOT_FOUND = "paper's number not found offline (abstract and section list only)"


def _max(m: Metrics, name: str) -> float:
    return max(m.values(name))


def _min(m: Metrics, name: str) -> float:
    return min(m.values(name))


def _seeds(m: Metrics, name: str) -> int:
    return len(m.values(name))


def _no_relu(m: Metrics, preset, r: float) -> tuple[dict[int, float] | None, str]:
    """UFM without ReLU at the same imbalance R (its distance to the OF), where it was run."""
    name = "ufm/balanced" if r == 1.0 else "ufm/imbalanced" if r == preset.ufm_imbalance else ""
    if name and f"{name}/dist_of" in m:
        return m.by_seed(f"{name}/dist_of"), f"UFM without ReLU at R = {r:g}"
    return None, ""


def make_claims(metrics: Metrics, preset) -> list[Claim]:
    m, claims = metrics, []
    worst = _max(m, "ufm/balanced/dist_etf")
    claims.append(Claim(
        id="ufm-balanced-etf",
        statement="balanced classes, no ReLU: the class means of the SCL minimiser form a "
        "simplex ETF (the known symmetric geometry)",
        paper="abstract: 'both losses yield symmetric training representations under balanced "
        f"data' (Graf et al. 2021); {NOT_FOUND}",
        measured=f"distance to ETF {m.fmt('ufm/balanced/dist_etf', 2)} (max {worst:.1e}); "
        f"to OF {m.fmt('ufm/balanced/dist_of', 3)}",
        criterion=f"per seed, the distance of the class-mean geometry to the simplex ETF "
        f"(reached: below {TOL:g})",
        test=threshold(m.by_seed("ufm/balanced/dist_etf"), threshold=TOL, higher_is_better=False),
    ))  # fmt: skip
    gap = m.gap("ufm/imbalanced/angle_maj_maj", "ufm/imbalanced/angle_min_min")
    far = FAR_FRACTION * etf_of_distance(preset.classes)
    claims.append(Claim(
        id="ufm-imbalanced-asymmetric",
        statement=f"imbalanced classes (R = {preset.ufm_imbalance:g}), no ReLU: the symmetry "
        "breaks: the geometry is neither an ETF nor an OF",
        paper=f"abstract: 'this symmetry breaks under class imbalances'; {NOT_FOUND}",
        measured=f"distance to ETF {m.fmt('ufm/imbalanced/dist_etf', 3)}, to OF "
        f"{m.fmt('ufm/imbalanced/dist_of', 3)}; angles majority-majority "
        f"{m.fmt('ufm/imbalanced/angle_maj_maj', 4)} deg, minority-minority "
        f"{m.fmt('ufm/imbalanced/angle_min_min', 4)} deg (gap {gap})",
        criterion=f"all of: per seed, the distances to the ETF and to the OF (each above "
        f"{far:.3f}, half the ETF-OF distance at k = {preset.classes}); the "
        f"majority-majority vs minority-minority class-mean angle (degrees, apart by more "
        f"than {ANGLE_GAP:g})",
        test=all_of(
            threshold(m.by_seed("ufm/imbalanced/dist_etf"), threshold=far),
            threshold(m.by_seed("ufm/imbalanced/dist_of"), threshold=far),
            superiority(m.by_seed("ufm/imbalanced/angle_maj_maj"),
                        m.by_seed("ufm/imbalanced/angle_min_min"), margin=ANGLE_GAP),
        ),
    ))  # fmt: skip
    for r in preset.ufm_ratios:
        g = f"ufm+/R{r:g}"
        dist, col = _max(m, f"{g}/dist_of"), _max(m, f"{g}/nc1")
        control, control_name = _no_relu(m, preset, r)
        claims.append(Claim(
            id=f"ufm+-orthogonal-frame-R{r:g}",
            statement=f"UFM+ (ReLU), R = {r:g}: the SCL minimiser collapses to an orthogonal "
            "frame whatever the class sizes (Thm 1)",
            paper=f"Thm 1 (a proof, no figure value); {NOT_FOUND}",
            measured=f"distance to OF max {dist:.1e} (UFM without ReLU at R = "
            f"{preset.ufm_imbalance:g}: {m.fmt('ufm/imbalanced/dist_of', 3)}); NC1 max {col:.1e}; "
            f"loss - OF value {m.fmt(f'{g}/loss_minus_of', 2)}",
            criterion=f"all of: per seed, the distance to the OF (reached: below {TOL:g}) and NC1 "
            f"(collapsed: below {NC1_TOL:g})"
            + (f"; control for the distance: {control_name}" if control else ""),
            test=all_of(
                threshold(m.by_seed(f"{g}/dist_of"), threshold=TOL, higher_is_better=False,
                          control=control, control_name=control_name or "control"),
                threshold(m.by_seed(f"{g}/nc1"), threshold=NC1_TOL, higher_is_better=False),
            ),
        ))  # fmt: skip
    rnd, bnd = "batching/random", "batching/binding"
    at_min = threshold({s: abs(v) for s, v in m.by_seed(f"{rnd}/loss_minus_of").items()},
                       threshold=LOSS_TOL, higher_is_better=False)  # fmt: skip
    geometry_test = all_of(
        none_of(m.by_seed(f"{rnd}/graph_holds")),
        at_min,
        threshold(m.by_seed(f"{rnd}/dist_of"), threshold=FAR_BATCH),
    )
    if not at_min.holds:  # not at a global minimiser: its geometry is no evidence either way
        geometry_test = replace(geometry_test, outcome="inconclusive",
                                reason="optimiser stuck: |loss - OF loss| not below "
                                f"{LOSS_TOL:g} by 2 SE, so the run is not at a minimiser "
                                f"({geometry_test.reason})")  # fmt: skip
    claims.append(Claim(
        id="batching-random-not-of",
        statement=f"mini-batches: on a fixed set of small random batches (size "
        f"{preset.batch_size}, R = {preset.batch_ratio:g}) that break the batch-graph condition, "
        "UFM+ reaches a second global minimiser that is not the orthogonal frame (Thm 2)",
        paper=f"Thm 2 and Section 5 (statements, no figure value); {NOT_FOUND}",
        measured=f"loss - OF loss (sum_B L_B) {m.fmt(f'{rnd}/loss_minus_of', 2)} (with binding "
        f"{m.fmt(f'{bnd}/loss_minus_of', 2)}); distance to OF {m.fmt(f'{rnd}/dist_of', 3)}; "
        f"classes with a split batch graph {m.fmt(f'{rnd}/graph_split_classes', 3)}; class "
        f"pairs never contrasted {m.fmt(f'{rnd}/graph_pairs_missing', 3)}",
        criterion=f"all of: the batch-graph condition holds on no seed (a count of seeds, "
        f"below 0.5); |loss - OF loss| of the batched objective (at a global minimiser: below "
        f"{LOSS_TOL:g}; if not, the optimiser is stuck and the verdict is inconclusive); the "
        f"distance to the OF: above {FAR_BATCH:g}",
        test=geometry_test,
    ))  # fmt: skip
    claims.append(Claim(
        id="batching-binding-of",
        statement="the same batches with k binding examples (one per class) appended: UFM+ "
        "reaches the orthogonal frame (Cor. 2.1, batch-binding)",
        paper=f"Section 5.2 (statement, no figure value); {NOT_FOUND}",
        measured=f"distance to OF max {_max(m, f'{bnd}/dist_of'):.1e} (without binding "
        f"{m.fmt(f'{rnd}/dist_of', 3)}); NC1 max {_max(m, f'{bnd}/nc1'):.1e}",
        criterion=f"per seed, the distance to the OF with binding (reached: below {TOL:g}); "
        "control: the same batches without binding",
        test=threshold(m.by_seed(f"{bnd}/dist_of"), threshold=TOL, higher_is_better=False,
                       control=m.by_seed(f"{rnd}/dist_of"), control_name="without binding"),
    ))  # fmt: skip
    claims += _network_claims(m, preset)
    return claims


def _network_claims(m: Metrics, preset) -> list[Claim]:
    claims = []
    if not {"plain", "relu"} <= set(preset.net_variants):
        return claims
    for r in preset.net_ratios:
        for tau in preset.net_temperatures:
            g = f"net-R{r:g}-tau{tau:g}"
            relu, plain = f"{g}/relu", f"{g}/plain"
            gap = m.gap(f"{plain}/dist_of", f"{relu}/dist_of")
            dead = _max(m, f"{relu}/zero_rows_train")
            extra = ""
            if f"{g}/relu+bind/dist_of" in m:
                extra = f"; with binding {m.fmt(f'{g}/relu+bind/dist_of', 3)}"
            claims.append(Claim(
                id=f"net-relu-orthogonal-frame-R{r:g}-tau{tau:g}",
                statement=f"{preset.data}, R = {r:g}, tau = {tau:g}: with a ReLU on the last "
                "layer the training embeddings approach an orthogonal frame; without it they "
                "do not",
                paper=f"abstract: 'the introduction of a ReLU activation at the final layer "
                f"effectively restores the symmetry'; {NOT_FOUND}",
                measured=f"distance to OF with ReLU {m.fmt(f'{relu}/dist_of', 3)}{extra}, without "
                f"{m.fmt(f'{plain}/dist_of', 3)} (gap {gap}); dead embeddings {dead:.3f}; NC1 "
                f"{m.fmt(f'{relu}/nc1', 2)}",
                criterion=f"all of: per seed, the ReLU net's distance to the OF (at it: below "
                f"{NET_OF:g}); the ReLU net's distance vs the plain net's (closer by more than "
                f"{NET_OF:g}); the ReLU net's fraction of all-zero training embeddings (below "
                f"{DEAD:g})",
                test=all_of(
                    threshold(m.by_seed(f"{relu}/dist_of"), threshold=NET_OF,
                              higher_is_better=False),
                    superiority(m.by_seed(f"{relu}/dist_of"), m.by_seed(f"{plain}/dist_of"),
                                margin=NET_OF, higher_is_better=False),
                    threshold(m.by_seed(f"{relu}/zero_rows_train"), threshold=DEAD,
                              higher_is_better=False),
                ),
            ))  # fmt: skip
            ncc = m.gap(f"{relu}/ncc_acc", f"{plain}/ncc_acc")
            probe = m.gap(f"{relu}/probe_acc", f"{plain}/probe_acc")
            claims.append(Claim(
                id=f"net-relu-accuracy-R{r:g}-tau{tau:g}",
                statement=f"{preset.data}, R = {r:g}, tau = {tau:g}: the ReLU does not cost test "
                "accuracy",
                paper="abstract: 'the inclusion of the ReLU activation restores symmetry without "
                f"compromising test accuracy' (numbers in its App. E.7); {NOT_FOUND}",
                measured=f"nearest-class-mean accuracy ReLU {m.fmt(f'{relu}/ncc_acc', 3)} vs "
                f"{m.fmt(f'{plain}/ncc_acc', 3)} (gap {ncc}); linear probe "
                f"{m.fmt(f'{relu}/probe_acc', 3)} vs {m.fmt(f'{plain}/probe_acc', 3)} (gap {probe})",
                criterion="all of: the ReLU net's test accuracy vs the plain net's, for the "
                f"nearest-class-mean classifier and for the linear probe (non-inferior within "
                f"{ACC_MARGIN:g})",
                test=all_of(*(non_inferiority(m.by_seed(f"{relu}/{a}"), m.by_seed(f"{plain}/{a}"),
                                              tolerance=ACC_MARGIN)
                              for a in ("ncc_acc", "probe_acc"))),
            ))  # fmt: skip
    return claims


def make_checks(metrics: Metrics, preset) -> list[Check]:
    m, checks = metrics, []
    plus = [f"ufm+/R{r:g}" for r in preset.ufm_ratios] + ["batching/random", "batching/binding"]
    low = min(_min(m, f"{g}/min_entry") for g in plus)
    err = max(_max(m, f"{g}/norm_error") for g in plus)
    checks.append(Check(
        id="ufm+-feasible",
        statement="every UFM+ embedding is entry-wise non-negative and of unit norm",
        measured=f"min entry {low:.1e}, max | ||h|| - 1 | {err:.1e}",
        criterion=">= 0 and < 1e-5 on every run",
        holds=low >= 0 and err < 1e-5,
        why="UFM+ follows every gradient step by the projection onto {h >= 0, ||h|| = 1} "
        "(project_nonneg_sphere); 1e-5 is float32 rounding",
    ))  # fmt: skip
    worst = min(_min(m, f"{g}/loss_minus_of") for g in plus)
    checks.append(Check(
        id="of-is-a-lower-bound",
        statement="no UFM+ run ends below the loss of the orthogonal frame (Thm 1's minimum; "
        "with batches, sum_B L_B at the OF)",
        measured=f"min (loss - OF value) {worst:.2e}",
        criterion=">= -1e-2 (float32 sums over ~10^3 anchors)",
        holds=worst >= -1e-2,
        why="Thm 1: the OF's loss value is the global minimum of the full-batch UFM+ loss, and "
        "of each batch's loss, hence of their sum, so no feasible point lies below it (1e-2 "
        "covers float32 sums)",
    ))  # fmt: skip
    checks.append(Check(
        id="binding-meets-the-condition",
        statement="batches with binding examples meet the batch-graph condition (Cor. 2.1)",
        measured=f"condition holds on {sum(m.values('batching/binding/graph_holds')):g} of "
        f"{_seeds(m, 'batching/binding/graph_holds')} seeds",
        criterion="on every seed",
        holds=_min(m, "batching/binding/graph_holds") == 1,
        why="Cor. 2.1: bind() appends one example of every class to every batch, which connects "
        "each class's batch graph and contrasts every pair of classes",
    ))  # fmt: skip
    for r in preset.net_ratios:
        for tau in preset.net_temperatures:
            g = f"net-R{r:g}-tau{tau:g}"
            epochs = {v: m.values(f"{g}/{v}/epochs") for v in preset.net_variants}
            same = len({tuple(e) for e in epochs.values()}) == 1
            checks.append(Check(
                id=f"same-budget-R{r:g}-tau{tau:g}",
                statement="every network variant trains for the same epochs, batch and schedule",
                measured=", ".join(f"{v}: {e[0]:g}" for v, e in epochs.items()),
                criterion="equal epochs on every seed",
                holds=same and all(e[0] == preset.net_epochs for e in epochs.values()),
                why="every variant trains with one TrainConfig(epochs=preset.net_epochs, ...) and "
                "train_scl runs all its epochs (no early stop)",
            ))  # fmt: skip
            for v in preset.net_variants:
                if v.endswith("+bind"):
                    ok = _min(m, f"{g}/{v}/binding_in_every_batch") == 1
                    checks.append(Check(
                        id=f"sampler-binds-{v}-R{r:g}-tau{tau:g}",
                        statement="the sampler appends the k binding examples to every batch "
                        "and never draws them otherwise",
                        measured=f"on every seed: {ok}",
                        criterion="true on every seed",
                        holds=ok,
                        why="BatchBindingSampler appends its binding indices to each batch and "
                        "removes them from the pool it reshuffles",
                    ))  # fmt: skip
    return checks

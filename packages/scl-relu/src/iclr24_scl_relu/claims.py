"""The paper's claims, the premises they rest on and the code's checks, computed from the
metrics.

A claim is a statement of the paper measured against its baseline (UFM without ReLU, batches
without binding, the network without the final ReLU); a premise is a precondition that is not
the paper's statement (the random batches break the batch-graph condition, the batched run is
at a minimiser, no dead ReLU embeddings); a check is an invariant of the code that holds by
construction. None is typed in: a verdict (holds / fails / inconclusive) comes from a test on
per-seed values (see ``iclr24_common.verdicts``), and every margin says where it comes from.

Where the baseline was measured at the same setting it is also run through a geometry
claim's test as its ``control`` (UFM without ReLU for UFM+, the unbound batches for binding):
a distance criterion that the baseline passes too could not tell the two apart. The network
claims' no-op arm is the ReLU network at its initialisation, never trained
(``CONTROL``): if it passes the accuracy test too, that test cannot tell SCL
training from none.

Regime: the UFM claims are the paper's theorems (Thms 1-2, Cor. 2.1) tested on the paper's own
model, optimised to its minimiser (``paper``). The network claims are stated on ResNets /
DenseNets trained on CIFAR-10/100 (``below``: ours is an MLP on 670 digit images).
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
    none_of,
    superiority,
    threshold,
)

from .geometry import etf_of_distance

# Distance (Frobenius, normalised Gram matrices) at which a run counts as reaching a geometry:
# the issue's tolerance; the converged UFM runs land at ~1e-6, far inside it.
TOL = 1e-2
TOL_SOURCE = Source.ours(
    "the first issue's tolerance for 'reaches a geometry': a normalised Gram distance of 1 %; "
    "Thms 1-2 state exact equality, and the converged UFM runs land at ~1e-6",
    commit="ee56b47",
)  # fmt: skip
# NC1 (within-class variability) that counts as collapse: the issue's tolerance.
NC1_TOL = 1e-6
NC1_SOURCE = Source.ours(
    "the first issue's tolerance for collapse (Thm 1: every example of a class at its mean, "
    "NC1 = 0 exactly; float64 runs land at ~1e-15)",
    commit="ee56b47",
)  # fmt: skip
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
ANGLE_SOURCE = Source.ours(
    "our reading of a visible asymmetry between the majority and minority class-mean angles; "
    "the paper states the break without a number",
    commit="ee56b47",
)  # fmt: skip
# Random batches that break the batch-graph condition end far from the OF: the issue's 0.3.
FAR_BATCH = 0.3
FAR_BATCH_SOURCE = Source.ours(
    "the first issue's 0.3 for 'not the OF' (30 times TOL, nearly the ETF-OF distance 0.320 "
    "at k = 10); Thm 2 states that another minimiser exists, not how far it lies",
    commit="ee56b47",
)  # fmt: skip
# "At the minimum": |loss - OF loss| of a run (sum of the anchors' losses; ~550 anchors here)
# below 1e-2: the float32 tolerance of the check of-is-a-lower-bound (set in v2), reused as it
# is, not tuned to the batched runs (issue 38). A run above it has not reached a global
# minimiser of its objective, so its geometry says nothing about the minimisers (stuck).
LOSS_TOL = 1e-2
LOSS_SOURCE = Source.ours(
    "the float32 tolerance of the check of-is-a-lower-bound (sums over ~10^3 anchors), reused "
    "unchanged for the batched runs (issue 38)",
    commit="66e48e6",
)  # fmt: skip
# A network "at" the OF: ten times TOL (SGD on data does not reach the UFM's 1e-6). Also the
# margin by which the plain net must be farther from the OF ("without it they do not").
NET_OF = 0.1
NET_OF_SOURCE = Source.ours(
    "ten times the UFM's TOL: SGD on data does not reach the UFM's 1e-6, and the plain net "
    "must be this much farther ('without it they do not'); the paper's figures give no number",
    commit="ee56b47",
)  # fmt: skip
# All-zero training embeddings (dead ReLU outputs) above 1 % would fake a collapse.
DEAD = 0.01
DEAD_SOURCE = Source.ours(
    "1 % of the training embeddings all-zero (dead ReLU outputs, which normalise to nothing) "
    "would fake a collapse onto few directions",
    commit="bbaa615",
)  # fmt: skip
# "Without compromising test accuracy": non-inferior within 2 accuracy points (the v2 margin;
# five seeds resolve it, see Preset.seeds).
ACC_MARGIN = 0.02
ACC_SOURCE = Source.ours(
    "2 accuracy points for 'without compromising test accuracy': the paper's accuracy table "
    "(App. E.7) was not reachable, so no margin of its own could be read; a gap five seeds "
    "resolve on digits",
    commit="ee56b47",
)  # fmt: skip
# What the paper's network effect is stated on, and ours (the regime of the network claims).
NET_NEEDS = (
    "deep CNNs trained with SCL on STEP-imbalanced CIFAR-10/100 (R 10, 100; 5,000 / 500 images "
    "per majority class) (paper Sec. 3 and App. E.1 by its section list, which also names MLP "
    "experiments, App. E.3.4, setting not reachable; the paper preset's ResNet-18: 11M params; "
    "SupContrast's recipe, HobbitLong/SupContrast@66a8fe5 README and main_supcon.py: batch "
    "1024, lr 0.5, tau 0.1, 1000 epochs); ours an MLP 64-256-256-64 (0.1M params) on 670 8x8 "
    "digit images, 500 epochs at batch 128"
)

CONTROL = "untrained"
"""The no-op arm of the network claims: the ReLU network at its initialisation (the same
seed, hence the same weights the "relu" arm starts from), never trained."""

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


def make_claims(metrics: Metrics, preset, items: dict | None = None) -> list[Claim]:
    """The claims; ``items`` maps (``group/variant``, ``ncc_acc`` | ``probe_acc``) to each
    seed's per-test-item scores (needed where every seed is scored on one test set: CIFAR)."""
    m, claims = metrics, []
    worst = _max(m, "ufm/balanced/dist_etf")
    claims.append(Claim(
        id="ufm-balanced-etf",
        statement="balanced classes, no ReLU: the class means of the SCL minimiser form a "
        f"simplex ETF (the known symmetric geometry): distance to it below {TOL:g}",
        paper="abstract: 'both losses yield symmetric training representations under balanced "
        f"data' (Graf et al. 2021); {NOT_FOUND}",
        measured=f"distance to ETF {m.fmt('ufm/balanced/dist_etf', 2)} (max {worst:.1e}); "
        f"to OF {m.fmt('ufm/balanced/dist_of', 3)}",
        criterion=f"per seed, the distance of the class-mean geometry to the simplex ETF "
        f"(reached: below {TOL:g})",
        test=threshold(m.by_seed("ufm/balanced/dist_etf"), threshold=TOL, higher_is_better=False,
                       source=TOL_SOURCE),
        regime="paper", test_set="none",
    ))  # fmt: skip
    gap = m.gap("ufm/imbalanced/angle_maj_maj", "ufm/imbalanced/angle_min_min")
    d_eo = etf_of_distance(preset.classes)
    far = FAR_FRACTION * d_eo
    far_source = Source.derived(
        f"half the ETF-OF distance at k = {preset.classes}: 0.5 sqrt(2 - 2 sqrt((k - 1) / k)) = "
        f"0.5 x {d_eo:.3f} = {far:.3f}; the balls of that radius around the ETF and the OF do "
        "not overlap, so only a geometry outside both is neither (triangle inequality)")  # fmt: skip
    claims.append(Claim(
        id="ufm-imbalanced-asymmetric",
        statement=f"imbalanced classes (R = {preset.ufm_imbalance:g}), no ReLU: the symmetry "
        "breaks: the geometry is neither an ETF nor an OF (farther than half their distance "
        f"from both) and the majority and minority angles differ by more than {ANGLE_GAP:g} deg",
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
            threshold(m.by_seed("ufm/imbalanced/dist_etf"), threshold=far, source=far_source),
            threshold(m.by_seed("ufm/imbalanced/dist_of"), threshold=far, source=far_source),
            superiority(m.by_seed("ufm/imbalanced/angle_maj_maj"),
                        m.by_seed("ufm/imbalanced/angle_min_min"), margin=ANGLE_GAP,
                        source=ANGLE_SOURCE),
        ),
        regime="paper", test_set="none",
    ))  # fmt: skip
    for r in preset.ufm_ratios:
        g = f"ufm+/R{r:g}"
        dist, col = _max(m, f"{g}/dist_of"), _max(m, f"{g}/nc1")
        control, control_name = _no_relu(m, preset, r)
        claims.append(Claim(
            id=f"ufm+-orthogonal-frame-R{r:g}",
            statement=f"UFM+ (ReLU), R = {r:g}: the SCL minimiser collapses to an orthogonal "
            f"frame whatever the class sizes (Thm 1): distance to it below {TOL:g}, NC1 below "
            f"{NC1_TOL:g}",
            paper=f"Thm 1 (a proof, no figure value); {NOT_FOUND}",
            measured=f"distance to OF max {dist:.1e} (UFM without ReLU at R = "
            f"{preset.ufm_imbalance:g}: {m.fmt('ufm/imbalanced/dist_of', 3)}); NC1 max {col:.1e}; "
            f"loss - OF value {m.fmt(f'{g}/loss_minus_of', 2)}",
            criterion=f"all of: per seed, the distance to the OF (reached: below {TOL:g}) and NC1 "
            f"(collapsed: below {NC1_TOL:g})"
            + (f"; control for the distance: {control_name}" if control else ""),
            test=all_of(
                threshold(m.by_seed(f"{g}/dist_of"), threshold=TOL, higher_is_better=False,
                          control=control, control_name=control_name or "control",
                          source=TOL_SOURCE),
                threshold(m.by_seed(f"{g}/nc1"), threshold=NC1_TOL, higher_is_better=False,
                          source=NC1_SOURCE),
            ),
            regime="paper", test_set="none",
        ))  # fmt: skip
    rnd, bnd = "batching/random", "batching/binding"
    claims.append(Claim(
        id="batching-random-not-of",
        statement=f"mini-batches: on a fixed set of small random batches (size "
        f"{preset.batch_size}, R = {preset.batch_ratio:g}) that break the batch-graph condition, "
        "UFM+ reaches a second global minimiser that is not the orthogonal frame (Thm 2): "
        f"farther than {FAR_BATCH:g} from it",
        paper=f"Thm 2 and Section 5 (statements, no figure value); {NOT_FOUND}",
        measured=f"distance to OF {m.fmt(f'{rnd}/dist_of', 3)} (with binding "
        f"{m.fmt(f'{bnd}/dist_of', 2)}); loss - OF loss (sum_B L_B) "
        f"{m.fmt(f'{rnd}/loss_minus_of', 2)}",
        criterion=f"per seed, the distance of the unbound batched run to the OF (above "
        f"{FAR_BATCH:g}); it rests on the batches breaking the condition and on the run being at "
        "a global minimiser of its batched objective (premises)",
        test=threshold(m.by_seed(f"{rnd}/dist_of"), threshold=FAR_BATCH,
                       source=FAR_BATCH_SOURCE),
        regime="paper", test_set="none",
        rests_on=("random-batches-break-the-condition", "batched-run-at-a-minimiser"),
    ))  # fmt: skip
    claims.append(Claim(
        id="batching-binding-of",
        statement="the same batches with k binding examples (one per class) appended: UFM+ "
        f"reaches the orthogonal frame (Cor. 2.1, batch-binding): distance below {TOL:g}",
        paper=f"Section 5.2 (statement, no figure value); {NOT_FOUND}",
        measured=f"distance to OF max {_max(m, f'{bnd}/dist_of'):.1e} (without binding "
        f"{m.fmt(f'{rnd}/dist_of', 3)}); NC1 max {_max(m, f'{bnd}/nc1'):.1e}",
        criterion=f"per seed, the distance to the OF with binding (reached: below {TOL:g}); "
        "control: the same batches without binding",
        test=threshold(m.by_seed(f"{bnd}/dist_of"), threshold=TOL, higher_is_better=False,
                       control=m.by_seed(f"{rnd}/dist_of"), control_name="without binding",
                       source=TOL_SOURCE),
        regime="paper", test_set="none",
    ))  # fmt: skip
    claims += _network_claims(m, preset, items or {})
    return claims


def make_premises(metrics: Metrics, preset) -> list[Premise]:
    """What the claims rest on and the paper does not state: Thm 2's reading needs batches
    that break the condition and a run at a global minimiser of its batched objective; a
    network's geometry needs live ReLU embeddings."""
    m, rnd = metrics, "batching/random"
    premises = [
        Premise(
            id="random-batches-break-the-condition",
            statement="the fixed random batches break Thm 2's batch-graph condition on every "
            "seed (otherwise the OF would be the unique minimiser and nothing else is predicted)",
            paper="Thm 2: the condition is necessary and sufficient for a unique OF minimiser",
            measured=f"condition holds on {sum(m.values(f'{rnd}/graph_holds')):g} of "
            f"{_seeds(m, f'{rnd}/graph_holds')} seeds; classes with a split batch graph "
            f"{m.fmt(f'{rnd}/graph_split_classes', 3)}; class pairs never contrasted "
            f"{m.fmt(f'{rnd}/graph_pairs_missing', 3)}",
            criterion="the number of seeds whose random batches meet the condition (exact count)",
            test=none_of(m.by_seed(f"{rnd}/graph_holds")),
        ),
        Premise(
            id="batched-run-at-a-minimiser",
            statement="the unbound batched UFM+ run ends at a global minimiser of its objective "
            f"sum_B L_B: |loss - OF loss| below {LOSS_TOL:g} (the OF minimises every L_B, so its "
            "value is the minimum); a run above it is stuck, and its geometry says nothing about "
            "the minimisers",
            paper="Thm 2 speaks of the global minimisers of sum_B L_B",
            measured=f"loss - OF loss {m.fmt(f'{rnd}/loss_minus_of', 2)} (with binding "
            f"{m.fmt('batching/binding/loss_minus_of', 2)})",
            criterion=f"per seed, |loss - OF loss| of the batched objective (below {LOSS_TOL:g})",
            test=threshold({s: abs(v) for s, v in m.by_seed(f"{rnd}/loss_minus_of").items()},
                           threshold=LOSS_TOL, higher_is_better=False, source=LOSS_SOURCE),
        ),
    ]  # fmt: skip
    if {"plain", "relu"} <= set(preset.net_variants):
        for r in preset.net_ratios:
            for tau in preset.net_temperatures:
                g = f"net-R{r:g}-tau{tau:g}/relu"
                worst = _max(m, f"{g}/zero_rows_train")
                premises.append(Premise(
                    id=f"live-embeddings-R{r:g}-tau{tau:g}",
                    statement="the ReLU network's training embeddings are alive: at most "
                    f"{DEAD:.0%} are all-zero on any seed (dead ReLU outputs would fake a "
                    "collapse)",
                    paper="none: a precondition of reading the geometry",
                    measured=f"all-zero training embeddings: worst seed {worst:.3f} (test "
                    f"{_max(m, f'{g}/zero_rows_test'):.3f})",
                    criterion=f"the worst seed's fraction of all-zero training embeddings (one "
                    f"value, below {DEAD:g})",
                    test=threshold([worst], threshold=DEAD, higher_is_better=False,
                                   source=DEAD_SOURCE),
                ))  # fmt: skip
    return premises


def _accuracy_test(m: Metrics, preset, relu: str, plain: str, control: str, acc: str,
                   items: dict):  # fmt: skip
    """Non-inferiority of the ReLU net's test accuracy to the plain net's, with the untrained
    ReLU net as the no-op arm; on a shared test set (CIFAR) with the per-item scores."""
    shared = preset.data != "digits"
    it = None
    if shared:
        it = tuple(items[(v, acc)] for v in (relu, plain, control))
    return non_inferiority(m.by_seed(f"{relu}/{acc}"), m.by_seed(f"{plain}/{acc}"),
                           tolerance=ACC_MARGIN, source=ACC_SOURCE,
                           control=m.by_seed(f"{control}/{acc}"),
                           control_name="the ReLU net untrained", items=it)  # fmt: skip


def _network_claims(m: Metrics, preset, items: dict) -> list[Claim]:
    claims = []
    if not {"plain", "relu"} <= set(preset.net_variants):
        return claims
    test_set = "per-seed" if preset.data == "digits" else "shared"  # digits: split per seed
    for r in preset.net_ratios:
        for tau in preset.net_temperatures:
            g = f"net-R{r:g}-tau{tau:g}"
            relu, plain, ctl = f"{g}/relu", f"{g}/plain", f"{g}/{CONTROL}"
            gap = m.gap(f"{plain}/dist_of", f"{relu}/dist_of")
            extra = ""
            if f"{g}/relu+bind/dist_of" in m:
                extra = f"; with binding {m.fmt(f'{g}/relu+bind/dist_of', 3)}"
            claims.append(Claim(
                id=f"net-relu-orthogonal-frame-R{r:g}-tau{tau:g}",
                statement=f"{preset.data}, R = {r:g}, tau = {tau:g}: with a ReLU on the last "
                f"layer the training embeddings approach an orthogonal frame (closer than "
                f"{NET_OF:g}); without it they do not (farther by more than {NET_OF:g})",
                paper=f"abstract: 'the introduction of a ReLU activation at the final layer "
                f"effectively restores the symmetry'; {NOT_FOUND}",
                measured=f"distance to OF with ReLU {m.fmt(f'{relu}/dist_of', 3)}{extra}, without "
                f"{m.fmt(f'{plain}/dist_of', 3)} (gap {gap}), untrained ReLU net "
                f"{m.fmt(f'{ctl}/dist_of', 3)}; NC1 {m.fmt(f'{relu}/nc1', 2)}",
                criterion=f"all of: per seed, the ReLU net's distance to the OF (at it: below "
                f"{NET_OF:g}; control: the ReLU net untrained); the ReLU net's distance vs the "
                f"plain net's (closer by more than {NET_OF:g})",
                test=all_of(
                    threshold(m.by_seed(f"{relu}/dist_of"), threshold=NET_OF,
                              higher_is_better=False, source=NET_OF_SOURCE,
                              control=m.by_seed(f"{ctl}/dist_of"),
                              control_name="the ReLU net untrained"),
                    superiority(m.by_seed(f"{relu}/dist_of"), m.by_seed(f"{plain}/dist_of"),
                                margin=NET_OF, higher_is_better=False, source=NET_OF_SOURCE),
                ),
                regime="below", needs=NET_NEEDS, test_set="none",
                rests_on=(f"live-embeddings-R{r:g}-tau{tau:g}",),
                moved=f"SCL training moved the ReLU net from {m.mean(f'{ctl}/dist_of'):.3f} "
                f"(untrained) to {m.mean(f'{relu}/dist_of'):.3f} from the OF",
            ))  # fmt: skip
            ncc = m.gap(f"{relu}/ncc_acc", f"{plain}/ncc_acc")
            probe = m.gap(f"{relu}/probe_acc", f"{plain}/probe_acc")
            claims.append(Claim(
                id=f"net-relu-accuracy-R{r:g}-tau{tau:g}",
                statement=f"{preset.data}, R = {r:g}, tau = {tau:g}: the ReLU does not cost test "
                f"accuracy: the ReLU net's accuracy is within {ACC_MARGIN:.0%} of the plain "
                "net's (nearest class mean and linear probe)",
                paper="abstract: 'the inclusion of the ReLU activation restores symmetry without "
                f"compromising test accuracy' (numbers in its App. E.7); {NOT_FOUND}",
                measured=f"nearest-class-mean accuracy ReLU {m.fmt(f'{relu}/ncc_acc', 3)} vs "
                f"{m.fmt(f'{plain}/ncc_acc', 3)} (gap {ncc}), untrained "
                f"{m.fmt(f'{ctl}/ncc_acc', 3)}; linear probe {m.fmt(f'{relu}/probe_acc', 3)} vs "
                f"{m.fmt(f'{plain}/probe_acc', 3)} (gap {probe}), untrained "
                f"{m.fmt(f'{ctl}/probe_acc', 3)}",
                criterion="all of: the ReLU net's test accuracy vs the plain net's, for the "
                f"nearest-class-mean classifier and for the linear probe (non-inferior within "
                f"{ACC_MARGIN:g}); control: the ReLU net untrained, through the same test",
                test=all_of(*(_accuracy_test(m, preset, relu, plain, ctl, a, items)
                              for a in ("ncc_acc", "probe_acc"))),
                regime="below", needs=NET_NEEDS, test_set=test_set,
                moved=f"SCL training moved the ReLU net's accuracy from the untrained net's "
                f"{m.mean(f'{ctl}/ncc_acc'):.3f} (NCC) / {m.mean(f'{ctl}/probe_acc'):.3f} (probe) "
                f"to {m.mean(f'{relu}/ncc_acc'):.3f} / {m.mean(f'{relu}/probe_acc'):.3f}",
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

"""The paper's claims and the code's checks, computed from the metrics.

A claim is a statement of the paper measured against its baseline (UFM without ReLU, batches
without binding, the network without the final ReLU); a check is an invariant of the code.
Neither is typed in: ``holds`` comes from the numbers.
"""

from __future__ import annotations

from iclr24_common import Check, Claim, Metrics

TOL = 1e-2  # distance to a geometry that counts as reaching it (issue)
NC1_TOL = 1e-6  # collapse (issue)
FAR = 0.1  # "neither": ten times TOL (the OF and the ETF are only 0.32 apart for k = 10)
ANGLE_GAP = 5.0  # degrees between majority-majority and minority-minority angles
FAR_BATCH = 0.3  # random batches: far from the OF (issue)
NET_OF = 0.1  # a network "at" the OF
ACC_MARGIN = 0.02  # non-inferiority margin on test accuracy (2 points)

# Searched: arXiv abs v1/v2, ar5iv, OpenReview AyXIDfvYg8, paperswithcode, an HTML mirror of
# the arXiv text (its section list only: setup App. E.1, accuracy App. E.7).
NOT_FOUND = "paper's number not found offline (abstract and section list only)"


def _max(m: Metrics, name: str) -> float:
    return max(m.values(name))


def _min(m: Metrics, name: str) -> float:
    return min(m.values(name))


def _seeds(m: Metrics, name: str) -> int:
    return len(m.values(name))


def make_claims(metrics: Metrics, preset) -> list[Claim]:
    m, claims = metrics, []
    n = _seeds(m, "ufm/balanced/dist_etf")
    worst = _max(m, "ufm/balanced/dist_etf")
    claims.append(Claim(
        id="ufm-balanced-etf",
        statement="balanced classes, no ReLU: the class means of the SCL minimiser form a "
        "simplex ETF (the known symmetric geometry)",
        paper="abstract: 'both losses yield symmetric training representations under balanced "
        f"data' (Graf et al. 2021); {NOT_FOUND}",
        measured=f"distance to ETF {m.fmt('ufm/balanced/dist_etf', 2)} (max {worst:.1e}); "
        f"to OF {m.fmt('ufm/balanced/dist_of', 3)}",
        criterion=f"distance to the simplex ETF < {TOL:g} on each of {n} seeds",
        holds=worst < TOL,
    ))  # fmt: skip
    d_of, d_etf = _min(m, "ufm/imbalanced/dist_of"), _min(m, "ufm/imbalanced/dist_etf")
    gap = m.gap("ufm/imbalanced/angle_maj_maj", "ufm/imbalanced/angle_min_min")
    claims.append(Claim(
        id="ufm-imbalanced-asymmetric",
        statement=f"imbalanced classes (R = {preset.ufm_imbalance:g}), no ReLU: the symmetry "
        "breaks: the geometry is neither an ETF nor an OF",
        paper=f"abstract: 'this symmetry breaks under class imbalances'; {NOT_FOUND}",
        measured=f"distance to ETF {m.fmt('ufm/imbalanced/dist_etf', 3)}, to OF "
        f"{m.fmt('ufm/imbalanced/dist_of', 3)}; angles majority-majority "
        f"{m.fmt('ufm/imbalanced/angle_maj_maj', 4)} deg, minority-minority "
        f"{m.fmt('ufm/imbalanced/angle_min_min', 4)} deg (gap {gap})",
        criterion=f"both distances > {FAR:g} on every seed and the angle gap > {ANGLE_GAP:g} deg "
        "and > 2 SE",
        holds=min(d_of, d_etf) > FAR and gap.mean > ANGLE_GAP and gap.beyond_noise(2),
    ))  # fmt: skip
    for r in preset.ufm_ratios:
        g = f"ufm+/R{r:g}"
        dist, col = _max(m, f"{g}/dist_of"), _max(m, f"{g}/nc1")
        claims.append(Claim(
            id=f"ufm+-orthogonal-frame-R{r:g}",
            statement=f"UFM+ (ReLU), R = {r:g}: the SCL minimiser collapses to an orthogonal "
            "frame whatever the class sizes (Thm 1)",
            paper=f"Thm 1 (a proof, no figure value); {NOT_FOUND}",
            measured=f"distance to OF max {dist:.1e} (UFM without ReLU at R = "
            f"{preset.ufm_imbalance:g}: {m.fmt('ufm/imbalanced/dist_of', 3)}); NC1 max {col:.1e}; "
            f"loss - OF value {m.fmt(f'{g}/loss_minus_of', 2)}",
            criterion=f"distance to OF < {TOL:g} and NC1 < {NC1_TOL:g} on each of "
            f"{_seeds(m, f'{g}/dist_of')} seeds",
            holds=dist < TOL and col < NC1_TOL,
        ))  # fmt: skip
    rnd, bnd = "batching/random", "batching/binding"
    fails = _max(m, f"{rnd}/graph_holds") == 0
    claims.append(Claim(
        id="batching-random-not-of",
        statement=f"mini-batches: on a fixed set of small random batches (size "
        f"{preset.batch_size}, R = {preset.batch_ratio:g}) that break the batch-graph condition, "
        "UFM+ does not reach the orthogonal frame (Thm 2)",
        paper=f"Thm 2 and Section 5 (statements, no figure value); {NOT_FOUND}",
        measured=f"distance to OF {m.fmt(f'{rnd}/dist_of', 3)}; classes with a split batch graph "
        f"{m.fmt(f'{rnd}/graph_split_classes', 3)}; class pairs never contrasted "
        f"{m.fmt(f'{rnd}/graph_pairs_missing', 3)}",
        criterion=f"the condition fails and the distance to OF > {FAR_BATCH:g} on every seed",
        holds=fails and _min(m, f"{rnd}/dist_of") > FAR_BATCH,
    ))  # fmt: skip
    claims.append(Claim(
        id="batching-binding-of",
        statement="the same batches with k binding examples (one per class) appended: UFM+ "
        "reaches the orthogonal frame (Cor. 2.1, batch-binding)",
        paper=f"Section 5.2 (statement, no figure value); {NOT_FOUND}",
        measured=f"distance to OF max {_max(m, f'{bnd}/dist_of'):.1e} (without binding "
        f"{m.fmt(f'{rnd}/dist_of', 3)}); NC1 max {_max(m, f'{bnd}/nc1'):.1e}",
        criterion=f"distance to OF < {TOL:g} on each of {_seeds(m, f'{bnd}/dist_of')} seeds",
        holds=_max(m, f"{bnd}/dist_of") < TOL,
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
                criterion=f"mean distance with ReLU < {NET_OF:g}, below the plain net's by > 2 SE, "
                "and < 1% all-zero embeddings",
                holds=m.mean(f"{relu}/dist_of") < NET_OF and gap.beyond_noise(2) and dead < 0.01,
            ))  # fmt: skip
            ncc = m.gap(f"{relu}/ncc_acc", f"{plain}/ncc_acc")
            probe = m.gap(f"{relu}/probe_acc", f"{plain}/probe_acc")
            ok = all(x.mean - 2 * x.se > -ACC_MARGIN for x in (ncc, probe))
            claims.append(Claim(
                id=f"net-relu-accuracy-R{r:g}-tau{tau:g}",
                statement=f"{preset.data}, R = {r:g}, tau = {tau:g}: the ReLU does not cost test "
                "accuracy",
                paper="abstract: 'the inclusion of the ReLU activation restores symmetry without "
                f"compromising test accuracy' (numbers in its App. E.7); {NOT_FOUND}",
                measured=f"nearest-class-mean accuracy ReLU {m.fmt(f'{relu}/ncc_acc', 3)} vs "
                f"{m.fmt(f'{plain}/ncc_acc', 3)} (gap {ncc}); linear probe "
                f"{m.fmt(f'{relu}/probe_acc', 3)} vs {m.fmt(f'{plain}/probe_acc', 3)} (gap {probe})",
                criterion=f"for both classifiers, mean gap - 2 SE > -{ACC_MARGIN:g} "
                "(non-inferior within 2 points)",
                holds=ok,
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
    ))  # fmt: skip
    worst = min(_min(m, f"ufm+/R{r:g}/loss_minus_of") for r in preset.ufm_ratios)
    checks.append(Check(
        id="of-is-a-lower-bound",
        statement="no UFM+ run ends below the loss of the orthogonal frame (Thm 1's minimum)",
        measured=f"min (loss - OF value) {worst:.2e}",
        criterion=">= -1e-2 (float32 sums over ~10^3 anchors)",
        holds=worst >= -1e-2,
    ))  # fmt: skip
    checks.append(Check(
        id="binding-meets-the-condition",
        statement="batches with binding examples meet the batch-graph condition (Cor. 2.1)",
        measured=f"condition holds on {sum(m.values('batching/binding/graph_holds')):g} of "
        f"{_seeds(m, 'batching/binding/graph_holds')} seeds",
        criterion="on every seed",
        holds=_min(m, "batching/binding/graph_holds") == 1,
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
                    ))  # fmt: skip
    return checks

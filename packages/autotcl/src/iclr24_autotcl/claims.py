"""The paper's claims and the code's checks, computed from the metrics.

A claim is a statement of the paper measured against a baseline on paired per-seed values,
with its margin stated and the paper's own figure beside it; a check is an invariant of the
code that holds by construction. Neither is ever typed in: the verdicts come from the numbers.
Every claim runs a degenerate control through the same test: the **untrained encoder**
(randomly initialised, same ridge or SVM read-out; in the oracle's place for
``oracle/lower-bound``) or, for ``mask/spikes``, the **untrained augmentation network**. If the
control passes too, the claim is inconclusive (the criterion cannot tell training from none).
"""

from __future__ import annotations

from iclr24_common import Check, Claim, Metrics, all_of, non_inferiority, superiority, threshold

# in run order: the random mask needs AutoTCL's keep ratio
METHODS = ("autotcl", "ts2vec", "random_mask", "untrained", "raw_lag")
CLS_METHODS = ("autotcl", "ts2vec", "random_mask", "untrained")
LABELS = {"autotcl": "AutoTCL", "ts2vec": "TS2Vec augmentation", "random_mask": "fixed random mask",
          "untrained": "untrained encoder", "raw_lag": "raw-lag ridge", "oracle": "oracle"}  # fmt: skip

PAPER_CLS = (
    "paper, abstract and Sec. 5: AutoTCL +1.2% average accuracy over the best "
    "baseline on the 30 UEA sets; its per-dataset accuracies were not found (searched the "
    "arXiv HTML, the official README and its result figures, which cover forecasting only)"
)
PAPER_TABLE1 = ("paper Table 1, ETTh1 univariate, MSE averaged over H = 24..720: AutoTCL 0.076, "
                "TS2Vec 0.110; Table 10, H = 24/48/168: AutoTCL 0.037/0.054/0.078, TS2Vec "
                "0.039/0.062/0.134")  # fmt: skip
SETTING = ("our setting differs: a generated ETT-like series, a CPU-sized encoder, "
           "H = {h}")  # fmt: skip

# Forecasting MSE differences are judged relative to the baseline's mean MSE. 2 %: the paper
# reports -6.5 % MSE on average against the best baseline (abstract); a difference under a
# third of that is not the paper's effect. It is the tolerance of vs-ts2vec (1.02 x TS2Vec's
# MSE since v1) and the superiority margin of vs-random-mask and vs-raw-lag.
MSE_FRACTION = 0.02
# Classification: 1 accuracy point (0.01), under the "+1.2% average accuracy" over the best
# baseline that the paper reports on the 30 UEA sets (abstract, Sec. 5): a loss this size
# would cancel the paper's advantage (the tolerance since v1).
ACC_TOLERANCE = 0.01
# mask/spikes: the paper argues the factorisation qualitatively and gives no size: any
# difference in drop rate beyond 2 SE of the per-seed differences (threshold 0, stated).
SPIKE_MARGIN = 0.0
# oracle/lower-bound (a sanity claim of this package): only the ordering matters (margin 0).
ORACLE_MARGIN = 0.0
# mask/not-degenerate: a mask keeping under 20 % of the elements (nearly all dropped) or over
# 95 % (nearly the identity) is degenerate (the range since v1).
KEEP_RANGE = (0.2, 0.95)
UNTRAINED = "untrained encoder"
# mask/spikes judges the augmentation network, not the encoder: its degenerate version is the
# same seed's augmentation network at initialisation (measured on the same training series)
UNTRAINED_AUG = "untrained augmentation network"


def forecast_claims(metrics: Metrics, prefix: str, where: str, setting: str, paper: str):
    """The three forecasting claims on one series (metric names start with ``prefix``):
    AutoTCL against TS2Vec's augmentation, the fixed random mask and the raw-lag ridge, each
    with the untrained encoder as the control."""

    def mse(m):
        return metrics.by_seed(f"{prefix}{m}/mse")

    def fmt(m, digits=4):
        return metrics.fmt(f"{prefix}{m}", digits)

    def rel(m):  # the margin or tolerance in MSE units: 2 % of the baseline's mean MSE
        return MSE_FRACTION * metrics.mean(f"{prefix}{m}/mse")

    tag = f"forecast/{prefix.replace('/', '-')}"
    a, ctl = mse("autotcl"), mse("untrained")
    untrained = f"untrained encoder {fmt('untrained/mse')}"
    return [
        Claim(
            id=f"{tag}vs-ts2vec",
            statement=f"{where}AutoTCL's learned augmentation gives univariate forecasting MSE "
            "no worse than TS2Vec's augmentation (same encoder, ridge read-out; the paper "
            "reports it lower)",
            paper=paper,
            measured=f"MSE mean over H: AutoTCL {fmt('autotcl/mse')}, TS2Vec "
            f"{fmt('ts2vec/mse')}, {untrained}; encoder moved "
            f"{fmt('autotcl/param_change', 2)} (AutoTCL) vs {fmt('ts2vec/param_change', 2)} "
            f"(TS2Vec), relative L2; {setting}",
            criterion=f"AutoTCL's MSE vs TS2Vec's, tolerance {MSE_FRACTION:.0%} of TS2Vec's "
            f"mean MSE ({rel('ts2vec'):.3g}); control: the {UNTRAINED}",
            test=non_inferiority(
                a,
                mse("ts2vec"),
                tolerance=rel("ts2vec"),
                higher_is_better=False,
                control=ctl,
                control_name=UNTRAINED,
            ),
        ),
        Claim(
            id=f"{tag}vs-random-mask",
            statement=f"{where}the learned mask beats a fixed random mask of the same keep "
            "ratio (same losses and budget): the augmentation's parameters matter",
            paper="none found for a random mask of equal keep ratio (searched the paper-numbers "
            "notes and the official README figures)",
            measured=f"MSE: AutoTCL {fmt('autotcl/mse')}, random mask "
            f"{fmt('random_mask/mse')}, {untrained}",
            criterion=f"AutoTCL's MSE vs the random mask's, margin {MSE_FRACTION:.0%} of the "
            f"random mask's mean MSE ({rel('random_mask'):.3g}); control: the {UNTRAINED}",
            test=superiority(
                a,
                mse("random_mask"),
                margin=rel("random_mask"),
                higher_is_better=False,
                control=ctl,
                control_name=UNTRAINED,
            ),
        ),
        Claim(
            id=f"{tag}vs-raw-lag",
            statement=f"{where}the learned representation is a better ridge input than the raw "
            "past (the premise of the protocol; the strongest baseline here)",
            paper="not in the paper: Table 1 has no raw-lag row",
            measured=f"MSE: AutoTCL {fmt('autotcl/mse')}, raw-lag ridge "
            f"{fmt('raw_lag/mse')}, {untrained}",
            criterion=f"AutoTCL's MSE vs the raw-lag ridge's, margin {MSE_FRACTION:.0%} of the "
            f"ridge's mean MSE ({rel('raw_lag'):.3g}); control: the {UNTRAINED}",
            test=superiority(
                a,
                mse("raw_lag"),
                margin=rel("raw_lag"),
                higher_is_better=False,
                control=ctl,
                control_name=UNTRAINED,
            ),
        ),
    ]


def keep_ratio_statement(preset) -> str:
    return ("the learned mask keeps a non-degenerate share of the elements, between "
            f"{KEEP_RANGE[0]:.0%} and {KEEP_RANGE[1]:.0%} (the mask-size penalty is there so "
            "that it does not keep everything)")  # fmt: skip


def make_claims(metrics: Metrics, preset) -> list[Claim]:
    hs = "/".join(map(str, preset.horizons))
    setting = SETTING.format(h=hs) if preset.data == "generated" else f"{preset.data}, H = {hs}"
    claims = forecast_claims(metrics, "", "", setting, PAPER_TABLE1)
    if "seattle/autotcl/mse" in metrics:
        hours = preset.seattle_hours or 8759
        claims += forecast_claims(
            metrics, "seattle/", "on real data (hourly Seattle temperatures, 2010): ",
            f"our setting: the first {hours:,} hours of the Seattle series, a CPU-sized "
            f"encoder, H = {hs}",
            PAPER_TABLE1 + "; the paper has no Seattle series",
        )  # fmt: skip
    for name in preset.uea:
        if f"{name}/autotcl/acc" not in metrics:
            continue

        def acc(m, name=name):
            return metrics.by_seed(f"{name}/{m}/acc")

        claims.append(
            Claim(
                id=f"classify/{name}-vs-ts2vec",
                statement=f"on the UEA set {name}, AutoTCL's representation classifies as well "
                "as TS2Vec's (SVM protocol, same encoder and budget)",
                paper=PAPER_CLS,
                measured=f"test accuracy: AutoTCL {metrics.fmt(f'{name}/autotcl/acc')}, TS2Vec "
                f"{metrics.fmt(f'{name}/ts2vec/acc')}, random mask "
                f"{metrics.fmt(f'{name}/random_mask/acc')}, untrained "
                f"{metrics.fmt(f'{name}/untrained/acc')}; CPU-sized encoder, "
                f"{metrics.values(f'{name}/ts2vec/iters')[0]:.0f} iterations each",
                criterion=f"AutoTCL's test accuracy vs TS2Vec's, tolerance {ACC_TOLERANCE:g} "
                f"(1 point); control: the {UNTRAINED} (same SVM read-out)",
                test=non_inferiority(
                    acc("autotcl"),
                    acc("ts2vec"),
                    tolerance=ACC_TOLERANCE,
                    control=acc("untrained"),
                    control_name=UNTRAINED,
                ),
            )
        )
    if "autotcl/drop_at_spikes" in metrics:

        def gap(suffix=""):  # per seed: drop rate at spikes - elsewhere
            at = metrics.by_seed(f"autotcl/drop_at_spikes{suffix}")
            return {s: v - metrics.by_seed(f"autotcl/drop_elsewhere{suffix}")[s]
                    for s, v in at.items()}  # fmt: skip

        claims.append(
            Claim(
                id="mask/spikes",
                statement="the learned mask removes task-irrelevant parts: it drops the injected "
                "spikes more often than ordinary points",
                paper="none found: the paper argues the factorisation into informative and "
                "task-irrelevant parts without a spike-masking figure",
                measured=f"drop rate at spikes {metrics.fmt('autotcl/drop_at_spikes')}, "
                f"elsewhere {metrics.fmt('autotcl/drop_elsewhere')}; {UNTRAINED_AUG}: at "
                f"spikes {metrics.fmt('autotcl/drop_at_spikes_untrained')}, elsewhere "
                f"{metrics.fmt('autotcl/drop_elsewhere_untrained')}",
                criterion="the mask's drop rate at spikes minus elsewhere, per seed; control: "
                f"the {UNTRAINED_AUG} (the same seed's initialisation, the same read-out)",
                test=threshold(
                    gap(),
                    threshold=SPIKE_MARGIN,
                    control=gap("_untrained"),
                    control_name=UNTRAINED_AUG,
                ),
            )
        )
    if not preset.faithful_quirks:  # a measured outcome here; with the quirk it is a check
        keep = metrics.by_seed("autotcl/keep_ratio")
        claims.append(
            Claim(
                id="mask/not-degenerate",
                statement=keep_ratio_statement(preset),
                paper="none found as a figure: the paper's mask-size penalty (official "
                "reg_weight * ReLU(sum_C h - 0.4)) keeps the mask from keeping everything",
                measured=f"mean keep ratio {metrics.fmt('autotcl/keep_ratio')}",
                criterion=f"the learned mask's keep ratio per seed within {list(KEEP_RANGE)}",
                test=all_of(
                    threshold(keep, threshold=KEEP_RANGE[0]),
                    threshold(keep, threshold=KEEP_RANGE[1], higher_is_better=False),
                ),
            )
        )
    if "oracle/mse" in metrics:
        best = min(METHODS, key=lambda m: metrics.mean(f"{m}/mse"))
        claims.append(
            Claim(
                id="oracle/lower-bound",
                statement="no method beats the oracle conditional mean of the generated series "
                "(a sanity claim of this package: there is headroom left; measured on a finite "
                "test set, so it can fail)",
                paper="not in the paper: the generated series is ours",
                measured=f"oracle {metrics.fmt('oracle/mse')}, best method ({LABELS[best]}) "
                f"{metrics.fmt(f'{best}/mse')}",
                criterion=f"the oracle's test MSE vs the best method's ({LABELS[best]}); "
                f"control: the {UNTRAINED} in the oracle's place",
                test=superiority(
                    metrics.by_seed("oracle/mse"),
                    metrics.by_seed(f"{best}/mse"),
                    margin=ORACLE_MARGIN,
                    higher_is_better=False,
                    control=metrics.by_seed("untrained/mse"),
                    control_name=UNTRAINED,
                ),
            )
        )
    return claims


def make_checks(metrics: Metrics, preset) -> list[Check]:
    keep = metrics.values("autotcl/keep_ratio")
    a_it, r_it = metrics.values("autotcl/iters"), metrics.values("random_mask/iters")
    checks = []
    if preset.faithful_quirks:
        checks.append(
            Check(
                id="mask/not-degenerate",
                statement=keep_ratio_statement(preset),
                measured=f"mean keep ratio {metrics.fmt('autotcl/keep_ratio')}",
                criterion=f"within {list(KEEP_RANGE)} on every seed",
                holds=all(KEEP_RANGE[0] <= k <= KEEP_RANGE[1] for k in keep),
                why="the official quirk (faithful_quirks) feeds h's sigmoid output, in (0, 1), "
                "to the hard-concrete sampler as a logit: each element is kept with "
                "probability in about [0.47, 0.74] whatever h is (a claim when the quirk is off)",
            )
        )
    checks += [
        Check(
            id="budget/random-mask",
            statement="the random-mask ablation trains exactly as many steps as AutoTCL",
            measured=f"iterations AutoTCL {a_it}, random mask {r_it}",
            criterion="equal on every seed",
            holds=a_it == r_it,
            why="both run AutoTCL.fit with the same epochs, iteration cap and batch on the same "
            "windows; n_iters counts the steps taken",
        ),
        Check(
            id="budget/ts2vec",
            statement="TS2Vec trains for its official number of iterations",
            measured=f"iterations {metrics.values('ts2vec/iters')}",
            criterion=f"== {preset.ts2vec_iters} on every seed",
            holds=all(i == preset.ts2vec_iters for i in metrics.values("ts2vec/iters")),
            why="TS2Vec.fit loops until n_iters (counted per step) reaches the budget",
        ),
    ]
    if "seattle/autotcl/iters" in metrics:
        s_a, s_r = (
            metrics.values("seattle/autotcl/iters"),
            metrics.values("seattle/random_mask/iters"),
        )
        s_t = metrics.values("seattle/ts2vec/iters")
        checks.append(
            Check(
                id="budget/seattle",
                statement="on the Seattle series the random mask trains as many steps as "
                "AutoTCL and TS2Vec its official number",
                measured=f"iterations AutoTCL {s_a}, random mask {s_r}, TS2Vec {s_t}",
                criterion=f"AutoTCL == random mask and TS2Vec == {preset.ts2vec_iters}, every seed",
                holds=s_a == s_r and all(i == preset.ts2vec_iters for i in s_t),
                why="as on the generated series: the same AutoTCL.fit budget for both masks, "
                "TS2Vec.fit to its iteration budget; n_iters counts the steps taken",
            )
        )
    for name in preset.uea:
        if f"{name}/autotcl/iters" not in metrics:
            continue
        its = {m: metrics.values(f"{name}/{m}/iters") for m in ("autotcl", "ts2vec", "random_mask")}
        checks.append(
            Check(
                id=f"budget/{name}",
                statement=f"on {name} AutoTCL, TS2Vec and the random mask train for the same "
                "number of iterations (TS2Vec's official classification budget)",
                measured=", ".join(f"{m} {v}" for m, v in its.items()),
                criterion="equal on every seed",
                holds=its["autotcl"] == its["ts2vec"] == its["random_mask"],
                why="every method is fitted with the same n_iters (uea_budget: TS2Vec's "
                "official rule) and no epoch cap; n_iters counts the steps taken",
            )
        )
    return checks

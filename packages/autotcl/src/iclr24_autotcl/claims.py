"""The paper's claims, the premises they rest on, and the code's checks, computed from the
metrics.

A claim is a statement of the paper measured against a baseline on paired per-seed values,
with its margin sourced and the paper's own figure beside it; a premise is a precondition
that is not the paper's statement (the oracle bounds every method; the representation is a
better ridge input than the raw past), measured and listed apart; a check is an invariant of
the code that holds by construction. None is ever typed in: the verdicts come from the numbers.
Every claim runs a degenerate control through the same test: the **untrained encoder**
(randomly initialised, same ridge or SVM read-out; in the oracle's place for the
``oracle/lower-bound`` premise) or, for ``mask/spikes``, the **untrained augmentation network**.
If the control passes too, the claim is inconclusive (the criterion cannot tell training from
none). Every claim says its regime: ``paper`` only at the paper's data and encoder size (the
``paper`` preset), else ``below`` with what the paper's effect needs. Where every seed is
scored on one test set (the Seattle series, the paper's CSVs, the UEA test sets) the SE
includes the test items (``items=``: day blocks of forecast origins, or test examples).
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
    threshold,
)

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
# the commit at which the margins of our own choosing were fixed (they predate it; issue 48
# gave them their sources there, before the rerun)
FIXED_AT = "16e3ff9"

# Forecasting MSE differences are judged relative to the baseline's mean MSE: the tolerance of
# vs-ts2vec and the superiority margin of vs-random-mask and of the raw-lag premise.
MSE_FRACTION = 0.02
MSE_SOURCE = Source.derived(
    "about a third of the paper's average MSE reduction against the best baseline, 6.5 % "
    "(abstract): 6.5 % / 3 = 2.2 %, rounded down to 2 % of the baseline's mean MSE; a "
    "difference under it is not the paper's effect"
)
# Classification: 1 accuracy point (0.01), under the "+1.2% average accuracy" over the best
# baseline that the paper reports on the 30 UEA sets (abstract, Sec. 5).
ACC_TOLERANCE = 0.01
ACC_SOURCE = Source.derived(
    "the paper's +1.2 points of average accuracy over the best baseline on the 30 UEA sets "
    "(abstract, Sec. 5), rounded down to 1 point: a loss this size would cancel the paper's "
    "advantage"
)
# mask/spikes: the statement is an ordering (spikes are dropped "more often"): the gap above 0
SPIKE_MARGIN = 0.0
SPIKE_SOURCE = Source.ours(
    "the statement is an ordering (spikes dropped more often than other points): the per-seed "
    "gap in drop rate above 0 by more than 2 SE; the paper argues the factorisation into "
    "informative and task-irrelevant parts without a size, and the spikes are ours",
    commit=FIXED_AT,
)
# oracle/lower-bound (a premise): the conditional mean is the bound itself (margin 0)
ORACLE_MARGIN = 0.0
ORACLE_SOURCE = Source.derived(
    "the conditional mean minimises the expected squared error, E(y - f)^2 = E(y - E[y|past])^2 "
    "+ E(E[y|past] - f)^2 >= the oracle's for any forecaster f of the past: the bound is "
    "margin 0"
)
# mask/not-degenerate: a mask keeping under 20 % of the elements (nearly all dropped) or over
# 95 % (nearly the identity) is degenerate (the range since v1).
KEEP_RANGE = (0.2, 0.95)
KEEP_SOURCE = Source.ours(
    "a mask keeping under 20 % of the elements drops nearly everything, one keeping over 95 % is "
    "nearly the identity; the range since the package's first version, not the paper's",
    commit=FIXED_AT,
)
UNTRAINED = "untrained encoder"
# mask/spikes judges the augmentation network, not the encoder: its degenerate version is the
# same seed's augmentation network at initialisation (measured on the same training series)
UNTRAINED_AUG = "untrained augmentation network"

# ------------------------------------------------------------------------------ regimes
# What the paper's effects need (its data, encoder size and budget), with their sources.
OFFICIAL_SIZE = (320, 64, 10)  # output_dims, hidden_dims, depth
PAPER_HORIZONS = (24, 48, 168, 336, 720)
PAPER_FORECAST_NEEDS = (
    "ETTh1 univariate: 8,640 training hours (33 windows of 257, one batch of 32 a step), the CoST "
    "encoder 64 wide x 10 blocks -> 320-d (26.8M parameters with its trend head), 115 epochs at "
    "lr 3e-5, H = 24..720 (paper Table 1; AslanDing/AutoTCL@2ca0060 config.py config_etth1_uni, "
    "train_forecasting_autotcl_cost.py --repr_dims 320; ETTh2, ETTm1, electricity and WTH have "
    "their own configs there: hidden 128, 8-9 blocks, 20-190 epochs)"
)
PAPER_CLS_NEEDS = (
    "the 30 UEA sets, of which the paper reports only the average (+1.2 points over the best "
    "baseline: abstract, Sec. 5), under TS2Vec's UEA protocol: encoder 64 wide x 10 blocks -> "
    "320-d (638k parameters on JapaneseVowels' 12 channels), 200 iterations (600 above 100,000 "
    "values) at batch 8, lr 1e-3 (yuezhihan/ts2vec@1db435d train.py and ts2vec.py; the AutoTCL "
    "repository has no classification config)"
)


def _size(preset) -> tuple[int, int, int]:
    return preset.output_dims, preset.hidden_dims, preset.depth


def _encoder_text(metrics: Metrics, prefix: str, preset) -> str:
    """Ours: the encoder's size and AutoTCL's budget as run (from the metrics)."""
    params = metrics.mean(f"{prefix}autotcl/parameters")
    return (f"the {'CoST' if preset.encoder == 'cost' else 'TS2Vec'} encoder "
            f"{preset.hidden_dims} wide x {preset.depth} blocks -> {preset.output_dims}-d "
            f"({params:,.0f} parameters), {metrics.mean(f'{prefix}autotcl/iters'):.0f} "
            "steps")  # fmt: skip


def forecast_regime(metrics: Metrics, prefix: str, preset, data: str) -> tuple[str, str]:
    """``paper`` on ETTh1 at the official size, budget and horizons; else ``below`` with what
    the paper's forecasting effect needs and ours."""
    if (prefix == "" and preset.data == "ETTh1" and preset.encoder == "cost"
            and _size(preset) == OFFICIAL_SIZE and preset.autotcl_epochs >= 115
            and tuple(preset.horizons) == PAPER_HORIZONS):  # fmt: skip
        return "paper", ""
    windows = metrics.mean(f"{prefix}autotcl/windows")
    batch = min(preset.autotcl_batch, windows)
    hs = "/".join(map(str, preset.horizons))
    return "below", (f"{PAPER_FORECAST_NEEDS}; ours {data}: {windows:.0f} windows of "
                     f"{preset.autotcl_max_train_length} (one batch of {batch:.0f} a step), "
                     f"{_encoder_text(metrics, prefix, preset)} over {preset.autotcl_epochs} "
                     f"epochs, H = {hs}")  # fmt: skip


def classify_regime(metrics: Metrics, name: str, preset) -> tuple[str, str]:
    """``paper`` on a UEA archive set at TS2Vec's official size and budget; else ``below``."""
    if preset.uea_source == "archive" and _size(preset) == OFFICIAL_SIZE and not preset.uea_iters:
        return "paper", ""
    return "below", (f"{PAPER_CLS_NEEDS}; ours {name} alone, "
                     f"{_encoder_text(metrics, f'{name}/', preset)}")  # fmt: skip


def _data_text(preset, prefix: str) -> str:
    if prefix == "seattle/":
        return f"the first {preset.seattle_hours or 8759:,} hours of the Seattle temperatures"
    if preset.data == "generated":
        return f"a generated {preset.n_hours:,}-hour ETT-like series"
    return preset.data


# ------------------------------------------------------------------------------ claims
def forecast_claims(metrics: Metrics, prefix: str, where: str, paper: str, preset, items: dict,
                    rests_on: tuple[str, ...] = ()) -> list[Claim]:  # fmt: skip
    """The two forecasting claims on one series (metric names start with ``prefix``):
    AutoTCL against TS2Vec's augmentation and the fixed random mask, each with the untrained
    encoder as the control. A series every seed shares is judged with its test items."""

    def mse(m):
        return metrics.by_seed(f"{prefix}{m}/mse")

    def fmt(m, digits=4):
        return metrics.fmt(f"{prefix}{m}", digits)

    def rel(m):  # the margin or tolerance in MSE units: 2 % of the baseline's mean MSE
        return MSE_FRACTION * metrics.mean(f"{prefix}{m}/mse")

    shared = not (prefix == "" and preset.data == "generated")

    def its(*ms):  # per-item scores on a shared test set (day blocks of forecast origins)
        return tuple(items[f"{prefix}{m}/mse_items"] for m in ms) if shared else None

    regime, needs = forecast_regime(metrics, prefix, preset, _data_text(preset, prefix))
    tag = f"forecast/{prefix.replace('/', '-')}"
    a, ctl = mse("autotcl"), mse("untrained")
    untrained = f"untrained encoder {fmt('untrained/mse')}"
    moved = (f"AutoTCL's encoder moved {metrics.mean(f'{prefix}autotcl/param_change'):.3g} from "
             f"its initialisation (relative L2; TS2Vec's {metrics.mean(f'{prefix}ts2vec/param_change'):.3g})")  # fmt: skip
    common = dict(regime=regime, needs=needs, test_set="shared" if shared else "per-seed",
                  rests_on=rests_on, moved=moved)  # fmt: skip
    return [
        Claim(
            id=f"{tag}vs-ts2vec",
            statement=f"{where}AutoTCL's learned augmentation gives a univariate forecasting MSE "
            f"no worse than TS2Vec's augmentation by more than {MSE_FRACTION:.0%} of TS2Vec's "
            "(same encoder, ridge read-out); the paper reports it lower (ETTh1: 31 % lower)",
            paper=paper,
            measured=f"MSE mean over H: AutoTCL {fmt('autotcl/mse')}, TS2Vec "
            f"{fmt('ts2vec/mse')}, {untrained}; encoder moved "
            f"{fmt('autotcl/param_change', 2)} (AutoTCL) vs {fmt('ts2vec/param_change', 2)} "
            f"(TS2Vec), relative L2",
            criterion=f"AutoTCL's MSE vs TS2Vec's, tolerance {MSE_FRACTION:.0%} of TS2Vec's "
            f"mean MSE ({rel('ts2vec'):.3g}); control: the {UNTRAINED}",
            test=non_inferiority(
                a,
                mse("ts2vec"),
                tolerance=rel("ts2vec"),
                higher_is_better=False,
                control=ctl,
                control_name=UNTRAINED,
                source=MSE_SOURCE,
                items=its("autotcl", "ts2vec", "untrained"),
            ),  # fmt: skip
            **common,
        ),
        Claim(
            id=f"{tag}vs-random-mask",
            statement=f"{where}the learned mask beats a fixed random mask of the same keep "
            f"ratio (same losses and budget) by more than {MSE_FRACTION:.0%} of the random "
            "mask's MSE: the augmentation's parameters matter",
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
                source=MSE_SOURCE,
                items=its("autotcl", "random_mask", "untrained"),
            ),  # fmt: skip
            **common,
        ),
    ]


def keep_ratio_statement(preset) -> str:
    return ("the learned mask keeps a non-degenerate share of the elements, between "
            f"{KEEP_RANGE[0]:.0%} and {KEEP_RANGE[1]:.0%} (the mask-size penalty is there so "
            "that it does not keep everything)")  # fmt: skip


def make_claims(metrics: Metrics, preset, items: dict | None = None) -> list[Claim]:
    """The paper's claims; ``items``: the per-item test scores (name -> seed -> array) of the
    series and sets every seed shares."""
    items = items or {}
    rests_on = ("oracle/lower-bound",) if "oracle/mse" in metrics else ()
    claims = forecast_claims(metrics, "", "", PAPER_TABLE1, preset, items, rests_on)
    if "seattle/autotcl/mse" in metrics:
        claims += forecast_claims(
            metrics, "seattle/", "on real data (hourly Seattle temperatures, 2010): ",
            PAPER_TABLE1 + "; the paper has no Seattle series", preset, items,
        )  # fmt: skip
    for name in preset.uea:
        if f"{name}/autotcl/acc" not in metrics:
            continue

        def acc(m, name=name):
            return metrics.by_seed(f"{name}/{m}/acc")

        regime, needs = classify_regime(metrics, name, preset)
        per_item = tuple(items[f"{name}/{m}/acc_items"] for m in ("autotcl", "ts2vec", "untrained"))
        claims.append(
            Claim(
                id=f"classify/{name}-vs-ts2vec",
                statement=f"on the UEA set {name}, AutoTCL's representation classifies no worse "
                f"than TS2Vec's by more than {ACC_TOLERANCE * 100:g} accuracy point (SVM "
                "protocol, same encoder and budget); the paper reports +1.2 points on average "
                "over 30 sets against the best baseline",
                paper=PAPER_CLS,
                measured=f"test accuracy: AutoTCL {metrics.fmt(f'{name}/autotcl/acc')}, TS2Vec "
                f"{metrics.fmt(f'{name}/ts2vec/acc')}, random mask "
                f"{metrics.fmt(f'{name}/random_mask/acc')}, untrained "
                f"{metrics.fmt(f'{name}/untrained/acc')}; "
                f"{metrics.values(f'{name}/ts2vec/iters')[0]:.0f} iterations each",
                criterion=f"AutoTCL's test accuracy vs TS2Vec's, tolerance {ACC_TOLERANCE:g} "
                f"(1 point); control: the {UNTRAINED} (same SVM read-out)",
                test=non_inferiority(
                    acc("autotcl"),
                    acc("ts2vec"),
                    tolerance=ACC_TOLERANCE,
                    control=acc("untrained"),
                    control_name=UNTRAINED,
                    source=ACC_SOURCE,
                    items=per_item,
                ),  # fmt: skip
                regime=regime,
                needs=needs,
                test_set="shared",
                moved=f"AutoTCL's encoder moved "
                f"{metrics.mean(f'{name}/autotcl/param_change'):.3g} from its initialisation "
                "(relative L2)",
            )
        )
    if "autotcl/drop_at_spikes" in metrics:

        def gap(suffix=""):  # per seed: drop rate at spikes - elsewhere
            at = metrics.by_seed(f"autotcl/drop_at_spikes{suffix}")
            return {s: v - metrics.by_seed(f"autotcl/drop_elsewhere{suffix}")[s]
                    for s, v in at.items()}  # fmt: skip

        _, needs = forecast_regime(metrics, "", preset, _data_text(preset, ""))
        claims.append(
            Claim(
                id="mask/spikes",
                statement="the learned mask removes task-irrelevant parts: it drops the injected "
                "spikes more often than ordinary points (by more than 2 SE)",
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
                    source=SPIKE_SOURCE,
                ),  # fmt: skip
                regime="below",
                needs="a spike experiment the paper does not have: it argues the factorisation "
                "(Sec. 3) for encoders trained at " + needs,
                test_set="per-seed",
                moved=f"training moved the drop rate elsewhere from "
                f"{metrics.mean('autotcl/drop_elsewhere_untrained'):.3f} to "
                f"{metrics.mean('autotcl/drop_elsewhere'):.3f} and at spikes from "
                f"{metrics.mean('autotcl/drop_at_spikes_untrained'):.3f} to "
                f"{metrics.mean('autotcl/drop_at_spikes'):.3f}",
            )
        )
    if not preset.faithful_quirks:  # a measured outcome here; with the quirk it is a check
        keep = metrics.by_seed("autotcl/keep_ratio")
        regime, needs = forecast_regime(metrics, "", preset, _data_text(preset, ""))
        claims.append(
            Claim(
                id="mask/not-degenerate",
                statement=keep_ratio_statement(preset),
                paper="none found as a figure: the paper's mask-size penalty (official "
                "reg_weight * ReLU(sum_C h - 0.4)) keeps the mask from keeping everything",
                measured=f"mean keep ratio {metrics.fmt('autotcl/keep_ratio')}",
                criterion=f"the learned mask's keep ratio per seed within {list(KEEP_RANGE)}",
                test=all_of(
                    threshold(keep, threshold=KEEP_RANGE[0], source=KEEP_SOURCE),
                    threshold(
                        keep, threshold=KEEP_RANGE[1], higher_is_better=False, source=KEEP_SOURCE
                    ),  # fmt: skip
                ),
                regime=regime,
                needs=needs,
                test_set="none",  # a share of the training series, not a test score
            )
        )
    return claims


# ------------------------------------------------------------------------------ premises
def raw_lag_premise(metrics: Metrics, prefix: str, where: str, items: dict,
                    shared: bool) -> Premise:  # fmt: skip
    """The representation is a better ridge input than the raw past (AutoTCL vs the raw-lag
    ridge), with the untrained encoder as the control."""
    a, b = metrics.by_seed(f"{prefix}autotcl/mse"), metrics.by_seed(f"{prefix}raw_lag/mse")
    rel = MSE_FRACTION * metrics.mean(f"{prefix}raw_lag/mse")
    per_item = (tuple(items[f"{prefix}{m}/mse_items"] for m in ("autotcl", "raw_lag", "untrained"))
                if shared else None)  # fmt: skip
    return Premise(
        id=f"forecast/{prefix.replace('/', '-')}vs-raw-lag",
        statement=f"{where}the learned representation is a better ridge input than the raw past "
        "(the premise of the ridge protocol, not a statement of the paper; no claim rests on "
        "it: the paper's comparison of augmentations is relative, and a ridge on raw lags is "
        "not among its baselines)",
        paper="not in the paper: Table 1 has no raw-lag row",
        measured=f"MSE: AutoTCL {metrics.fmt(f'{prefix}autotcl/mse')}, raw-lag ridge "
        f"{metrics.fmt(f'{prefix}raw_lag/mse')}, untrained encoder "
        f"{metrics.fmt(f'{prefix}untrained/mse')}",
        criterion=f"AutoTCL's MSE vs the raw-lag ridge's, margin {MSE_FRACTION:.0%} of the "
        f"ridge's mean MSE ({rel:.3g}); control: the {UNTRAINED}",
        test=superiority(
            a,
            b,
            margin=rel,
            higher_is_better=False,
            control=metrics.by_seed(f"{prefix}untrained/mse"),
            control_name=UNTRAINED,
            source=MSE_SOURCE,
            items=per_item,
        ),  # fmt: skip
    )


def make_premises(metrics: Metrics, preset, items: dict | None = None) -> list[Premise]:
    """What the claims rest on, or what the protocol presumes: the oracle bounds every method
    on the generated series (the forecasting claims there rest on it), and the representation
    beats the raw past on each forecasting series (listed, no claim rests on it)."""
    items = items or {}
    premises = []
    if "oracle/mse" in metrics:
        best = min(METHODS, key=lambda m: metrics.mean(f"{m}/mse"))
        premises.append(
            Premise(
                id="oracle/lower-bound",
                statement="no method beats the oracle conditional mean of the generated series: "
                "the test set is large enough that the bound shows, and there is headroom left "
                "(the forecasting claims on the generated series rest on it)",
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
                    source=ORACLE_SOURCE,
                ),  # fmt: skip
            )
        )
    premises.append(raw_lag_premise(metrics, "", "", items, preset.data != "generated"))
    if "seattle/autotcl/mse" in metrics:
        premises.append(raw_lag_premise(metrics, "seattle/", "on the Seattle series: ", items,
                                        shared=True))  # fmt: skip
    return premises


# ------------------------------------------------------------------------------ checks
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

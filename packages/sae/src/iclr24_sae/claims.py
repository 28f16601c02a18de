"""The paper's claims and the code's checks, computed from the metrics.

Every claim is a test on paired per-seed values (:mod:`iclr24_common.verdicts`) against the
strongest baseline the package has, with a degenerate control where one exists: a random
dictionary for the toy model, the same SAE untrained for the interpretability score.
"""

from __future__ import annotations

import numpy as np

from iclr24_common import Check, Claim, Metrics, all_of, superiority, threshold

BASELINES = ("pca", "ica", "neurons", "random")

TOY_MMCS = 0.90
"""'MMCS near 1': the interim report's SAE reaches ~0.99; 0.90 leaves room for our smaller
toy (d = 64, 1200 steps) and is the criterion this claim has had since the first run."""
TOY_MARGIN = 0.4
"""'far better than PCA and ICA': 0.4 MMCS (40% of the scale). No PCA/ICA figure was found
in the report; 0.4 is the margin over PCA this claim has had since the first run."""
INTERP_MARGIN = 0.01
"""The interpretability score is a correlation; 0.01 is the 2-decimal precision at which
such scores are read off the paper's Fig. 2 and reported here."""


def make_claims(metrics: Metrics, preset) -> list[Claim]:
    return [_toy_claim(metrics, preset), _lm_claim(metrics, preset)] + (
        [_ioi_claim(metrics, preset)] if "ioi/sae/k_needed" in metrics else []
    )


def _toy_claim(metrics: Metrics, preset) -> Claim:
    strongest = max(("pca", "ica"), key=lambda m: metrics.mean(f"toy/{m}/mmcs"))
    sae, base = metrics.by_seed("toy/sae/mmcs"), metrics.by_seed(f"toy/{strongest}/mmcs")
    rand = metrics.by_seed("toy/random/mmcs")  # a random dictionary: the degenerate control
    gap_toy = metrics.gap("toy/sae/mmcs", f"toy/{strongest}/mmcs")
    return Claim(
        id="toy/resolves-superposition",
        statement="an SAE recovers the ground-truth features of the toy model of "
        "superposition (MMCS near 1), far better than PCA and ICA",
        paper="interim report (LessWrong, Dec 2022, official replicate_toy_models.py): "
        "MMCS up to ~0.99 on d=256 with 512 features; no PCA/ICA number found",
        measured=f"MMCS at alpha={preset.toy_alpha:g}, ratio {preset.toy_ratio:g}: SAE "
        f"{metrics.fmt('toy/sae/mmcs', 3)}, PCA {metrics.fmt('toy/pca/mmcs', 3)}, ICA "
        f"{metrics.fmt('toy/ica/mmcs', 3)}, random dictionary (control) "
        f"{metrics.fmt('toy/random/mmcs', 3)}; SAE - {strongest}: {gap_toy}",
        criterion=f"all of: SAE MMCS above {TOY_MMCS:g} by more than 2 SE; SAE MMCS vs the "
        f"stronger of PCA and ICA ({strongest}), paired gap > {TOY_MARGIN:g} and > 2 SE; a "
        "random dictionary (same size) as control in both",
        test=all_of(
            threshold(sae, threshold=TOY_MMCS, control=rand, control_name="random dictionary"),
            superiority(
                sae, base, margin=TOY_MARGIN, control=rand, control_name="random dictionary"
            ),
        ),
    )


def _lm_claim(metrics: Metrics, preset) -> Claim:
    best = max(BASELINES, key=lambda m: metrics.mean(f"lm/{m}/interp"))
    gap_lm = metrics.gap("lm/sae/interp", f"lm/{best}/interp")
    others = ", ".join(f"{m} {metrics.fmt(f'lm/{m}/interp', 3)}" for m in BASELINES)
    llm = ""
    if "lm/sae/llm_interp" in metrics:  # --llm: reported beside the offline score
        llm = "; --llm explain-then-simulate: " + ", ".join(
            f"{m} {metrics.fmt(f'lm/{m}/llm_interp', 3)}" for m in ("sae", *BASELINES)
        )
    return Claim(
        id="lm/more-interpretable",
        statement="SAE features of a language model's residual stream are more "
        "interpretable than PCA, ICA, neuron and random directions (Fig. 2)",
        paper="Fig. 2 (Pythia-70M, GPT-3.5 explain-then-simulate): SAE features score "
        "higher than every baseline at every layer; numbers only as a plot",
        measured=f"token-simulation score (mean over live features; share live: SAE "
        f"{metrics.fmt('lm/sae/interp_scored_frac', 2)}, untrained "
        f"{metrics.fmt('lm/untrained/interp_scored_frac', 2)}): SAE "
        f"{metrics.fmt('lm/sae/interp', 3)}, {others}; "
        f"the same SAE untrained (control) {metrics.fmt('lm/untrained/interp', 3)}; "
        f"SAE - {best}: {gap_lm}. SAE alpha={metrics.mean('lm/sae/alpha'):g}, "
        f"FVU {metrics.fmt('lm/sae/fvu', 3)}, L0 {metrics.fmt('lm/sae/l0', 3)}, dead "
        f"{metrics.fmt('lm/sae/dead', 2)}, CE loss recovered "
        f"{metrics.fmt('lm/sae/ce_recovered', 3)}{llm}",
        criterion=f"the SAE's token-simulation score (live features) vs the strongest "
        f"baseline's ({best}); control: the same SAE untrained (a random dictionary of the "
        "same size, init and seed), scored on the same tokens",
        test=superiority(
            metrics.by_seed("lm/sae/interp"),
            metrics.by_seed(f"lm/{best}/interp"),
            margin=INTERP_MARGIN,
            control=metrics.by_seed("lm/untrained/interp"),
            control_name="untrained SAE",
        ),
    )


def _needed(metrics: Metrics, basis: str, size: float) -> dict[int, float]:
    """Features needed per seed; a seed that never reaches the share counts as needing all
    ``size`` features of the basis (a lower bound: it needs more than all of them)."""
    values = metrics.by_seed(f"ioi/{basis}/k_needed")
    return {s: (v if np.isfinite(v) else size) for s, v in values.items()}


def _ioi_claim(metrics: Metrics, preset) -> Claim:
    """Fewer SAE features than neurons or PCA directions move the IOI logit difference by
    ``ioi_share`` of the clean-to-corrupted change, on a task the model solves."""
    d = metrics.mean("lm/neurons/n_features") / 2  # each neuron counts as two signed features
    n_dict = metrics.mean("lm/sae/n_features")
    need = {"sae": _needed(metrics, "sae", n_dict), "neurons": _needed(metrics, "neurons", d),
            "pca": _needed(metrics, "pca", d)}  # fmt: skip
    strongest = min(("neurons", "pca"), key=lambda m: float(np.mean(list(need[m].values()))))
    missed = sum(not np.isfinite(v) for v in metrics.values("ioi/sae/k_needed"))
    sae_k = (metrics.fmt("ioi/sae/k_needed", 3) if not missed else
             f"never (not reached in {missed} of {len(metrics.values('ioi/sae/k_needed'))} seeds)")  # fmt: skip
    gap = metrics.gap(f"ioi/{strongest}/k_needed", "ioi/sae/k_needed")
    gap_txt = f"{strongest} - SAE: {gap}" if not missed else "no gap (the SAE never reaches it)"
    acc, ld = metrics.mean("ioi/task/accuracy"), metrics.mean("ioi/task/logit_diff")
    ld_se = metrics.mean("ioi/task/logit_diff_se")
    pct = f"{100 * preset.ioi_share:g}%"
    # the task is the same for every seed (fixed prompts): judged as 1 value each
    solved = all_of(
        threshold([acc], threshold=preset.ioi_accuracy_min),
        threshold([ld - 2 * ld_se], threshold=0.0),
    )
    return Claim(
        id="ioi/sae-localises",
        statement="activation patching localises the IOI behaviour more finely in the SAE "
        "basis than in the neuron (or PCA) basis: fewer features move the answer (Sec. 5)",
        paper="Sec. 5, Fig. 4 (Pythia-410M, IOI, KL divergence to the corrupted output): "
        "patching few dictionary features reaches a divergence other decompositions need "
        "more directions for; numbers only as a plot",
        measured=f"task: IO - S logit difference {ld:+.2f} (accuracy {acc:.2f}, "
        f"{metrics.mean('ioi/task/prompts'):.0f} prompts; corrupted "
        f"{metrics.mean('ioi/task/corrupt_logit_diff'):+.2f}). Features patched for {pct} of "
        f"the change: SAE {sae_k}, neurons {metrics.mean('ioi/neurons/k_needed'):.3g}, PCA "
        f"{metrics.mean('ioi/pca/k_needed'):.3g}; {gap_txt}. All SAE features patched (its "
        f"reconstruction error left clean): {metrics.fmt('ioi/sae/full_share', 3)} of the change",
        criterion=f"all of: the model solves the task (accuracy above "
        f"{preset.ioi_accuracy_min:g} and the logit difference above 2 SE over prompts; 1 value "
        f"each, the prompts are fixed); the features the SAE needs for {pct} of the change vs "
        f"the stronger of neurons and PCA ({strongest}), paired gap > 1 feature and > 2 SE "
        f"(lower is better); a seed whose SAE never reaches it counts as needing all its "
        f"features (a lower bound, in its favour)",
        # a margin of 1 feature: feature counts are whole numbers (interpolated between grid
        # points), so needing fewer means at least one feature fewer
        test=all_of(
            solved, superiority(need["sae"], need[strongest], margin=1.0, higher_is_better=False)
        ),
    )


def make_checks(metrics: Metrics, preset, manifest: dict) -> list[Check]:
    norm_err = max(max(metrics.values(n)) for n in metrics.names() if n.endswith("unit_norm_error"))
    expected = preset.n_seq * (preset.seq_len - 1)
    return [
        Check(
            id="decoder-unit-norm",
            statement="every SAE's dictionary atoms have unit norm after training",
            measured=f"max | ||D_i|| - 1 | = {norm_err:.1e}",
            criterion="<= 1e-5",
            holds=norm_err <= 1e-5,
            why="dictionary() divides every row by its norm, and train_sae renormalises the "
            "stored decoder rows after every step (sae.py, train.py)",
        ),
        Check(
            id="harvest-complete",
            statement="the harvest holds every token of every sequence (first position dropped)",
            measured=f"{manifest['tokens']} tokens in {manifest['chunks']} chunks",
            criterion=f"= {expected}",
            holds=manifest["tokens"] == expected,
            why="harvest() stores positions 1..seq_len-1 of every sequence it is given, chunk "
            "by chunk, and an interrupted harvest resumes at the first missing chunk",
        ),
    ]

"""The paper's claims and the code's checks, computed from the metrics.

Losses are mean next-token cross-entropies on the same fixed held-out batches, in nats per
token (nats per byte on the default data); perplexity is exp(loss).
"""

from __future__ import annotations

import math

from iclr24_common import (
    Check,
    Claim,
    Metrics,
    Source,
    non_inferiority,
    superiority,
    threshold,
)

# The paper's Table 2 (ICLR 2024 version, C4 validation perplexity, 60M/130M/250M/350M) could
# not be retrieved here; see the README for where we searched. Its text states the ordering.
PAPER_TABLE2 = (
    "Table 2 (C4 perplexity, 60M-350M): ReLoRA is close to full-rank training and clearly "
    "better than LoRA and LoRA + warm start at every size (text: 'comparable performance to "
    "regular neural network training'); numbers not retrieved, see README"
)

# The paper's regime (rule 1 of CONTRIBUTING "What a verdict can tell"): Table 2's smallest
# model and its step count; a run reaching both is in it (the paper preset: 130M, 20k steps)
PAPER_PARAMS = 60e6
PAPER_STEPS = 20_000
PAPER_SETTING = (
    "60M-350M-parameter LLaMAs (1.3B in the abstract) trained 20k steps of 600-1152 sequences "
    "x 512 T5 tokens on C4, r 128, a merge every 2000-5000 steps after a 5k-step full-rank "
    "warm start (paper Table 2; Guitaricet/relora@176f376 README, 250M recipe: "
    "--total_batch_size 1152 --num_training_steps 20000 --relora 5000; scripts/paper_130M.sh "
    "@e3e42dd: 130M, --total_batch_size 600 --relora 2000)"
)


def _ppl(metrics: Metrics, method: str) -> str:
    return f"ppl {math.exp(metrics.mean(f'{method}/eval_loss')):.3g}"


# The margins below were fixed before any verdict run, at the commits named; none is derived
# from the paper's numbers (Table 2 not retrieved here), and ours are nats per byte where the
# paper's perplexities are per T5 token.
MARGINS_COMMIT = "d79a253"
# beats-lora: 0.2 nats per token (exp(0.2) = 1.22x perplexity): a gap any user of a language
# model would notice, the package's reading of "clearly better than LoRA"
LORA_MARGIN = 0.2
LORA_SOURCE = Source.ours(
    "0.2 nats (a 1.22x perplexity gap): the package's reading of Table 2's 'clearly better "
    "than LoRA', a gap any user of a language model would notice; not derived from the "
    "paper's numbers (not retrieved here), and per byte here where the paper's are per T5 token",
    commit=MARGINS_COMMIT,
)
# beats-lora-warm-start: the paper says ReLoRA outperforms LoRA + warm start but gives no size
# here (Table 2 not retrieved): any gain beyond 2 SE of the paired differences (margin 0)
WARM_MARGIN = 0.0
WARM_SOURCE = Source.ours(
    "0: the paper states the ordering (ReLoRA below LoRA + warm start in perplexity, Table 2) "
    "with no size retrievable here, so any gain past 2 SE counts",
    commit="33b03dd",
)
# close-to-full-rank: the abstract's "comparable performance to regular neural network
# training", read (since v1 of this package) as within 10% of full-rank's held-out loss
CLOSE_FRACTION = 0.10
CLOSE_SOURCE = Source.ours(
    "10% of full-rank's mean held-out loss: the package's reading of the abstract's "
    "'comparable performance to regular neural network training'; a round number with no "
    "derivation from the paper (its Table 2 gaps were not retrieved here)",
    commit=MARGINS_COMMIT,
)


def regime(metrics: Metrics, preset) -> tuple[str, str]:
    """``paper`` when the model and the run reach Table 2's smallest setting (>= 60M
    parameters, >= 20k steps), else ``below`` with what the paper's effect needs and ours."""
    params = metrics.mean("full/trainable_params")
    if params >= PAPER_PARAMS and preset.steps >= PAPER_STEPS:
        return "paper", ""
    unit = "T5 tokens" if getattr(preset, "data", "bytes") == "c4" else "bytes"
    return "below", (
        f"{PAPER_SETTING}; ours {params / 1e6:.2g}M params, {preset.steps} steps of "
        f"{preset.batch_size} x {preset.seq_len} {unit}, r {preset.r}, a merge every "
        f"{preset.relora_steps} steps after a {preset.warm_start}-step warm start"
    )


def _point(metrics: Metrics, method: str) -> str:
    """The grid point a method ran at (chosen on validation), e.g. 'lr 0.003, alpha/r 4'."""
    lr = f"lr {metrics.mean(f'{method}/lr'):g}" if f"{method}/lr" in metrics else ""
    if f"{method}/lora_scale" in metrics:
        lr += f", alpha/r {metrics.mean(f'{method}/lora_scale'):g}"
    return lr


def _items(items: dict, *arms: str) -> tuple:
    return tuple(items[a] for a in arms)


def make_claims(metrics: Metrics, preset, items: dict[str, dict[int, list[float]]]) -> list[Claim]:
    """The claims; ``items[arm][seed]`` is the arm's loss on every sequence of the shared
    evaluation set (all seeds and arms are scored on the same fixed held-out windows)."""
    r = preset.r
    need = min(min(preset.hidden, preset.intermediate), 2 * r)
    bar = max(need, r)  # "> r and >= min(d, 2r)": past both
    medians = metrics.values("relora/rank_median")
    loss = {m: metrics.by_seed(f"{m}/eval_loss")
            for m in ("full", "lora", "lora_warm", "relora", "warm_start")}  # fmt: skip
    ratio = metrics.mean("relora/eval_loss") / metrics.mean("full/eval_loss")
    tolerance = CLOSE_FRACTION * metrics.mean("full/eval_loss")
    where, needs = regime(metrics, preset)
    moved = (f"relative weight displacement ||W - W_warmstart|| / ||W_warmstart|| of the "
             f"adapted matrices: ReLoRA {metrics.mean('relora/rel_update'):.3g}, full-rank "
             f"{metrics.mean('full/rel_update'):.3g}, LoRA + warm start "
             f"{metrics.mean('lora_warm/rel_update'):.3g} (the warm start itself: 0)")  # fmt: skip
    return [
        Claim(
            id="high-rank-update",
            statement="ReLoRA's total update W_final - W_warmstart is high-rank although every "
            f"cycle is rank <= r: its median effective rank is > r and >= min(d, 2r) = {need}",
            paper="Figure 4: singular values of ReLoRA's update spread like full-rank "
            "training's, LoRA's are concentrated on r values",
            measured=f"median effective rank of dW over {preset.layers * 7} matrices: ReLoRA "
            f"{metrics.fmt('relora/rank_median', 3)} (worst seed {min(medians):g}), full-rank "
            f"{metrics.fmt('full/rank_median', 3)}, LoRA + warm start "
            f"{metrics.fmt('lora_warm/rank_median', 3)} (r = {r})",
            criterion=f"ReLoRA's median effective rank of dW per seed vs min(d, 2r) = {bar}; "
            "control: LoRA + warm start (ReLoRA whose merges never fire)",
            test=threshold(
                metrics.by_seed("relora/rank_median"),
                threshold=bar,
                control=metrics.by_seed("lora_warm/rank_median"),
                control_name="LoRA + warm start (no merges)",
                source=Source.derived(
                    f"max(r, min(d, 2r)) = max({r}, min({min(preset.hidden, preset.intermediate)}"
                    f", {2 * r})) = {bar}: past the rank r of any single cycle and of LoRA, up "
                    "to the rank two merged cycles can reach (Figure 4 gives spectra, no number)"
                ),
            ),
            regime=where,
            needs=needs,
            test_set="none",
        ),
        Claim(
            id="beats-lora",
            statement="ReLoRA reaches a lower held-out loss than pure low-rank (LoRA) training "
            f"with the same rank, steps and batches, by more than {LORA_MARGIN:g} nats per token",
            paper=PAPER_TABLE2,
            measured=f"eval loss LoRA {metrics.fmt('lora/eval_loss')} ({_ppl(metrics, 'lora')};"
            f" {_point(metrics, 'lora')}), ReLoRA {metrics.fmt('relora/eval_loss')} "
            f"({_ppl(metrics, 'relora')}; {_point(metrics, 'relora')})",
            criterion="ReLoRA's held-out loss vs LoRA's (same rank, steps and batches, each at "
            "its point of the same lr x alpha/r grid chosen on validation; SE over seeds and "
            "the shared evaluation sequences)",
            test=superiority(
                loss["relora"],
                loss["lora"],
                margin=LORA_MARGIN,
                higher_is_better=False,
                source=LORA_SOURCE,
                items=_items(items, "relora", "lora"),
            ),
            regime=where,
            needs=needs,
            test_set="shared",
        ),
        Claim(
            id="beats-lora-warm-start",
            statement="ReLoRA beats the strongest low-rank baseline, LoRA + the same full-rank "
            "warm start, by more than 2 SE (restarts, not the warm start, make the difference)",
            paper=PAPER_TABLE2,
            measured=f"eval loss LoRA + warm start {metrics.fmt('lora_warm/eval_loss')} "
            f"({_ppl(metrics, 'lora_warm')}; {_point(metrics, 'lora_warm')}), ReLoRA "
            f"{metrics.fmt('relora/eval_loss')}",
            criterion="ReLoRA's held-out loss vs LoRA + warm start's (each at its point of the "
            "same lr x alpha/r grid chosen on validation; SE over seeds and the shared "
            "evaluation sequences)",
            test=superiority(
                loss["relora"],
                loss["lora_warm"],
                margin=WARM_MARGIN,
                higher_is_better=False,
                source=WARM_SOURCE,
                items=_items(items, "relora", "lora_warm"),
            ),
            regime=where,
            needs=needs,
            test_set="shared",
        ),
        Claim(
            id="close-to-full-rank",
            statement="ReLoRA performs comparably to full-rank training: held-out loss within "
            f"{CLOSE_FRACTION:.0%} of full-rank's, where the warm start alone (no update after "
            "it) is not",
            paper=PAPER_TABLE2,
            measured=f"eval loss full-rank {metrics.fmt('full/eval_loss')} "
            f"({_ppl(metrics, 'full')}; {_point(metrics, 'full')}), ReLoRA {metrics.fmt('relora/eval_loss')}, the warm "
            f"start alone {metrics.fmt('warm_start/eval_loss')}; ratio of means {ratio:.3f}",
            criterion=f"ReLoRA's held-out loss vs full-rank's, tolerance {CLOSE_FRACTION:.0%} of "
            f"full-rank's mean loss ({tolerance:.3g} nats; SE over seeds and the shared "
            "evaluation sequences); no-op control: the warm-start model, not trained further",
            test=non_inferiority(
                loss["relora"],
                loss["full"],
                tolerance=tolerance,
                higher_is_better=False,
                source=CLOSE_SOURCE,
                control=loss["warm_start"],
                control_name=f"the warm start alone (step {preset.warm_start}, no update after)",
                items=_items(items, "relora", "full", "warm_start"),
            ),
            regime=where,
            needs=needs,
            test_set="shared",
            moved=moved,
        ),
    ]


def make_checks(metrics: Metrics, preset) -> list[Check]:
    steps = {m: metrics.values(f"{m}/steps") for m in ("full", "lora", "lora_warm", "relora")}
    expected_merges = (preset.steps - 1 - preset.warm_start) // preset.relora_steps
    merges = metrics.values("relora/merges")
    lr_at_merge = max(metrics.values("relora/max_lr_at_merge"))
    cap = 1e-7 * max(metrics.values("relora/lr")) * (1 + 1e-9)  # the chosen peak lr
    reset = min(metrics.values("relora/min_reset_fraction"))
    lora_ranks = metrics.values("lora_warm/rank_max") + metrics.values("lora/rank_max")
    params = metrics.mean("relora/trainable_params") / metrics.mean("full/trainable_params")
    memory = metrics.mean("relora/optimizer_state_bytes") / metrics.mean(
        "full/optimizer_state_bytes"
    )
    warm = metrics.values("warm_start/steps")
    return [
        Check(
            id="no-op-arm-is-the-warm-start",
            statement="the no-op control of close-to-full-rank is the warm-start model itself, "
            "scored on the same evaluation sequences",
            measured=f"steps of the control per seed {sorted(set(warm))}",
            criterion=f"all {preset.warm_start} (the warm start's length)",
            holds=set(warm) == {float(preset.warm_start)},
            why="the control restores the full-rank run's snapshot taken at the end of the warm "
            "start (the state LoRA + warm start and ReLoRA start from) and only evaluates it",
        ),
        Check(
            id="equal-budgets",
            statement="every method ran the same number of optimizer steps on the same batches",
            measured=f"steps { ({m: sorted(set(v)) for m, v in steps.items()}) }",
            criterion=f"all {preset.steps}",
            holds=all(set(v) == {float(preset.steps)} for v in steps.values()),
            why="every method's trainer loops `while step < total_steps` on the same batch "
            "function (the step counter is incremented by each optimizer step)",
        ),
        Check(
            id="merges-at-zero-lr",
            statement="ReLoRA merged every relora_steps, each right after a step at lr ~ 0",
            measured=f"merges per seed {sorted(set(merges))}, largest lr at a merge step "
            f"{lr_at_merge:g}",
            criterion=f"{expected_merges} merges and lr <= 1e-7 x the peak lr ({cap:g}) at each "
            "(0 in the jagged schedule, 1e-7 x peak in the cyclic one)",
            holds=set(merges) == {float(expected_merges)} and lr_at_merge <= cap,
            why="the merge rule fires every relora_steps after the warm start, and both official "
            "schedules put those steps at lr 0 (jagged, cosine_restarts) or 1e-7 x peak (cyclic, "
            "cosine with --cycle_length)",
        ),
        Check(
            id="optimizer-pruned",
            statement=f"each reset zeroed >= {preset.prune_ratio:.0%} of the LoRA Adam entries",
            measured=f"smallest zeroed fraction {reset:.4f}",
            criterion=f">= {preset.prune_ratio} (on every merge, every seed)",
            holds=reset >= preset.prune_ratio - 1e-6,
            why="magnitude pruning zeroes every entry below the prune_ratio quantile of |m| "
            "(one mask for both Adam moments)",
        ),
        Check(
            id="lora-is-low-rank",
            statement="LoRA and LoRA + warm start updates have rank <= r (by construction)",
            measured=f"largest effective rank {max(lora_ranks):g}",
            criterion=f"<= {preset.r}",
            holds=max(lora_ranks) <= preset.r,
            why="the update is B A with B of r columns and W frozen: rank <= r",
        ),
        Check(
            id="memory",
            statement="ReLoRA trains fewer parameters and keeps less optimizer state than "
            "full-rank training (paper: the source of its memory saving)",
            paper="abstract: saves up to 5.5 GB of RAM per GPU",
            measured=f"trainable params ratio {params:.3f}, optimizer-state ratio {memory:.3f} "
            "(embeddings and lm_head stay trainable, which dominates at this size)",
            criterion="both < 1",
            holds=params < 1 and memory < 1,
            why="W is frozen under LoRA: only A, B (r x (d_in + d_out) each), embeddings, norms "
            "and the head train, and Adam keeps state for trainable tensors only",
        ),
    ]

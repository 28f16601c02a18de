"""The paper's claims and the code's checks, computed from the metrics.

Losses are mean next-token cross-entropies on the same fixed held-out batches, in nats per
token (nats per byte on the default data); perplexity is exp(loss).
"""

from __future__ import annotations

import math

from iclr24_common import Check, Claim, Metrics, non_inferiority, superiority, threshold

# The paper's Table 2 (ICLR 2024 version, C4 validation perplexity, 60M/130M/250M/350M) could
# not be retrieved here; see the README for where we searched. Its text states the ordering.
PAPER_TABLE2 = (
    "Table 2 (C4 perplexity, 60M-350M): ReLoRA is close to full-rank training and clearly "
    "better than LoRA and LoRA + warm start at every size (text: 'comparable performance to "
    "regular neural network training'); numbers not retrieved, see README"
)


def _ppl(metrics: Metrics, method: str) -> str:
    return f"ppl {math.exp(metrics.mean(f'{method}/eval_loss')):.3g}"


# beats-lora: 0.2 nats per token (exp(0.2) = 1.22x perplexity), the package's margin since v1
# for the paper's "clearly better than LoRA" (Table 2's numbers not retrieved): a gap any user
# of a language model would notice
LORA_MARGIN = 0.2
# beats-lora-warm-start: the paper says ReLoRA outperforms LoRA + warm start but gives no size
# here (Table 2 not retrieved): any gain beyond 2 SE of the paired differences (margin 0)
WARM_MARGIN = 0.0
# close-to-full-rank: the abstract's "comparable performance to regular neural network
# training", read (since v1 of this package) as within 10% of full-rank's held-out loss
CLOSE_FRACTION = 0.10


def make_claims(metrics: Metrics, preset) -> list[Claim]:
    r = preset.r
    need = min(min(preset.hidden, preset.intermediate), 2 * r)
    bar = max(need, r)  # "> r and >= min(d, 2r)": past both
    medians = metrics.values("relora/rank_median")
    loss = {m: metrics.by_seed(f"{m}/eval_loss") for m in ("full", "lora", "lora_warm", "relora")}
    ratio = metrics.mean("relora/eval_loss") / metrics.mean("full/eval_loss")
    tolerance = CLOSE_FRACTION * metrics.mean("full/eval_loss")
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
            ),
        ),
        Claim(
            id="beats-lora",
            statement="ReLoRA reaches a lower held-out loss than pure low-rank (LoRA) training "
            f"with the same rank, steps and batches, by more than {LORA_MARGIN:g} nats per token",
            paper=PAPER_TABLE2,
            measured=f"eval loss LoRA {metrics.fmt('lora/eval_loss')} ({_ppl(metrics, 'lora')}),"
            f" ReLoRA {metrics.fmt('relora/eval_loss')} ({_ppl(metrics, 'relora')})",
            criterion="ReLoRA's held-out loss vs LoRA's (same rank, steps and batches)",
            test=superiority(
                loss["relora"], loss["lora"], margin=LORA_MARGIN, higher_is_better=False
            ),
        ),
        Claim(
            id="beats-lora-warm-start",
            statement="ReLoRA beats the strongest low-rank baseline, LoRA + the same full-rank "
            "warm start (restarts, not the warm start, make the difference)",
            paper=PAPER_TABLE2,
            measured=f"eval loss LoRA + warm start {metrics.fmt('lora_warm/eval_loss')} "
            f"({_ppl(metrics, 'lora_warm')}), ReLoRA {metrics.fmt('relora/eval_loss')}",
            criterion="ReLoRA's held-out loss vs LoRA + warm start's",
            test=superiority(
                loss["relora"], loss["lora_warm"], margin=WARM_MARGIN, higher_is_better=False
            ),
        ),
        Claim(
            id="close-to-full-rank",
            statement="ReLoRA performs comparably to full-rank training: held-out loss within "
            f"{CLOSE_FRACTION:.0%} of full-rank's",
            paper=PAPER_TABLE2,
            measured=f"eval loss full-rank {metrics.fmt('full/eval_loss')} "
            f"({_ppl(metrics, 'full')}), ReLoRA {metrics.fmt('relora/eval_loss')}; ratio of "
            f"means {ratio:.3f}",
            criterion=f"ReLoRA's held-out loss vs full-rank's, tolerance {CLOSE_FRACTION:.0%} of "
            f"full-rank's mean loss ({tolerance:.3g} nats)",
            test=non_inferiority(
                loss["relora"], loss["full"], tolerance=tolerance, higher_is_better=False
            ),
        ),
    ]


def make_checks(metrics: Metrics, preset) -> list[Check]:
    steps = {m: metrics.values(f"{m}/steps") for m in ("full", "lora", "lora_warm", "relora")}
    expected_merges = (preset.steps - 1 - preset.warm_start) // preset.relora_steps
    merges = metrics.values("relora/merges")
    lr_at_merge = max(metrics.values("relora/max_lr_at_merge"))
    cap = 1e-7 * preset.lr * (1 + 1e-9)
    reset = min(metrics.values("relora/min_reset_fraction"))
    lora_ranks = metrics.values("lora_warm/rank_max") + metrics.values("lora/rank_max")
    params = metrics.mean("relora/trainable_params") / metrics.mean("full/trainable_params")
    memory = metrics.mean("relora/optimizer_state_bytes") / metrics.mean(
        "full/optimizer_state_bytes"
    )
    return [
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

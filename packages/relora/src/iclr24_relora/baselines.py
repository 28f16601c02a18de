"""The baselines of the paper's Table 2, as training configurations of the one loop.

Every method shares the model, seed, batch stream, evaluation batches, total steps, lr and
schedule shape; only what the paper varies differs (official ``scripts/paper_130M.sh``: the
full-rank and the ReLoRA runs both use --lr 0.001, --scheduler cosine, --min_lr_ratio 0.1,
--warmup_steps 500 of 20000 steps; LoRA uses the same budget).

- full-rank: the strongest baseline, every weight trained, plain cosine schedule.
- LoRA: pure low-rank training from scratch, W replaced by s B A (official ``lora_only``).
- LoRA + warm start: the full-rank warm start, then one LoRA on the frozen W (no merges).
"""

from __future__ import annotations

from dataclasses import replace

from .train import METHODS, TrainConfig


def method_configs(base: TrainConfig) -> dict[str, TrainConfig]:
    """``base`` (the ReLoRA configuration) for each of the four methods."""
    return {m: replace(base, method=m) for m in METHODS}

"""ReLoRA: High-Rank Training Through Low-Rank Updates (Lialin et al., ICLR 2024)."""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .data import TokenStream, byte_stream, c4_stream, pydoc_bytes
from .relora import (
    ReLoRALinear,
    cyclic_cosine_schedule,
    effective_rank,
    jagged_cosine_schedule,
    lora_parameters,
    merge_and_reinit,
    relora_layers,
    reset_optimizer_state,
    unwrap_relora,
    wrap_relora,
)
from .train import METHODS, ReLoRATrainer, TrainConfig, tiny_llama

__all__ = [
    "METHODS",
    "ReLoRALinear",
    "ReLoRATrainer",
    "TokenStream",
    "TrainConfig",
    "byte_stream",
    "c4_stream",
    "cyclic_cosine_schedule",
    "effective_rank",
    "jagged_cosine_schedule",
    "lora_parameters",
    "merge_and_reinit",
    "pydoc_bytes",
    "relora_layers",
    "reset_optimizer_state",
    "tiny_llama",
    "unwrap_relora",
    "wrap_relora",
]

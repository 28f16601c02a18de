"""Sparse autoencoders find highly interpretable features in language models (Cunningham,
Ewart, Riggs, Huben & Sharkey, ICLR 2024), https://arxiv.org/abs/2309.08600

An SAE (several L1 coefficients trained at once, dead-feature tracking and resampling, save
and load), the toy model of superposition, activation harvesting and splicing for any
transformers causal LM, the paper's metrics and baselines, IOI activation patching in any
linear basis, and explain-then-simulate autointerpretability through ``iclr24_llm``.
"""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .baselines import Basis, ica_basis, neuron_basis, pca_basis, random_basis
from .data import ToySuperposition, cpython_text
from .harvest import capture, ce_loss, harvest, hook_module, load_harvest, run_to_hook, splice
from .lm import load_lm, tiny_llama, token_sequences
from .metrics import (
    dead_fraction,
    dense_fraction,
    fvu,
    l0,
    loss_recovered,
    mmcs,
    token_simulation_scores,
)
from .patching import PromptPairs, features_needed, ioi_prompts, patching_curve, task_logit_diffs
from .sae import SparseAutoencoder
from .train import TrainConfig, train_sae

__version__ = "0.1.0"

__all__ = [
    "Basis",
    "PromptPairs",
    "SparseAutoencoder",
    "ToySuperposition",
    "TrainConfig",
    "capture",
    "ce_loss",
    "cpython_text",
    "dead_fraction",
    "dense_fraction",
    "fvu",
    "harvest",
    "hook_module",
    "features_needed",
    "ica_basis",
    "ioi_prompts",
    "l0",
    "load_harvest",
    "load_lm",
    "loss_recovered",
    "mmcs",
    "neuron_basis",
    "patching_curve",
    "pca_basis",
    "random_basis",
    "run_to_hook",
    "splice",
    "task_logit_diffs",
    "tiny_llama",
    "token_sequences",
    "token_simulation_scores",
    "train_sae",
]

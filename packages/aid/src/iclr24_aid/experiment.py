"""Reproduction: FWM with its linear decomposition vs FWM + AID on systematic associative
recall (SAR), ratios p in {0, 0.5}, the same seeds for both (paper Section 4.1, official
``SARtask/train.sh``: ratios 0.0 / 0.5 / 1.0, 10 seeds).

Each (method, ratio, seed) is one unit: train with the official optimiser, choose the
checkpoint on validation (seen combinations at the test length, never the test set), then
measure train accuracy, unseen-combination (test) accuracy and the roles' cosines.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from iclr24_common import ExperimentApp, Metrics, Paper, Report, RunContext, preset_option

from .claims import make_checks, make_claims
from .data import SAR, load_words
from .figures import plot_curves
from .fwm import DECOMPOSITIONS, FWM
from .train import TrainConfig, accuracy, role_cosines, train

PAPER = Paper(
    title="Attention-based Iterative Decomposition for Tensor Product Representation",
    authors="Park, Choi & Lee",
    arxiv="2406.01012",
    openreview="FDb2JQZsFH",
    code="https://github.com/taewonpark/AID",
)
PAPER_NEEDS_DATA = True


@dataclass(frozen=True)
class Model:
    """FWM sizes; official values (``SARtask/train.py``) in each docstring."""

    embedding_size: int = 16
    """Token embedding (official 50)."""
    hidden_size: int = 64
    """LSTM hidden units (official 256)."""
    mem_size: int = 8
    """Memory size m = slot size (memory m^3; official 32)."""
    mlp_hidden: int = 16
    """AID MLP hidden units (official 64)."""
    iterations: int = 2
    """AID iterations (official 2)."""
    input_proj_size: int = 16
    """Per-stream input projection (official 32)."""
    num_inputs: int = 3
    """Input feature streams (official 3)."""


@dataclass(frozen=True)
class Preset:
    """One SAR reproduction."""

    seeds: tuple[int, ...] = (0, 1, 2)
    """Seeds (weights, data stream, test pairings); official train.sh uses 10."""
    words: int = 16
    """Words per group K: keys X1, X2, values Y1, Y2 (official 250, 1000 words in all).
    The test sequences store all K X2 keys."""
    pairs: int = 8
    """Pairs per training sequence N (official 100: test / train length 2.5)."""
    ratios: tuple[float, ...] = (0.0, 0.5)
    """Fractions p of X1 keys also trained with Y1 values (official 0.0, 0.5, 1.0)."""
    methods: tuple[str, ...] = DECOMPOSITIONS
    """Decompositions compared: linear (the FWM baseline) and aid."""
    model: Model = field(default_factory=Model)
    train: TrainConfig = field(
        default_factory=lambda: TrainConfig(steps=800, batch_size=64, eval_every=100)
    )
    """Official optimiser (Adam 1e-3, batch 64, clip 50); 800 steps instead of 30000."""
    data: str = "generated"
    """generated tokens, or words (the paper's 1000-word list from --data-dir)."""

    def __post_init__(self):
        if self.data not in ("generated", "words"):
            raise ValueError("data must be generated or words")
        if self.words < 2 or not 1 <= self.pairs <= 2 * self.words:
            raise ValueError("need words >= 2 and 1 <= pairs <= 2 * words")
        if not self.ratios or any(not 0 <= r <= 1 for r in self.ratios):
            raise ValueError("ratios must lie in [0, 1]")
        if not self.methods or any(m not in DECOMPOSITIONS for m in self.methods):
            raise ValueError(f"methods must be among {DECOMPOSITIONS}")
        if self.train.steps < 1 or self.train.eval_every < 1 or self.train.batch_size < 1:
            raise ValueError("train.steps, train.eval_every and train.batch_size must be >= 1")
        if self.model.mem_size < 1 or self.model.iterations < 0:
            raise ValueError("model.mem_size must be >= 1 and model.iterations >= 0")


PRESETS = {
    "smoke": Preset(
        seeds=(0,),
        words=8,
        pairs=4,
        ratios=(0.0,),
        model=Model(hidden_size=32, mem_size=6, mlp_hidden=12),
        train=TrainConfig(steps=30, batch_size=32, eval_every=15, val_sequences=16),
    ),  # fmt: skip
    "default": Preset(),
    # official SAR scale: train.py defaults, 1000 words, N = 100, 10 seeds, p in {0, 0.5, 1}
    "paper": Preset(
        seeds=(0, 1111, 2222, 3333, 4444, 5555, 6666, 7777, 8888, 9999),
        words=250,
        pairs=100,
        ratios=(0.0, 0.5, 1.0),
        data="words",
        model=Model(
            embedding_size=50, hidden_size=256, mem_size=32, mlp_hidden=64, input_proj_size=32
        ),
        train=TrainConfig(),
    ),  # fmt: skip
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    preset_option(parser, "--steps", field="train.steps", type=int, help="training steps")
    preset_option(parser, "--words", field="words", type=int, help="words per group K")
    preset_option(parser, "--pairs", field="pairs", type=int, help="pairs per training sequence")


def make_model(preset: Preset, method: str, vocab_size: int) -> FWM:
    return FWM(vocab_size, method, **asdict(preset.model))


def measure(preset: Preset, method: str, ratio: float, seed: int, log) -> dict:
    """Train one model; its metrics (prefixed ``p<ratio>/<method>/``) and learning curves."""
    torch.manual_seed(seed)
    task = SAR(preset.words, ratio, seed)
    model = make_model(preset, method, task.vocab_size)
    t0 = time.perf_counter()
    res = train(task, model, preset.train, preset.pairs, seed, desc=f"{method} p={ratio} s{seed}")
    seconds = time.perf_counter() - t0
    test = task.test()
    train_acc = accuracy(
        res.model, task.sample(256, preset.pairs, np.random.default_rng([seed, 4]))
    )
    cos = role_cosines(res.model, test)
    out = {
        "train_acc": train_acc,
        "val_acc": max(res.history["val"]),
        "test_acc": accuracy(res.model, test),
        "test_acc_within_y2": accuracy(res.model, test, candidates=task.Y2),
        "gap": train_acc - accuracy(res.model, test),
        "official_max_test_acc": res.official_max_test,
        "final_test_acc": res.final_test,
        "chosen_step": res.chosen_step,
        "role_cos_cross_key": cos["cross_key"],
        "role_cos_same_key": cos["same_key"],
        "params": sum(p.numel() for p in model.parameters()),
        "train_seconds": seconds,
    }
    log.info("%s p=%g seed %d: train %.3f test %.3f (official max-test %.3f) cos %.3f, %.0f s",
             method, ratio, seed, out["train_acc"], out["test_acc"], out["official_max_test_acc"],
             out["role_cos_cross_key"], seconds)  # fmt: skip
    prefix = f"p{ratio:g}/{method}/"
    return {prefix + k: float(v) for k, v in out.items()}, res.history


def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    if preset.data == "words":
        load_words(ctx.data_dir)  # fails at once, with where to get it, if absent
    metrics, curves = Metrics(), {}
    for seed in ctx.seeds:  # the split the claims rely on, measured on the generated data
        task = SAR(preset.words, max(preset.ratios), seed)
        test = task.test()
        stored = set(zip(test.keys[:, 1 : preset.words + 1].flatten().tolist(),
                         test.values[:, 1 : preset.words + 1].flatten().tolist()))  # fmt: skip
        metrics.add("data/test_pairs_seen_in_training", seed, len(stored & task.train_pairs()))
        metrics.add("data/test_pair_coverage", seed, len(stored) / preset.words**2)
    for ratio in preset.ratios:
        for seed in ctx.seeds:
            for method in preset.methods:
                key = f"p{ratio:g}/{method}/seed{seed}"
                values, hist = ctx.cached(
                    key, lambda m=method, r=ratio, s=seed: measure(preset, m, r, s, ctx.log)
                )
                metrics.update(seed, values)
                curves.setdefault((ratio, method), []).append(hist)
            ctx.save_partial(metrics)
    ctx.save_figure(plot_curves(curves), "learning_curves.png")
    return Report(metrics, make_claims(metrics, preset), make_checks(metrics, preset))


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())

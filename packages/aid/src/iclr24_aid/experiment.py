"""Reproduction: FWM with its linear decomposition vs FWM + AID on systematic associative
recall (SAR), ratios p in {0, 0.5}, the same seeds for both (paper Section 4.1, official
``SARtask/train.sh``: ratios 0.0 / 0.5 / 1.0, 10 seeds).

Each (method, ratio, seed) is one unit: train with the official optimiser, choose the
checkpoint on validation (seen combinations at the test length, never the test set), then
measure train accuracy, unseen-combination (test) accuracy and the roles' cosines.

The other experiments (``Preset.experiments``): ``sys-babi``, TPR-RNN vs TPR-RNN + AID on
sys-bAbI (paper Section 4.2; local bAbI files), and ``lm``, the linear Transformer vs linear
Transformer + AID (paper Section 4.4: WikiText-103 from local files; or the CPU demo corpus).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import torch

from iclr24_common import ExperimentApp, Metrics, Paper, Report, RunContext, preset_option

from .babi import load_babi
from .claims import make_checks, make_claims
from .corpus import load_wikitext103, pydoc_corpus, wt103_paths
from .data import SAR, load_words
from .figures import plot_curves
from .fwm import DECOMPOSITIONS, FWM
from .linear_transformer import LinearTransformerLM
from .tasks import BabiTrain, LMTrain, babi_accuracy, lm_nll, train_babi, train_lm
from .tprrnn import TPRRNN
from .train import TrainConfig, accuracy, role_cosines, train

EXPERIMENTS = ("sar", "sys-babi", "lm")
CORPORA = ("wikitext-103", "pydoc")

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
class SysBabi:
    """TPR-RNN on sys-bAbI; sizes of the official ``train.py`` and ``models/AID.py``."""

    tasks: tuple[int, ...] = tuple(range(1, 21))
    """bAbI tasks trained and tested together (official: all 20)."""
    entity_size: int = 90
    """Entity vector size (official 90)."""
    role_size: int = 20
    """Role vector size (official 20)."""
    hidden_size: int = 40
    """TPR-RNN's decomposition MLP hidden units (official 40)."""
    slot_size: int = 64
    """AID slot size (official 64)."""
    mlp_hidden: int = 128
    """AID MLP hidden units (official 128)."""
    train: BabiTrain = field(default_factory=BabiTrain)


@dataclass(frozen=True)
class LM:
    """The linear Transformer LM; defaults are the official ``run.sh`` on WikiText-103."""

    corpus: str = "wikitext-103"
    """wikitext-103 (local files under <data-dir>/aid/wikitext-103) or pydoc (CPython's help
    texts, character level: the CPU demo)."""
    n_layer: int = 16
    """Layers (official 16)."""
    d_model: int = 128
    """Model width (official 128)."""
    n_head: int = 8
    """Heads (official 8)."""
    d_head: int = 16
    """Head size (official 16)."""
    d_inner: int = 2048
    """Feed-forward hidden units (official 2048)."""
    dropout: float = 0.1
    """Dropout (official 0.1)."""
    aid_every: int = 4
    """AID in layers 0, k, 2k... (official n_decomposition_layer 4)."""
    phi: str = "elu"
    """Feature map: elu (ELU + 1, official attn_type 9998) or dpfp."""
    cutoffs: tuple[int, ...] = (20000, 40000, 200000)
    """Adaptive-softmax cutoffs (Transformer-XL's for WikiText-103); () for a tied softmax."""
    train: LMTrain = field(default_factory=LMTrain)


@dataclass(frozen=True)
class Preset:
    """One reproduction: SAR, and optionally sys-bAbI and language modelling."""

    experiments: tuple[str, ...] = ("sar",)
    """Which experiments run: sar (FWM), sys-babi (TPR-RNN), lm (linear Transformer)."""
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
    babi: SysBabi = field(default_factory=SysBabi)
    lm: LM = field(default_factory=LM)

    def __post_init__(self):
        if not self.experiments or any(e not in EXPERIMENTS for e in self.experiments):
            raise ValueError(f"experiments must be among {EXPERIMENTS}")
        if self.lm.corpus not in CORPORA:
            raise ValueError(f"lm.corpus must be one of {CORPORA}")
        if not self.babi.tasks or any(not 1 <= t <= 20 for t in self.babi.tasks):
            raise ValueError("babi.tasks must lie in 1..20")
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
        experiments=EXPERIMENTS,  # + sys-bAbI (official TPR-RNN code) and WikiText-103
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
    # the linear Transformer vs + AID on CPython's help texts (characters): a CPU demo of the
    # LM backbone at a toy scale, not the paper's WikiText-103 setting
    "lm-demo": Preset(
        experiments=("lm",),
        lm=LM(
            corpus="pydoc",
            n_layer=4,
            d_model=64,
            n_head=4,
            d_head=16,
            d_inner=128,
            cutoffs=(),
            train=LMTrain(
                steps=150,
                batch_size=16,
                tgt_len=64,
                lr=2e-3,
                warmup=20,
                eval_every=75,
                eval_tokens=8192,
            ),
        ),
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


def measure_babi(preset: Preset, data, method: str, seed: int, log) -> dict:
    """Train TPR-RNN (``linear``: its own decomposition) or TPR-RNN + AID on every task; the
    checkpoint best on validation; accuracy on the sys-bAbI test (renamed entities)."""
    torch.manual_seed(seed)
    b = preset.babi
    model = TPRRNN(len(data.vocab), data.max_words, method, entity_size=b.entity_size,
                   role_size=b.role_size, hidden_size=b.hidden_size, slot_size=b.slot_size,
                   mlp_hidden=b.mlp_hidden, iterations=preset.model.iterations)  # fmt: skip
    train_cfg = b.train if method == "aid" else replace(b.train, reconstruction=0.0)
    t0 = time.perf_counter()
    model, _ = train_babi(model, data, train_cfg, seed, desc=f"babi {method} s{seed}")
    seconds = time.perf_counter() - t0
    valid, _ = babi_accuracy(model, data, "valid")
    test, _ = babi_accuracy(model, data, "test")
    out = {
        "valid_acc": float(np.mean(list(valid.values()))),
        "sys_test_acc": float(np.mean(list(test.values()))),
        "sys_failed_tasks": float(sum(a < 0.95 for a in test.values())),  # bAbI: error > 5 %
        "train_seconds": seconds,
    }
    log.info("babi %s seed %d: valid %.3f, sys-test %.3f, %.0f s", method, seed,
             out["valid_acc"], out["sys_test_acc"], seconds)  # fmt: skip
    return {f"babi/{method}/{k}": v for k, v in out.items()}


def measure_lm(preset: Preset, corpus, method: str, seed: int, log) -> dict:
    """Train the linear Transformer (``linear``) or + AID; perplexities at the checkpoint best on
    validation (segments of tgt_len, no memory)."""
    torch.manual_seed(seed)
    lm = preset.lm
    model = LinearTransformerLM(len(corpus.vocab), method, lm.n_layer, lm.d_model, lm.n_head,
                                lm.d_head, lm.d_inner, lm.dropout, lm.aid_every, lm.phi,
                                lm.cutoffs)  # fmt: skip
    t0 = time.perf_counter()
    model, _ = train_lm(model, corpus, lm.train, seed, desc=f"lm {method} s{seed}")
    seconds = time.perf_counter() - t0
    valid = corpus.valid[: lm.train.eval_tokens] if lm.train.eval_tokens else corpus.valid
    test = corpus.test[: lm.train.eval_tokens] if lm.train.eval_tokens else corpus.test
    out = {
        "valid_ppl": float(np.exp(lm_nll(model, valid, lm.train.tgt_len))),
        "test_ppl": float(np.exp(lm_nll(model, test, lm.train.tgt_len))),
        "params": float(sum(p.numel() for p in model.parameters())),
        "train_seconds": seconds,
    }
    log.info("lm %s seed %d: valid ppl %.3f, test ppl %.3f, %.0f s", method, seed,
             out["valid_ppl"], out["test_ppl"], seconds)  # fmt: skip
    return {f"lm/{method}/{k}": v for k, v in out.items()}


def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    # every dataset the preset needs is checked before anything trains
    if "sar" in preset.experiments and preset.data == "words":
        load_words(ctx.data_dir)  # fails at once, with where to get it, if absent
    if "lm" in preset.experiments and preset.lm.corpus == "wikitext-103":
        wt103_paths(ctx.data_dir)
    babi = load_babi(ctx.data_dir, preset.babi.tasks) if "sys-babi" in preset.experiments else None
    metrics, curves = Metrics(), {}
    if babi is not None:
        for seed in ctx.seeds:
            for method in preset.methods:
                metrics.update(seed, ctx.cached(f"babi/{method}/seed{seed}",
                    lambda m=method, s=seed: measure_babi(preset, babi, m, s, ctx.log)))  # fmt: skip
            ctx.save_partial(metrics)
    if "lm" in preset.experiments:
        corpus = pydoc_corpus() if preset.lm.corpus == "pydoc" else load_wikitext103(ctx.data_dir)
        for seed in ctx.seeds:
            for method in preset.methods:
                metrics.update(seed, ctx.cached(f"lm/{method}/seed{seed}",
                    lambda m=method, s=seed: measure_lm(preset, corpus, m, s, ctx.log)))  # fmt: skip
            ctx.save_partial(metrics)
    if "sar" not in preset.experiments:
        return Report(metrics, make_claims(metrics, preset), make_checks(metrics, preset))
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

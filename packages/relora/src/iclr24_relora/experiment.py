"""The reproduction: full-rank vs LoRA vs LoRA + warm start vs ReLoRA on one LLaMA, the same
seed, batch stream and evaluation batches (the paper's Table 2 protocol, scaled down); the
command line is ``app`` at the bottom (``iclr24-relora reproduce --help``).

The full-rank run's first ``warm_start`` steps are the warm start of LoRA + warm start and of
ReLoRA (the paper starts both from the same full-rank checkpoint), so each seed trains the
warm start once.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import numpy as np
import torch

from iclr24_common import (
    ExperimentApp,
    Metrics,
    Paper,
    Report,
    RunContext,
    atomic_write_bytes,
    init_distributed,
    preset_option,
)

from .baselines import method_configs
from .claims import make_checks, make_claims
from .data import byte_stream, c4_stream
from .figures import plot_size_sweep, plot_training
from .train import METHODS, ReLoRATrainer, TrainConfig, tiny_llama

PAPER = Paper(
    title="ReLoRA: High-Rank Training Through Low-Rank Updates",
    authors="Lialin, Muckatira, Shivagunde & Rumshisky",
    arxiv="2307.05695",
    code="https://github.com/Guitaricet/relora",
)
PAPER_NEEDS_DATA = True


def _shape(text: str) -> tuple[int, int, int, int]:
    """``"128x352x4x4"`` -> (hidden, intermediate, layers, heads)."""
    parts = text.split("x")
    if len(parts) != 4 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"sweep shape {text!r}: HIDDENxINTERMEDIATExLAYERSxHEADS")
    return tuple(int(p) for p in parts)  # type: ignore[return-value]


def _points(preset) -> dict[str, tuple[float, float]]:
    """``Preset.points`` as method -> (lr, alpha / r); full rank's scale is unused."""
    out = {}
    for text in preset.points:
        method, *values = text.split(":")
        if method not in METHODS or len(values) != (1 if method == "full" else 2):
            raise ValueError(f"point {text!r}: method:lr (full) or method:lr:alpha/r")
        lr, scale = float(values[0]), float(values[1]) if len(values) > 1 else None
        out[method] = (lr, preset.tune_lora_scale[0] if scale is None else scale)
    return out


@dataclass(frozen=True)
class Preset:
    """One preset's scale; each default cites where it comes from."""

    seeds: tuple[int, ...] = (0, 1, 2)
    """Random seeds (model init, batch stream, dropout)."""
    data: str = "bytes"
    """bytes (pydoc_data.topics, byte-level) or c4 (C4 + T5 tokenizer from --data-dir)."""
    steps: int = 240
    """Optimizer steps for every method (paper 130M: 20k)."""
    warm_start: int = 60
    """Full-rank warm-start steps: 25% of the run, the official proportion (Guitaricet/relora
    README at 176f376, 250M recipe: --warmed_up_model .../model_5000 of --num_training_steps
    20000)."""
    relora_steps: int = 60
    """Steps between merges (the ReLoRA cycle): 25% of the run, the official proportion (README
    at 176f376: --relora 5000 --cycle_length 5000 of 20000; 3 cycles after the warm start)."""
    schedule: str = "jagged"
    """jagged: official --scheduler cosine_restarts (training_utils.py at ac33a08 = HEAD
    176f376; the official README's ReLoRA command); cyclic: official --scheduler cosine
    --cycle_length (scripts/paper_130M.sh, e3e42dd): a warm-up of ``warmup`` steps and a
    cosine to 0.1 in every ReLoRA cycle."""
    restart_warmup: int = 1
    """lr ramp after a merge in the jagged schedule: 0.5% of the run, the official proportion
    (README at 176f376: --restart_warmup_steps 100 of 20000; 1.2 steps here, rounded to 1)."""
    warmup: int = 6
    """The first lr warm-up (and, in the cyclic schedule, every cycle's): 2.5% of the run, the
    official proportion (README at 176f376 and paper_130M.sh: --warmup_steps 500 of 20000)."""
    tune_lr: tuple[float, ...] = (1e-3, 3e-3)
    """The tuning grid's peak learning rates, the same for every method (issue 50; fixed before
    any run with it, see TUNING in this file): the official --lr 0.001 (README at 176f376 and
    paper_130M.sh, full-rank and ReLoRA alike) and 3x that (a 240-step run)."""
    tune_lora_scale: tuple[float, ...] = (0.25, 4.0)
    """The tuning grid's LoRA scales alpha / r, the same for every LoRA method (full-rank has
    none): the official 0.25 (--lora_r 128 --lora_alpha 32, torchrun_main.py at 176f376) and
    4.0 (the official alpha 32 at our r 8); beats-lora flipped between the two (issue 50)."""
    val_batches: int = 8
    """Fixed validation batches (of ``batch_size`` windows, from the 5% of the tokens between
    the training and the test tokens) on which the grid point of every method is chosen."""
    r: int = 8
    """LoRA rank (paper: 128 for 60M-350M, r/d = 1/6 at 130M; here 8 of 128, so 2r < d and
    the rank growth over merges is measurable)."""
    dropout: float = 0.1
    """LoRA dropout (official lora_dropout=0.1)."""
    prune_mode: str = "magnitude"
    """magnitude (one mask for m and v), magnitude_independent (official), random, reset."""
    prune_ratio: float = 0.9
    """Official paper_130M.sh --optimizer_magnitude_pruning 0.9."""
    batch_size: int = 16
    """Sequences per step (paper: 600 x 512 tokens)."""
    micro_batch: int = 0
    """Sequences per forward pass per rank (0: the whole batch)."""
    seq_len: int = 64
    """Tokens per sequence (bytes here; paper: 512 T5 tokens)."""
    eval_batches: int = 8
    """Fixed evaluation batches of ``batch_size`` windows from the held-out 10%."""
    hidden: int = 128
    """Official configs/llama_9m.json: hidden 128, MLP 352, 4 layers, 4 heads."""
    intermediate: int = 352
    layers: int = 4
    heads: int = 4
    rank_tol: float = 0.1
    """Singular values above rank_tol x the largest count towards the effective rank."""
    workers: int = 0
    """Local processes for the units (0: one per thread). Smoke: 1, measured on 2 cores
    (1 x 2 threads 14.3 s vs 2 x 1 thread 28.1 s: its units are shorter than a worker's
    start); default: one per thread (2 x 1 thread; 1 x 2 threads was the serial run)."""
    points: tuple[str, ...] = ()
    """Fixed points instead of the grid, one per method, ``method:lr`` for full rank and
    ``method:lr:alpha/r`` for the LoRA methods (empty: tune on the grid). The size sweep runs
    every size at the default run's choice (results/default.json, ``tuning``), not retuned
    per size: a grid per size would quadruple the LoRA arms' cost."""
    sweep: tuple[str, ...] = ()
    """Model shapes ``HIDDENxINTERMEDIATExLAYERSxHEADS``; when given, the whole protocol runs
    once per shape (the preset's own hidden, intermediate, layers and heads are not used) and
    every metric, claim and check is grouped by shape (``h128l4/relora/eval_loss``)."""

    def __post_init__(self):
        if self.data not in ("bytes", "c4"):
            raise ValueError("data must be bytes or c4")
        if min(self.steps, self.relora_steps, self.r, self.batch_size, self.seq_len) < 1:
            raise ValueError("steps, relora_steps, r, batch_size and seq_len must be >= 1")
        if not 0 < self.warm_start < self.steps:
            raise ValueError("warm_start must be in (0, steps)")
        if self.eval_batches < 1 or self.hidden % self.heads:
            raise ValueError("eval_batches must be >= 1 and hidden divisible by heads")
        if self.schedule == "cyclic" and self.warmup >= self.relora_steps:
            raise ValueError("the cyclic schedule needs warmup < relora_steps")
        if not self.tune_lr or not self.tune_lora_scale or min(*self.tune_lr,
                                                               *self.tune_lora_scale) <= 0:  # fmt: skip
            raise ValueError("tune_lr and tune_lora_scale: one or more values, each > 0")
        if self.val_batches < 1 or not 0 <= self.dropout < 1:
            raise ValueError("val_batches must be >= 1 and dropout in [0, 1)")
        if not 0 < self.rank_tol < 1:
            raise ValueError("rank_tol must be in (0, 1)")
        self.train_config(0, self.tune_lr[0], self.tune_lora_scale[0])  # the loop's own checks
        for shape in self.sweep:
            h, _, _, a = _shape(shape)
            if h % a:
                raise ValueError(f"sweep shape {shape!r}: hidden must divide by heads")
        if self.points and sorted(_points(self)) != sorted(METHODS):
            raise ValueError(f"points: one per method of {METHODS}, got {self.points}")

    def train_config(self, seed: int, lr: float, lora_scale: float) -> TrainConfig:
        """The ReLoRA configuration at one grid point (``method_configs`` derives the rest)."""
        return TrainConfig(
            method="relora",
            total_steps=self.steps,
            warm_start_steps=self.warm_start,
            relora_steps=self.relora_steps,
            restart_warmup_steps=self.restart_warmup,
            warmup_steps=self.warmup,
            schedule=self.schedule,
            lr=lr,
            r=self.r,
            alpha=lora_scale * self.r,
            dropout=self.dropout,
            prune_mode=self.prune_mode,
            prune_ratio=self.prune_ratio,
            batch_size=self.batch_size,
            micro_batch=self.micro_batch,
            seq_len=self.seq_len,
            seed=seed,
        )


PRESETS = {
    "smoke": Preset(seeds=(0,), steps=24, warm_start=6, relora_steps=6, warmup=1,
                    restart_warmup=1, batch_size=8, seq_len=32, eval_batches=2, val_batches=2,
                    layers=2, tune_lora_scale=(0.25,), workers=1),
    "default": Preset(),
    # issue 50's size sweep: the default protocol (240 steps in the official proportions, r 8)
    # at four model shapes, every method at the default run's chosen point (not retuned per
    # size), one seed. Shapes: half the official 9M config, then the official
    # configs/llama_9m.json, llama_20m.json and llama_35m.json (Guitaricet/relora@176f376)
    # with our 256-byte vocabulary (0.13M, 0.87M, 3.3M and 10.8M parameters).
    "size-sweep": Preset(seeds=(0,), sweep=("64x176x2x2", "128x352x4x4", "256x688x4x4",
                                            "384x1024x6x8"),
                         points=("full:0.001", "lora:0.003:0.25", "lora_warm:0.003:4",
                                 "relora:0.003:4")),
    # official scripts/paper_130M.sh (commit e3e42dd; removed in 5e26ad6): --scheduler cosine
    # --cycle_length 2000 --relora 2000 --warmup_steps 500 --lr 0.001 --min_lr_ratio 0.1
    # --optimizer_magnitude_pruning 0.9 --total_batch_size 600 --batch_size 50
    # --num_training_steps 20000, configs/llama_130m.json, r = 128 (alpha 32); C4 with the T5
    # tokenizer. The 5k-step full-rank warm start follows the official README's procedure (its
    # example continues from model_5000 of 20000 steps); the May-2023 script has none.
    # (--restart_warmup_steps 100 is passed by the script but unused by --scheduler cosine.)
    # Its grid is the official point alone (lr 1e-3, alpha / r = 32 / 128): 4x 20k steps of
    # a 130M model per grid point is not a tuning budget this package can assume.
    "paper": Preset(seeds=(0,), data="c4", steps=20_000, warm_start=5_000, relora_steps=2_000,
                    schedule="cyclic", warmup=500, restart_warmup=100, r=128, batch_size=600,
                    micro_batch=50, seq_len=512, eval_batches=100, val_batches=20, hidden=768,
                    intermediate=2048, layers=12, heads=12, tune_lr=(1e-3,),
                    tune_lora_scale=(0.25,)),
}  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    preset_option(parser, "--steps", field="steps", type=int, help="optimizer steps per method")
    preset_option(parser, "--rank", field="r", type=int, help="LoRA rank r")
    preset_option(parser, "--relora-steps", field="relora_steps", type=int, help="steps per merge")


def build_model(preset: Preset, vocab: int, seed: int):
    torch.manual_seed(seed)
    return tiny_llama(
        vocab,
        preset.seq_len,
        hidden_size=preset.hidden,
        intermediate_size=preset.intermediate,
        num_hidden_layers=preset.layers,
        num_attention_heads=preset.heads,
    )


def summarise(trainer: ReLoRATrainer, eval_batches, val_batches, preset: Preset,
              seconds: float) -> tuple[dict, list[float]]:  # fmt: skip
    """The method's metrics, and its loss on every evaluation sequence (the items of the
    shared test set: their mean is ``eval_loss``); ``val_loss`` is what the grid is chosen on."""
    ranks = list(trainer.update_ranks(preset.rank_tol).values())
    items = trainer.evaluate_items(eval_batches)
    c = trainer.config
    method = c.method
    restarts = [trainer.lrs[i] for i in range(len(trainer.lrs))
                if method == "relora" and i > preset.warm_start
                and (i - preset.warm_start) % preset.relora_steps == 0]  # fmt: skip
    out = {
        "eval_loss": float(np.mean(items)),
        "val_loss": trainer.evaluate(val_batches),
        "lr": c.lr,
        "train_loss_last10": float(np.mean(trainer.losses[-10:])),
        "rank_median": float(np.median(ranks)),
        "rank_max": float(max(ranks)),
        "trainable_params": float(trainer.trainable_parameters()),
        "optimizer_state_bytes": float(trainer.optimizer_state_bytes()),
        "steps": float(trainer.step),
        "merges": float(trainer.merges),
        "max_lr_at_merge": max(restarts, default=0.0),
        "min_reset_fraction": min(trainer.reset_fractions, default=1.0),
        "train_seconds": seconds,
    }
    if method != "full":
        out["lora_scale"] = c.alpha / c.r
    if method != "lora":  # ||W - W_warmstart|| / ||W_warmstart||: no warm start in pure LoRA
        out["rel_update"] = trainer.relative_update()
    return {f"{method}/{k}": v for k, v in out.items()}, items


# ------------------------------------------------------------------ tuning (issue 50)
# Every method gets the same grid, tune_lr x tune_lora_scale (full-rank, which has no LoRA
# scale, tune_lr alone), on the first seed; each method's point is the one with the lowest
# loss on the validation batches (``Preset.val_batches``, tokens disjoint from the training
# and the test tokens), never on the test batches the claims read; the other seeds run at the
# chosen points. The grid (lr {1e-3, 3e-3} x alpha / r {0.25, 4}) and this rule were fixed
# before any default run with them (in the commit that added this comment; only the smoke
# had run). The warm start of LoRA + warm start and
# ReLoRA (and the no-op arm) is the chosen full-rank run's first ``warm_start`` steps; their
# grid is over the lr and scale of what follows it (the official README, too, warm-starts at
# one lr and runs ReLoRA at another).
WARM_ARMS = ("lora_warm", "relora")


def _grid(preset: Preset, method: str) -> list[tuple[float, float]]:
    if preset.points:  # fixed points, no tuning (the size sweep)
        return [_points(preset)[method]]
    scales = (preset.tune_lora_scale[0],) if method == "full" else preset.tune_lora_scale
    return [(lr, s) for lr in preset.tune_lr for s in scales]


def _key(seed: int, method: str, point: tuple[float, float], warm_lr: float | None = None):
    lr, scale = point
    name = f"seed{seed}/{method}/lr{lr:g}" + ("" if method == "full" else f"_s{scale:g}")
    return name + (f"_ws{warm_lr:g}" if warm_lr is not None else "")


def _best(done: dict, keys: dict[tuple[float, float], str], method: str) -> tuple[float, float]:
    """The grid point with the lowest validation loss (the first in grid order on a tie)."""
    return min(keys, key=lambda p: done[keys[p]][0][f"{method}/val_loss"])


# ------------------------------------------------------------------ units (issue 52)
# One unit per method, seed and grid point, handed to ``ctx.cached_parallel`` in three waves: (1)
# the first seed's grid of full rank (which also returns its state at the warm start) and
# LoRA; (2) reading the chosen full-rank run's snapshot from a file, that seed's grid of
# LoRA + warm start and ReLoRA, and the warm start itself (the no-op arm), with the other
# seeds' full rank and LoRA at their chosen points; (3) the other seeds' warm-started arms.
# Each unit is a module-level function (``functools.partial``), seeds itself
# (``build_model``; the warm-started arms restore the snapshot's RNG state) and rebuilds its
# data from the preset and ``--data-dir``, so it gives a serial run's numbers in any process.
# ``train_seconds`` is reported, not a claim. Under torchrun every rank runs the same units in
# order (``ctx.cached``), as before: a pool or Ray task has no process group.


def _data(preset: Preset, data_dir):
    stream = c4_stream(data_dir) if preset.data == "c4" else byte_stream()
    eval_batches = stream.eval_batches(preset.eval_batches, preset.batch_size, preset.seq_len)
    val_batches = stream.val_batches(preset.val_batches, preset.batch_size, preset.seq_len)
    return stream, eval_batches, val_batches


def _trainer(preset: Preset, seed: int, method: str, point, stream, device) -> ReLoRATrainer:
    config = method_configs(preset.train_config(seed, *point))[method]

    def batches(step: int):
        return stream.batch(seed, step, preset.batch_size, preset.seq_len)

    return ReLoRATrainer(build_model(preset, stream.vocab_size, seed), config, batches, device)


def _warm_blob(warm: str | bytes) -> bytes:
    """The warm-start snapshot: in memory (torchrun ranks), else read from its file."""
    return warm if isinstance(warm, bytes) else Path(warm).read_bytes()


def full_unit(preset: Preset, seed: int, point, data_dir, device):
    """The full-rank run at one grid point; returns its metrics, per-sequence losses, curve and
    its state at the warm start (the start of LoRA + warm start and ReLoRA, as in the paper)."""
    stream, eval_batches, val_batches = _data(preset, data_dir)
    trainer = _trainer(preset, seed, "full", point, stream, device)
    t0 = time.perf_counter()  # training alone (not the model's build, nor transformers' import)
    trainer.train(until=preset.warm_start)
    warm = trainer.snapshot()
    trainer.train()
    seconds = time.perf_counter() - t0
    curve = {"losses": trainer.losses, "lrs": trainer.lrs}
    return *summarise(trainer, eval_batches, val_batches, preset, seconds), curve, warm


def warm_start_unit(preset: Preset, seed: int, point, data_dir, device, warm: str | bytes):
    """The warm-start model as it is (the no-op arm: no update after the warm start)."""
    stream, eval_batches, _ = _data(preset, data_dir)
    trainer = _trainer(preset, seed, "full", point, stream, device).restore(_warm_blob(warm))
    items = trainer.evaluate_items(eval_batches)
    return {"warm_start/eval_loss": float(np.mean(items)),
            "warm_start/steps": float(trainer.step)}, items  # fmt: skip


def method_unit(preset: Preset, seed: int, method: str, point, data_dir, device,
                warm: str | bytes | None = None):  # fmt: skip
    """LoRA (from scratch), or LoRA + warm start / ReLoRA from the full run's warm start, at
    one grid point (lr, alpha / r)."""
    stream, eval_batches, val_batches = _data(preset, data_dir)
    trainer = _trainer(preset, seed, method, point, stream, device)
    if warm is not None:
        trainer.restore(_warm_blob(warm))  # the full-rank run's state at the warm start
    t0 = time.perf_counter()  # training alone, as in full_unit
    trainer.train()
    seconds = time.perf_counter() - t0
    curve = {"losses": trainer.losses, "lrs": trainer.lrs}
    return *summarise(trainer, eval_batches, val_batches, preset, seconds), curve


def _groups(preset: Preset) -> list[tuple[str, Preset]]:
    """(metric prefix, preset) per model: the preset itself (prefix ``""``), or one per shape
    of the size sweep (prefix ``h<hidden>l<layers>/``)."""
    if not preset.sweep:
        return [("", preset)]
    out = []
    for shape in preset.sweep:
        h, i, n, a = _shape(shape)
        out.append((f"h{h}l{n}/", replace(preset, hidden=h, intermediate=i, layers=n, heads=a,
                                          sweep=())))  # fmt: skip
    return out


def run(ctx: RunContext) -> Report:
    info = init_distributed(ctx.torch_device.type)  # under torchrun: one rank per process
    device = f"cuda:{info.local_rank}" if ctx.torch_device.type == "cuda" else str(ctx.torch_device)
    data_dir = ctx.data_dir
    groups = _groups(ctx.preset)
    order = groups[::-1]  # the largest model's units first: the pool's longest jobs start first

    def units(jobs: dict, desc: str) -> dict:
        if info.is_distributed:  # every rank computes each unit in order (DDP), rank 0 stores
            return {key: ctx.cached(key, fn) for key, fn in jobs.items()}
        return ctx.cached_parallel(jobs, desc=desc)

    def warm_of(g: str, seed: int, done: dict, point) -> str | bytes:
        warm = done[g + _key(seed, "full", point)][3]
        if not info.is_distributed:  # later waves read the snapshot from a file
            name = g.replace("/", "_") + f"seed{seed}_lr{point[0]:g}.pt"
            path = ctx.path("warm_start") / name
            atomic_write_bytes(path, warm)
            warm = str(path)
        return warm

    def warm_jobs(g: str, preset: Preset, seed: int, done: dict, points: dict) -> dict:
        full_point = chosen[g]["full"]
        warm = warm_of(g, seed, done, full_point)
        jobs = {g + f"seed{seed}/warm_start/lr{full_point[0]:g}":
                partial(warm_start_unit, preset, seed, full_point, data_dir, device, warm)}  # fmt: skip
        for method in WARM_ARMS:
            for point in points[method]:
                jobs[g + _key(seed, method, point, full_point[0])] = partial(
                    method_unit, preset, seed, method, point, data_dir, device, warm)  # fmt: skip
        return jobs

    tune, rest = ctx.seeds[0], ctx.seeds[1:]
    grid = {m: _grid(ctx.preset, m) for m in ("full", "lora", *WARM_ARMS)}
    if ctx.preset.points:
        ctx.log.info("fixed points, no tuning: %s", ", ".join(ctx.preset.points))
    else:
        ctx.log.info("tuning on seed %d's validation batches: lr %s x alpha/r %s", tune,
                     ctx.preset.tune_lr, ctx.preset.tune_lora_scale)  # fmt: skip
    jobs = {}
    for g, preset in order:
        jobs |= {g + _key(tune, "full", p): partial(full_unit, preset, tune, p, data_dir, device)
                 for p in grid["full"]}  # fmt: skip
        jobs |= {g + _key(tune, "lora", p): partial(method_unit, preset, tune, "lora", p,
                                                    data_dir, device)
                 for p in grid["lora"]}  # fmt: skip
    done = units(jobs, "grid: full rank and LoRA")
    chosen = {g: {m: _best(done, {p: g + _key(tune, m, p) for p in grid[m]}, m)
                  for m in ("full", "lora")} for g, _ in groups}  # fmt: skip
    jobs = {}
    for g, preset in order:
        jobs |= warm_jobs(g, preset, tune, done, grid)
        for seed in rest:
            full, lora = chosen[g]["full"], chosen[g]["lora"]
            jobs[g + _key(seed, "full", full)] = partial(full_unit, preset, seed, full,
                                                         data_dir, device)  # fmt: skip
            jobs[g + _key(seed, "lora", lora)] = partial(method_unit, preset, seed, "lora",
                                                         lora, data_dir, device)  # fmt: skip
    done |= units(jobs, "grid: warm-started arms; other seeds' full rank and LoRA")
    for g, _ in groups:
        ws = chosen[g]["full"][0]
        for m in WARM_ARMS:
            chosen[g][m] = _best(done, {p: g + _key(tune, m, p, ws) for p in grid[m]}, m)
    jobs = {}
    for g, preset in order:
        for seed in rest:
            jobs |= warm_jobs(g, preset, seed, done, {m: [chosen[g][m]] for m in WARM_ARMS})
    if jobs:
        done |= units(jobs, "other seeds' warm-started arms")

    metrics = Metrics()
    claims, checks, tuning, sizes = [], [], {}, {}
    for g, preset in groups:
        m_g, items, curves = _collect(ctx, done, g, chosen[g], tune, grid)
        for name in m_g.names():
            for seed, value in m_g.by_seed(name).items():
                metrics.add(g + name, seed, value)
        c_g, k_g = make_claims(m_g, preset, items), make_checks(m_g, preset)
        if not g:  # the preset's own model: the claims and checks as they are
            claims, checks = c_g, k_g
            tuning = _tuning(done, chosen[g], tune, grid)
            ctx.save_partial(metrics)
            ctx.save_figure(plot_training(curves, preset.warm_start), "training.png")
            continue
        label = g.rstrip("/")
        claims += [replace(c, id=f"{c.id}/{label}") for c in c_g]
        checks += [replace(c, id=f"{c.id}/{label}") for c in k_g]
        sizes[label] = _size_row(m_g, preset, c_g)
        ctx.save_partial(metrics)
    if not sizes:
        return Report(metrics, claims, checks, extra={"tuning": tuning})
    reach = cpu_reach(sizes, ctx.preset)
    ctx.save_figure(plot_size_sweep(sizes), "size_sweep.png")
    extra = {"points": {m: _label(m, p) for m, p in chosen[groups[0][0]].items()},
             "sizes": sizes, "cpu_reach": reach}  # fmt: skip
    return Report(metrics, claims, checks, extra=extra)


def _label(m: str, p) -> str:
    return f"lr {p[0]:g}" + ("" if m == "full" else f", alpha/r {p[1]:g}")


def _tuning(done: dict, chosen: dict, tune: int, grid: dict) -> dict:
    ws = chosen["full"][0]

    def val_loss(m: str, p) -> float:
        return done[_key(tune, m, p, ws if m in WARM_ARMS else None)][0][f"{m}/val_loss"]

    return {
        "seed": tune,
        "rule": "lowest validation loss per method (first in grid order on a tie)",
        "chosen": {m: _label(m, p) for m, p in chosen.items()},
        "val_loss": {m: {_label(m, p): val_loss(m, p) for p in grid[m]} for m in grid},
    }


def _collect(ctx: RunContext, done: dict, g: str, chosen: dict, tune: int, grid: dict):
    """One model's metrics (un-prefixed), per-sequence losses and the first seed's curves."""
    ws = chosen["full"][0]
    for m, p in chosen.items():
        ctx.log.info(
            "%schosen: %s lr %g%s", g, m, p[0], "" if m == "full" else f", alpha/r {p[1]:g}"
        )
    metrics = Metrics()
    curves = None
    items: dict[str, dict[int, list[float]]] = {}  # arm -> seed -> loss per eval sequence
    for seed in ctx.seeds:
        values, seed_curves = {}, {}
        for arm in ("full", "warm_start", "lora", "lora_warm", "relora"):
            if arm == "warm_start":
                key = f"seed{seed}/warm_start/lr{ws:g}"
            else:
                key = _key(seed, arm, chosen[arm], ws if arm in WARM_ARMS else None)
            out = done[g + key]
            values.update(out[0])
            items.setdefault(arm, {})[seed] = out[1]
            if arm != "warm_start":
                seed_curves[arm] = out[2]
                ctx.log.info(
                    "%sseed %d %s: eval loss %.4f", g, seed, arm, out[0][f"{arm}/eval_loss"]
                )
        metrics.update(seed, values)
        curves = curves or seed_curves
    return metrics, items, curves


# ------------------------------------------------------------------ the size sweep (issue 50)
ARMS = ("full", "lora", "lora_warm", "relora")


def _size_row(metrics: Metrics, preset: Preset, claims) -> dict:
    """One shape of the sweep: its size, cost, losses, ordering and ReLoRA's paired gaps
    (from the claims' tests: positive = ReLoRA the lower loss, SE over seeds and sequences)."""
    tokens = preset.steps * preset.batch_size * preset.seq_len
    tests = {c.id: c.test for c in claims}
    loss = {m: metrics.mean(f"{m}/eval_loss") for m in ARMS}
    seconds = {m: metrics.mean(f"{m}/train_seconds") for m in ARMS}
    return {
        "shape": f"{preset.hidden}x{preset.intermediate}x{preset.layers}x{preset.heads}",
        "params": metrics.mean("full/trainable_params"),
        "steps": preset.steps,
        "tokens_per_run": tokens,
        "eval_loss": loss,
        "warm_start_eval_loss": metrics.mean("warm_start/eval_loss"),
        "ordering": " < ".join(sorted(ARMS, key=loss.get)),
        "gap_vs_lora": [tests["beats-lora"].estimate, tests["beats-lora"].se],
        "gap_vs_lora_warm": [
            tests["beats-lora-warm-start"].estimate,
            tests["beats-lora-warm-start"].se,
        ],
        "gap_vs_full": [tests["close-to-full-rank"].estimate, tests["close-to-full-rank"].se],
        "relora_rank_median": metrics.mean("relora/rank_median"),
        # core-seconds per seed (each unit ran on one thread; timings are reported, not judged)
        "train_seconds": seconds,
        "core_seconds_per_seed": sum(seconds.values()),
        # full-rank training from step 0 to the end (the warm start included), one thread
        "full_tokens_per_second": tokens / seconds["full"],
    }


def cpu_reach(sizes: dict, preset: Preset, cores: int = 2, hours: float = 1.0) -> dict:
    """What ``cores`` CPU cores train in ``hours`` (``cores`` one-thread runs side by side, or
    one data-parallel run at ``cores`` x the speed), extrapolated from the sweep's largest
    model: training costs ~6 N FLOPs per token for N parameters (Kaplan et al. 2020), so the
    seconds per token are scaled in proportion to the parameters from the largest measured
    shape (the smaller shapes are dominated by per-step overheads: the exponent fitted over
    all shapes, ``measured_exponent``, is reported beside it). The paper's 60M model at our
    1k-token steps, and at its 20k steps of 600 x 512 tokens, are read off the same line."""
    rows = sorted(sizes.values(), key=lambda row: row["params"])
    anchor = rows[-1]
    budget = cores * hours * 3600.0  # core-seconds
    step_tokens = preset.batch_size * preset.seq_len

    def seconds_per_token(n: float) -> float:
        return n / anchor["params"] / anchor["full_tokens_per_second"]

    def steps_in_budget(n: float) -> float:
        return budget / (seconds_per_token(n) * step_tokens)

    def largest(steps: float) -> float:  # the model whose `steps` steps fill the budget
        return anchor["params"] * budget / (steps * step_tokens) * anchor["full_tokens_per_second"]

    measured = None
    if len(rows) > 1:
        params = np.log([row["params"] for row in rows])
        measured = float(np.polyfit(params, -np.log([row["full_tokens_per_second"]
                                                      for row in rows]), 1)[0])  # fmt: skip
    protocol = budget / anchor["core_seconds_per_seed"]  # sweep protocols of the anchor's size
    paper_hours = seconds_per_token(60e6) * 20_000 * 600 * 512 / 3600
    return {
        "cores": cores,
        "hours": hours,
        "anchor_params": anchor["params"],
        "anchor_full_tokens_per_second": anchor["full_tokens_per_second"],
        "rule": "seconds per token proportional to the parameters, from the largest shape",
        "measured_exponent": measured,
        "step_tokens": step_tokens,
        "steps_in_budget": {
            f"{row['params'] / 1e6:.2g}M": steps_in_budget(row["params"]) for row in rows
        },
        "paper_60m_steps_in_budget": steps_in_budget(60e6),
        "largest_params_at_our_steps": largest(preset.steps),
        # the sweep's protocol (four methods, one seed), its core-seconds scaled the same way
        "largest_params_for_the_protocol": anchor["params"] * protocol,
        "largest_params_at_20k_steps": largest(20_000),
        "paper_60m_20k_steps_of_600x512_tokens_core_hours": paper_hours,
    }


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())

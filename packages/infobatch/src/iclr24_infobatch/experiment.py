"""The reproduction: PAPER, the presets, the measurements and ``run``; the command line is
``app`` at the bottom (``iclr24-infobatch reproduce --help``).

Per dataset of the preset: every method's learning rate is chosen on a validation split of
the training set (the same grid and rule for the method and its baselines); then, per seed,
full-data training, InfoBatch at r = 0.3 / 0.5 / 0.7, the two dynamic baselines at
InfoBatch r = 0.7's budget (random pruning with its per-epoch kept counts, hard pruning with
its total budget) and random pruning at r = 0.5's kept counts (the lossless claim's no-op arm)
train on the whole training set and are scored on the test set; on the
first dataset, one seed of InfoBatch over a grid of r and delta measures the saved fraction,
and one unit times full data against InfoBatch r = 0.5 epoch by epoch, interleaved, over
``timing_repeats`` repeats at one thread (the wall-clock claim). Every finished training run is
a unit (``ctx.cached``), so ``--resume`` continues a run.

Presets: ``smoke`` (a small generated task, 1 seed), ``default`` (the generated task that
full-data training leaves far from 100%, every claim, and the saturated digits, the lossless
claim only; 5 seeds, CPU), ``paper`` (CIFAR-10 ResNet-18 SGD and CIFAR-100 ResNet-50 LARS,
200 epochs, the official settings, from ``<data-dir>/infobatch/``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace

import numpy as np
import torch

from iclr24_common import (
    ExperimentApp,
    Metrics,
    Paper,
    Report,
    RunContext,
    init_distributed,
    preset_option,
    seed_everything,
    torch_threads,
)

from .baselines import FullData, HardPruning, RandomPruning
from .claims import PAPER_TABLE1, make_checks, make_claims
from .data import Split, load_cifar, load_digits_split, locate_cifar, make_mixture_split
from .figures import plot_epoch_sizes, plot_sweep
from .infobatch import DynamicPruner, InfoBatch
from .models import mlp, resnet18, resnet50
from .train import TrainConfig, Trainer

PAPER = Paper(
    title="InfoBatch: Lossless Training Speed Up by Unbiased Dynamic Data Pruning",
    authors="Qin, Wang, Zheng, Gu, Peng, Xu, Zhou, Shang, Sun, Xie & You",
    venue="ICLR 2024 (oral)",
    arxiv="2303.04947",
    code="https://github.com/NUS-HPC-AI-Lab/InfoBatch",
)
DOWNLOAD = "CIFAR-10/100 through torchvision's CIFAR loaders into <data-dir>/infobatch/"

# The paper's prune ratios (Table 1: 30 / 50 / 70%); the baselines take r = 0.7's budget;
# random_r0.5 (random pruning at r = 0.5's per-epoch kept counts) is the no-op arm of the
# lossless claim: the same passes skipped, without InfoBatch's choice of which.
METHODS = ("full", "infobatch_r0.3", "infobatch_r0.5", "infobatch_r0.7", "random_r0.5",
           "random_r0.7", "hard_r0.7")  # fmt: skip
CIFAR = ("cifar10", "cifar100")
DATASETS = ("mixture", "digits", *CIFAR)


@dataclass(frozen=True)
class Task:
    """The network and the optimisation settings of one dataset."""

    model: str
    """mlp, resnet18 or resnet50."""
    train: TrainConfig
    """Optimisation settings (``epochs`` and, when tuned, ``max_lr`` come from the preset)."""


# Official cifar10_example.py: ResNet-18, SGD, OneCycle max-lr 0.05, batch 128, label
# smoothing 0.1, weight decay 5e-4; README CIFAR-100 command: ResNet-50, LARS, --max-lr 5.2
# (batch 256). The small tasks keep those settings with an MLP (batch 64 for the 1347 digits).
TASKS = {
    "mixture": Task("mlp", TrainConfig()),
    "digits": Task("mlp", TrainConfig(batch_size=64)),
    "cifar10": Task("resnet18", TrainConfig(augment=True, eval_batch=500)),
    "cifar100": Task(
        "resnet50",
        TrainConfig(batch_size=256, optimizer="lars", max_lr=5.2, augment=True, eval_batch=500),
    ),  # fmt: skip
}


def parse_method(name: str) -> tuple[str, float]:
    """``"infobatch_r0.5"`` -> ``("infobatch", 0.5)``; ``"full"`` -> ``("full", 0.0)``."""
    kind, _, ratio = name.partition("_r")
    return kind, float(ratio or 0.0)


@dataclass(frozen=True)
class Preset:
    """One preset's scale; each default cites where it comes from."""

    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    """Random seeds (model initialisation, prune draws, data order, augmentation)."""
    datasets: tuple[str, ...] = ("mixture", "digits")
    """mixture (generated, far from 100%), digits (bundled, saturated), cifar10, cifar100;
    the first one also gets the r x delta sweep."""
    epochs: int = 15
    """Training epochs (official --num_epoch 200 on CIFAR; 15 keep the generated task
    compute-limited on 2 CPU cores)."""
    methods: tuple[str, ...] = METHODS
    """Methods to run (full is the reference; random/hard take infobatch_r0.7's budget)."""
    delta: float = 0.875
    """Annealing: the last 1 - delta of the epochs use all data (paper Sec. 4: 0.875)."""
    n_train: int = 20_000
    """Training samples of the generated mixture task."""
    n_test: int = 5_000
    """Test samples of the generated mixture task."""
    lr_grid: tuple[float, ...] = (0.02, 0.05, 0.1)
    """OneCycle peak learning rates tried on validation, for every method alike (empty: the
    task's own, e.g. the official 0.05 / 5.2 on CIFAR)."""
    val_fraction: float = 0.2
    """Share of the training set held out for tuning (the test set is never used for it)."""
    tune_seed: int = 0
    """Seed of the tuning runs and of the validation split."""
    sweep_ratios: tuple[float, ...] = (0.3, 0.5, 0.7, 0.9)
    """Prune ratios r of the saved-fraction sweep (empty: no sweep)."""
    sweep_deltas: tuple[float, ...] = (0.5, 0.875, 1.0)
    """Annealing deltas of the saved-fraction sweep."""
    resnet_width: int = 64
    """The CIFAR ResNets' first-stage width (official 64); smaller only to run the paper path
    on CPU in a test."""
    timing_repeats: int = 7
    """Repeats of the interleaved timing (full data vs InfoBatch r = 0.5, epochs alternated,
    one thread; repeat k trains with seed k) on the first dataset; 0: no timing. Ours: the
    per-repeat time ratios carry the wall-clock claim, so their spread is its SE."""

    def __post_init__(self):
        for name in ("seeds", "datasets", "methods", "lr_grid", "sweep_ratios", "sweep_deltas"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        bad = [d for d in self.datasets if d not in DATASETS]
        if not self.datasets or bad or len(set(self.datasets)) != len(self.datasets):
            raise ValueError(f"datasets must be distinct names among {', '.join(DATASETS)}")
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown:
            raise ValueError(f"unknown methods {unknown}; choose from {', '.join(METHODS)}")
        object.__setattr__(self, "methods", tuple(m for m in METHODS if m in self.methods))
        if "full" not in self.methods:
            raise ValueError("methods must include full (the reference of every claim)")
        for m in self.methods:
            kind, r = parse_method(m)
            if kind in ("random", "hard") and f"infobatch_r{r:g}" not in self.methods:
                raise ValueError(f"{m} takes its budget from infobatch_r{r:g}: add it to methods")
        if self.epochs < 1:
            raise ValueError("epochs must be >= 1")
        if self.resnet_width < 1:
            raise ValueError("resnet_width must be >= 1")
        if self.timing_repeats < 0:
            raise ValueError("timing_repeats must be >= 0")
        if not 0.0 <= self.delta <= 1.0 or any(not 0.0 <= d <= 1.0 for d in self.sweep_deltas):
            raise ValueError("delta and sweep_deltas must be in [0, 1]")
        if any(not 0.0 <= r < 1.0 for r in self.sweep_ratios):
            raise ValueError("sweep_ratios must be in [0, 1)")
        if self.n_train < 100 or self.n_test < 100:
            raise ValueError("n_train and n_test must be >= 100")
        if any(lr <= 0 for lr in self.lr_grid):
            raise ValueError("lr_grid must be positive")
        if not 0.0 < self.val_fraction < 1.0:
            raise ValueError("val_fraction must be in (0, 1)")


PRESETS = {
    "smoke": Preset(seeds=(0,), datasets=("mixture",), epochs=8, n_train=3000, n_test=1000,
                    methods=("full", "infobatch_r0.5", "infobatch_r0.7", "random_r0.5",
                             "random_r0.7", "hard_r0.7"),
                    lr_grid=(0.05, 0.1), sweep_ratios=(0.5, 0.9), sweep_deltas=(0.875, 1.0),
                    timing_repeats=3),
    "default": Preset(),
    "paper": Preset(seeds=(0,), datasets=CIFAR, epochs=200, lr_grid=(), sweep_ratios=(),
                    timing_repeats=2),  # 2: the fewest with an SE (each repeat is 2 runs)
}  # fmt: skip


def add_arguments(p: argparse.ArgumentParser) -> None:
    preset_option(p, "--epochs", field="epochs", type=int, help="training epochs")
    preset_option(p, "--methods", field="methods", nargs="+", choices=METHODS,
                  help="methods to run (full is required)")  # fmt: skip
    preset_option(p, "--datasets", field="datasets", nargs="+", choices=DATASETS,
                  help="datasets to run (cifar10/cifar100 read --data-dir)")  # fmt: skip


# ------------------------------------------------------------------ one training run
def load_split(name: str, preset: Preset, ctx: RunContext) -> Split:
    if name == "digits":
        return load_digits_split()
    if name == "mixture":
        return make_mixture_split(preset.n_train, preset.n_test)
    return load_cifar(ctx.data_dir, name, download=ctx.download)


def build_model(name: str, split: Split, width: int = 64) -> torch.nn.Module:
    if name == "mlp":
        return mlp(split.x_train.shape[1], split.num_classes)
    return {"resnet18": resnet18, "resnet50": resnet50}[name](split.num_classes, width)


def make_pruner(method: str, n: int, epochs: int, delta: float, seed: int,
                budget: dict | None, distributed: bool) -> DynamicPruner:  # fmt: skip
    """The sampler of ``method``; random/hard take ``budget`` (the InfoBatch run whose
    budget they match)."""
    kind, r = parse_method(method)
    kw = {"seed": seed, "distributed": distributed}
    if kind == "full":
        return FullData(n, epochs, **kw)
    if kind == "infobatch":
        return InfoBatch(n, epochs, prune_ratio=r, delta=delta, **kw)
    if kind == "random":  # InfoBatch's per-epoch kept counts: the same per-epoch budget
        return RandomPruning(n, epochs, budget["kept_per_epoch"], **kw)
    # hard: InfoBatch's total budget spread evenly over all epochs (no annealing)
    return HardPruning(n, epochs, prune_fraction=1.0 - float(np.mean(budget["kept_per_epoch"])) / n,
                       **kw)  # fmt: skip


@dataclass
class Runner:
    """Trains one method on one split with one seed and learning rate (a unit of work)."""

    task: Task
    epochs: int
    device: torch.device
    rank: int = 0
    distributed: bool = False
    width: int = 64

    def trainer(self, split: Split, method: str, seed: int, lr: float, delta: float,
                budget: dict | None = None) -> Trainer:  # fmt: skip
        """The run, built and not yet trained (epoch by epoch: ``Trainer.epoch``)."""
        seed_everything(seed)
        gen = torch.Generator().manual_seed(seed * 1000 + self.rank)  # augmentation
        model = build_model(self.task.model, split, self.width)
        pruner = make_pruner(method, len(split.y_train), self.epochs, delta, seed, budget,
                             self.distributed)  # fmt: skip
        cfg = replace(self.task.train, epochs=self.epochs, max_lr=lr)
        return Trainer(split, model, pruner, cfg, self.device, gen)

    def __call__(self, split: Split, method: str, seed: int, lr: float, delta: float,
                 budget: dict | None = None) -> dict:  # fmt: skip
        trainer = self.trainer(split, method, seed, lr, delta, budget)
        for _ in range(self.epochs):
            trainer.epoch()
        return {**trainer.result(), "max_lr": lr}


# ------------------------------------------------------------------ the measurements
def tune(ctx: RunContext, name: str, split: Split, runner: Runner) -> tuple[dict, dict]:
    """Each method's learning rate: the best validation accuracy over ``lr_grid``, trained on
    the rest of the training set (tuning seed). Returns (chosen lr, validation accuracies)."""
    preset = ctx.preset
    if not preset.lr_grid:
        return {m: runner.task.train.max_lr for m in preset.methods}, {}
    val = split.validation(preset.val_fraction, preset.tune_seed)
    scores: dict[str, dict[float, float]] = {m: {} for m in preset.methods}
    for lr in preset.lr_grid:
        done: dict[str, dict] = {}
        for m in preset.methods:
            budget = done.get(f"infobatch_r{parse_method(m)[1]:g}")
            done[m] = ctx.cached(f"{name}/tune/{m}/lr{lr:g}", lambda m=m, lr=lr, b=budget:
                                 runner(val, m, preset.tune_seed, lr, preset.delta, b))  # fmt: skip
            scores[m][lr] = done[m]["test_acc"]
    chosen = {m: max(preset.lr_grid, key=lambda lr, m=m: scores[m][lr]) for m in preset.methods}
    ctx.log.info("%s: learning rates chosen on validation: %s", name,
                 ", ".join(f"{m} {lr:g}" for m, lr in chosen.items()))  # fmt: skip
    return chosen, scores


def seed_runs(ctx: RunContext, name: str, split: Split, runner: Runner, lrs: dict,
              seed: int) -> dict[str, dict]:  # fmt: skip
    """Every method of the preset with one seed, on the whole training set. The keys end in
    -v2 since a run returns whether each test sample was right (``test_correct``)."""
    done: dict[str, dict] = {}
    for m in ctx.preset.methods:
        budget = done.get(f"infobatch_r{parse_method(m)[1]:g}")
        done[m] = ctx.cached(f"{name}/{m}/seed{seed}-v2", lambda m=m, b=budget:
                             runner(split, m, seed, lrs[m], ctx.preset.delta, b))  # fmt: skip
        r = done[m]
        ctx.log.info("%s/%s/seed%d: acc %.2f%%, saved %.1f%% of passes, %.1f s (lr %g)", name,
                     m, seed, r["test_acc"], 100 * r["saved_fraction"], r["train_seconds"],
                     r["max_lr"])  # fmt: skip
    return done


def sweep(ctx: RunContext, name: str, split: Split, runner: Runner, lr: float) -> dict:
    """InfoBatch over the grid of r x delta, first seed: the saved fraction's dependence."""
    seed, out = ctx.seeds[0], {}
    for r in ctx.preset.sweep_ratios:
        for d in ctx.preset.sweep_deltas:
            out[r, d] = ctx.cached(f"{name}/sweep/r{r:g}_d{d:g}", lambda r=r, d=d:
                                   runner(split, f"infobatch_r{r:g}", seed, lr, d))  # fmt: skip
    ctx.log.info("%s: saved fraction over r x delta: %s", name,
                 ", ".join(f"r{r:g}/d{d:g} {v['saved_fraction']:.3f}" for (r, d), v in out.items()))  # fmt: skip
    return out


TIMED = ("full", "infobatch_r0.5")  # the wall-clock claim's pair


def interleaved_timing(ctx: RunContext, split: Split, runner: Runner, lrs: dict) -> dict:
    """Full data and InfoBatch r = 0.5 trained side by side, one epoch of each in turn (the
    one that goes first alternates every epoch and every repeat), at one thread, so that both
    see the same load of a shared machine; repeat k trains with seed k. Per repeat: each
    method's summed epoch seconds, their ratio and InfoBatch's share of passes saved."""
    out: dict[str, list[float]] = {"full_seconds": [], "infobatch_seconds": [], "time_ratio": [],
                                   "saved_fraction": []}  # fmt: skip
    with torch_threads(1):  # one thread: no spinning OpenMP pool fighting other processes
        for k in range(ctx.preset.timing_repeats):
            trainers = [runner.trainer(split, m, k, lrs[m], ctx.preset.delta) for m in TIMED]
            secs = [0.0, 0.0]
            for epoch in range(runner.epochs):
                order = (0, 1) if (epoch + k) % 2 == 0 else (1, 0)
                for i in order:
                    secs[i] += trainers[i].epoch()
            out["full_seconds"].append(secs[0])
            out["infobatch_seconds"].append(secs[1])
            out["time_ratio"].append(secs[1] / secs[0])
            out["saved_fraction"].append(trainers[1].pruner.saved_fraction())
    ctx.log.info("interleaved timing, %d repeats at 1 thread: InfoBatch/full time ratios %s "
                 "(median %.3f)", len(out["time_ratio"]),
                 ", ".join(f"{r:.3f}" for r in out["time_ratio"]),
                 float(np.median(out["time_ratio"])))  # fmt: skip
    return out


def _add(metrics: Metrics, prefix: str, seed: int, rec: dict) -> None:
    for key in ("test_acc", "saved_fraction", "predicted_saved_fraction", "low_fraction",
                "train_seconds", "max_lr"):  # fmt: skip
        if rec.get(key) is not None:
            metrics.add(prefix + key, seed, rec[key])


def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    for name in preset.datasets:  # the paper's data first: a missing set stops the run at once
        if name in CIFAR:
            locate_cifar(ctx.data_dir, name, download=ctx.download)
    # Under torchrun: one process per device, DistributedDataParallel, sharded epochs.
    info = init_distributed(ctx.torch_device.type)
    device = ctx.torch_device
    if info.is_distributed and device.type == "cuda":
        device = torch.device("cuda", info.local_rank)
    metrics, records, sweeps, tuning = Metrics(), {}, {}, {}
    for name in preset.datasets:
        split = load_split(name, preset, ctx)
        runner = Runner(TASKS[name], preset.epochs, device, info.rank, info.is_distributed,
                        preset.resnet_width)  # fmt: skip
        ctx.log.info("%s: %d train / %d test, %d classes, %s, %d epochs", name,
                     len(split.y_train), len(split.y_test), split.num_classes,
                     runner.task.model, preset.epochs)  # fmt: skip
        lrs, tuning[name] = tune(ctx, name, split, runner)
        for seed in ctx.seeds:
            for m, rec in seed_runs(ctx, name, split, runner, lrs, seed).items():
                records[name, m, seed] = rec
                _add(metrics, f"{name}/{m}/", seed, rec)
            ctx.save_partial(metrics)
        if name == preset.datasets[0] and preset.sweep_ratios and preset.sweep_deltas:
            lr = lrs.get("infobatch_r0.5", runner.task.train.max_lr)
            sweeps[name] = sweep(ctx, name, split, runner, lr)
            for (r, d), rec in sweeps[name].items():
                _add(metrics, f"{name}/sweep-r{r:g}-d{d:g}/", ctx.seeds[0], rec)
        if name == preset.datasets[0] and preset.timing_repeats and set(TIMED) <= set(lrs):
            timing = ctx.cached(f"{name}/interleaved-timing",
                                lambda s=split, r=runner, lr=lrs: interleaved_timing(ctx, s, r, lr))  # fmt: skip
            for key, values in timing.items():
                for k, v in enumerate(values):  # repeat k trained with seed k
                    metrics.add(f"{name}/interleaved/{key}", k, v)
    ctx.save_figure(plot_epoch_sizes(records, preset, ctx.seeds[0]), "epoch_sizes.png")
    for name, grid in sweeps.items():
        ctx.save_figure(plot_sweep(grid, name, preset, metrics), f"saved_fraction_{name}.png")
    extra = {
        "tasks": {n: {"model": TASKS[n].model, "train": replace(TASKS[n].train, epochs=preset.epochs)}
                  for n in preset.datasets},
        "tuning": {n: {m: {f"{lr:g}": acc for lr, acc in s.items()} for m, s in t.items()}
                   for n, t in tuning.items()},
        "paper_table1": PAPER_TABLE1,
    }  # fmt: skip
    return Report(metrics=metrics, claims=make_claims(metrics, preset, records),
                  checks=make_checks(metrics, records, preset), extra=extra)  # fmt: skip


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())

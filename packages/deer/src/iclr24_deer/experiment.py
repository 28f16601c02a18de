"""The reproduction: PAPER, the presets, the measurements and ``run``; the command line is
``app`` at the bottom (``iclr24-deer reproduce --help``).

Four measurements, each a unit per seed (stored under ``--out/units``, so ``--resume`` skips
what finished):
(1) DEER equals the sequential GRU (outputs and gradients), (2) training with DEER equals
sequential training step for step, and how long a step takes, (3) the ODE variant on the
two-body problem against scipy, (4) forward speed over a hidden size x T grid against nn.GRU
(torch's C++ loop on CPU, cuDNN on GPU: the strongest sequential baseline), with the same
threads for every method. The paper preset adds EigenWorms training with the official model;
the grid preset is the paper's speed grid alone (scripts/bench_gpu.py runs it).

Units (issue 52): every unit that measures no claimed time (equivalence, gradients, ODE,
saved-memory and peak-RSS per seed; EigenWorms fits per seed) goes through
``ctx.cached_parallel``; the units whose timings are claims (the training comparison with
its s/step, the speed grid) stay serial in the driver, one after another at the run's
threads, after the pool has ended, so nothing else runs beside a timed call.
"""

from __future__ import annotations

import argparse
import copy
import functools
import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch

from iclr24_common import (
    ExperimentApp,
    Metrics,
    Paper,
    Report,
    RunContext,
    preset_option,
    progress,
    seed_everything,
    torch_threads,
)

from .bench import (
    PAPER_HIDDEN,
    PAPER_LENGTHS,
    benchmark_point,
    full_jacobian_bytes,
    peak_rss_growth,
    saved_tensor_bytes,
    sequential_threads,
)
from .claims import make_checks, make_claims, make_premises
from .classifier import ClassifierConfig, ResidualGRUClassifier
from .data import (
    load_eigenworms,
    make_lowfreq_classification,
    two_body_initial,
    two_body_reference,
    two_body_rhs,
)
from .deer import GRUCellFn, deer_rnn, sequential_rnn
from .figures import plot_speed, plot_training
from .ode import deer_ode
from .train import accuracy, fit, run_steps

PAPER = Paper(
    title="Parallelizing non-linear sequential models over the sequence length",
    authors="Lim, Zhu, Selfridge & Kasim",
    arxiv="2309.12252",
    code="https://github.com/machine-discovery/deer",
)
DOWNLOAD = "EigenWorms from the UEA archive through aeon (pip install aeon)"


@dataclass(frozen=True)
class Preset:
    """One preset's scale; the paper's or the official code's value in each docstring."""

    seeds: tuple[int, ...] = (0, 1, 2)
    """Random seeds (weights, inputs, batch order)."""
    data: Literal["generated", "eigenworms"] = "generated"
    """Training data: the generated EigenWorms-like task, or EigenWorms from --data-dir."""
    eq_hidden: tuple[int, ...] = (1, 4, 16)
    """GRU hidden sizes of the equivalence grid (official benchmark grid: 1..64)."""
    eq_lengths: tuple[int, ...] = (1_000, 10_000)
    """Sequence lengths of the equivalence grid (official: 1k..1M)."""
    eq_batch: int = 4
    """Batch of the equivalence grid (official benchmark: 16)."""
    grad_hidden: int = 16
    """Hidden size of the gradient check."""
    grad_length: int = 1_000
    """Sequence length of the gradient check."""
    train_length: int = 2_000
    """T of the generated task (EigenWorms: 17,984)."""
    train_size: int = 128
    """Generated training sequences (EigenWorms train split: 181)."""
    test_size: int = 128
    """Generated held-out sequences."""
    train_steps: int = 40
    """Adam steps of the DEER-vs-sequential training comparison."""
    train_batch: int = 8
    """Batch size (official EigenWorms: 4)."""
    width: int = 8
    """Width and GRU hidden size of the classifier (official --nstates 32)."""
    layers: int = 2
    """Residual GRU layers (official --nlayer 5)."""
    lr: float = 3e-3
    """Adam learning rate (official 3e-5 over thousands of epochs; larger for a 40-step run)."""
    epochs: int = 0
    """EigenWorms epochs to the best validation accuracy (0: none; official: until 1000
    epochs without improvement)."""
    ode_points: int = 2_001
    """Time points of the two-body ODE."""
    ode_t_end: float = 5.0
    """Integration time (~0.8 orbit)."""
    speed_hidden: tuple[int, ...] = (1, 4, 16)
    """Hidden sizes of the speed grid (official grid: 1, 2, 4, ..., 64)."""
    speed_lengths: tuple[int, ...] = (1_000, 10_000, 100_000)
    """Sequence lengths of the speed grid (official: 1k, 3k, ..., 1M)."""
    speed_batch: int = 16
    """Batch of the speed grid (official benchmarks/speedup/seq1d.py: 16)."""
    speed_max_bytes: int = 400 * 2**20
    """Skip grid points whose full Jacobian tensor exceeds this many bytes."""
    speed_reps: int = 3
    """Timed calls per method and point, after one warm-up call (official: 5 warm-up, 20
    timed; the median is kept)."""
    mem_hidden: int = 64
    """Hidden size of the peak-RSS comparison DEER vs quasi-DEER (issue 40: n = 64)."""
    mem_length: int = 2_000
    """T of the peak-RSS comparison (batch 2, forward + backward, one child process each)."""
    speed_budget_s: float = 0.0
    """Start no new grid point after this many seconds of grid (0: no limit); the points left
    are recorded as skipped, and --resume runs them."""
    workers: int | None = 2
    """Processes for the units on the local executor (``--workers`` overrides; None: one per
    thread): 2 x 1 thread, measured on the smoke since the default takes > 150 s (2 threads,
    under the CPU lock, 2026-12-05: 28.8 s with 2 workers, 35.1 s with 1 worker of 2
    threads). The timed units run in the driver at the run's threads either way."""

    def __post_init__(self):
        if self.data not in ("generated", "eigenworms"):
            raise ValueError("data must be generated or eigenworms")
        for name in ("mem_hidden", "mem_length", "eq_batch", "grad_hidden", "grad_length",
                     "train_length", "train_size",
                     "test_size", "train_batch", "width", "layers", "speed_batch"):  # fmt: skip
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if min(self.train_steps, self.epochs, self.ode_points, self.speed_reps - 1) < 0:
            raise ValueError("train_steps, epochs and ode_points must be >= 0, speed_reps >= 1")
        if self.train_batch > self.train_size and self.data == "generated":
            raise ValueError("train_batch must be <= train_size")
        if self.workers is not None and self.workers < 1:
            raise ValueError("workers must be >= 1 (or None: one per thread)")
        if min((*self.eq_hidden, *self.speed_hidden, *self.eq_lengths, *self.speed_lengths),
               default=1) < 1:  # fmt: skip
            raise ValueError("grid sizes must be >= 1")


# fmt: off
PRESETS = {
    "smoke": Preset(
        seeds=(0, 1), eq_hidden=(1, 4), eq_lengths=(200, 1_000), eq_batch=2, grad_hidden=4,
        grad_length=200, train_length=300, train_size=32, test_size=32, train_steps=6,
        train_batch=4, layers=1, mem_length=200, ode_points=401, ode_t_end=2.0, speed_hidden=(1, 4),
        speed_lengths=(1_000, 10_000), speed_batch=4,
    ),
    "default": Preset(),
    # EigenWorms with the official model (experiments/04_rnn_eigenworms: --nstates 32
    # --nlayer 5 --lr 3e-5 --batch_size 4) and the official speed grid
    "paper": Preset(
        seeds=(23, 24, 25), data="eigenworms", train_steps=20, train_batch=4, width=32, layers=5,
        lr=3e-5, epochs=100, speed_hidden=PAPER_HIDDEN, speed_lengths=PAPER_LENGTHS,
        speed_max_bytes=16 * 2**30, speed_budget_s=1800.0,
    ),
    # the paper's Figure 2 grid alone, for a GPU (scripts/bench_gpu.py): no data needed
    "grid": Preset(
        eq_hidden=(), train_steps=0, ode_points=0, speed_hidden=PAPER_HIDDEN,
        speed_lengths=PAPER_LENGTHS, speed_max_bytes=16 * 2**30, speed_budget_s=480.0,
    ),
}
# fmt: on


def add_arguments(parser: argparse.ArgumentParser) -> None:
    preset_option(parser, "--epochs", field="epochs", type=int,
                  help="EigenWorms training epochs (paper preset)")  # fmt: skip
    preset_option(parser, "--skip-speed", field="speed_hidden", action="store_const", const=(),
                  help="skip the speed grid")  # fmt: skip


# ----------------------------------------------------------------------------------------
# 1. no loss of accuracy: DEER == sequential
# ----------------------------------------------------------------------------------------


def equivalence(preset: Preset, seed: int, device) -> dict[str, float]:
    """Max |DEER - nn.GRU| and |DEER - GRUCell loop| over the grid, fp32 and fp64."""
    out = {"err_fp32": 0.0, "err_fp64": 0.0, "iters_max": 0.0, "nonconverged": 0.0}
    grid = [(n, T) for n in preset.eq_hidden for T in preset.eq_lengths]
    for n, T in progress(grid, desc=f"equivalence seed {seed}"):
        g = torch.Generator().manual_seed(seed * 1000 + n * 10 + T)
        for dtype, key in ((torch.float32, "err_fp32"), (torch.float64, "err_fp64")):
            torch.manual_seed(seed * 1000 + n)
            gru = torch.nn.GRU(n, n, batch_first=True).to(device, dtype)
            cellm = torch.nn.GRUCell(n, n).to(device, dtype)
            cellm.load_state_dict({k.removesuffix("_l0"): v for k, v in gru.state_dict().items()})
            xs = torch.randn(preset.eq_batch, T, n, generator=g, dtype=dtype).to(device)
            h0 = 0.1 * torch.randn(preset.eq_batch, n, generator=g, dtype=dtype).to(device)
            with torch.no_grad():
                res = deer_rnn(GRUCellFn.from_module(gru), h0, xs)
                ref_gru = gru(xs, h0[None])[0]
                ref_loop = sequential_rnn(lambda h, x, c=cellm: c(x, h), h0, xs)
            err = max(float((res.y - ref_gru).abs().max()), float((res.y - ref_loop).abs().max()))
            out[key] = max(out[key], err)
            out["iters_max"] = max(out["iters_max"], res.iterations)
            out["nonconverged"] += float(not res.converged)
    return out


def gradient_check(preset: Preset, seed: int, device) -> dict[str, float]:
    """Relative error of DEER's adjoint gradients against autograd through the loop."""
    out = {}
    n, T = preset.grad_hidden, preset.grad_length
    for dtype, key in ((torch.float32, "grad_relerr_fp32"), (torch.float64, "grad_relerr_fp64")):
        torch.manual_seed(seed)
        gru = torch.nn.GRU(n, n, batch_first=True).to(device, dtype)
        xs = torch.randn(2, T, n, dtype=dtype, device=device, requires_grad=True)
        h0 = (0.1 * torch.randn(2, n, dtype=dtype, device=device)).requires_grad_()
        w = torch.randn(2, T, n, dtype=dtype, device=device)
        leaves = [xs, h0, *gru.parameters()]
        cell = GRUCellFn.from_module(gru)
        g_deer = torch.autograd.grad((deer_rnn(cell, h0, xs).y * w).sum(), leaves)
        g_seq = torch.autograd.grad((sequential_rnn(cell, h0, xs) * w).sum(), leaves)
        num = math.sqrt(sum(float((a - b).pow(2).sum()) for a, b in zip(g_deer, g_seq)))
        den = math.sqrt(sum(float(b.pow(2).sum()) for b in g_seq))
        out[key] = num / den
    return out


# ----------------------------------------------------------------------------------------
# 2. training: DEER and sequential from one initialisation, on the same batches
# ----------------------------------------------------------------------------------------


def training_data(preset: Preset, seed: int, splits: dict | None):
    """(x_train, y_train, x_test, y_test): the generated task or EigenWorms."""
    if splits is not None:
        return (*splits["train"], *splits["test"])
    n = preset.train_size + preset.test_size
    x, y = make_lowfreq_classification(n, preset.train_length, seed=seed)
    a = preset.train_size
    return x[:a], y[:a], x[a:], y[a:]


def classifier_config(preset: Preset, x: torch.Tensor, *labels: torch.Tensor) -> ClassifierConfig:
    nclass = max(int(y.max()) for y in labels) + 1
    return ClassifierConfig(ninp=x.shape[-1], nstate=preset.width, nlayer=preset.layers,
                            nclass=nclass)  # fmt: skip


PROBE_STEPS = 11  # steps timed per thread count before the sequential baseline trains
FINAL_STEPS = 10  # the final training loss: the mean batch loss of the last 10 steps


def native_threads(base, xtr, ytr, order, lr, device, out: dict, seed: int) -> int:
    """Time ``PROBE_STEPS`` training steps of the nn.GRU model at each of
    ``sequential_threads`` (first step excluded); record them in ``out`` and return the
    faster thread count."""
    seconds = {}
    for threads in sequential_threads(device):
        probe = copy.deepcopy(base)
        probe.set_method("native")
        with torch_threads(threads):
            run = run_steps(probe, xtr, ytr, order[:PROBE_STEPS], lr,
                            desc=f"time native at {threads} thread(s) seed {seed}")  # fmt: skip
        seconds[threads] = float(np.mean(run["seconds"][1:] or run["seconds"]))
    default = torch.get_num_threads()
    out["seq_seconds_per_step_default_threads"] = seconds[default]
    out["seq_seconds_per_step_1thread"] = seconds[1]
    return min(seconds, key=seconds.get)


def train_compare(preset: Preset, seed: int, device, splits, log) -> tuple[dict, dict]:
    """Train the residual GRU classifier twice from one initialisation on one batch order:
    GRU layers by DEER and by torch's sequential nn.GRU kernel (cuDNN on GPU)."""
    xtr, ytr, xte, yte = training_data(preset, seed, splits)
    seed_everything(seed)
    base = ResidualGRUClassifier(classifier_config(preset, xtr, ytr, yte)).to(device)
    order = torch.randint(0, len(ytr), (preset.train_steps, preset.train_batch),
                          generator=torch.Generator().manual_seed(seed))  # fmt: skip
    out, curves = {}, {}
    # the no-op arm: the untrained model's loss on the batches the final loss averages
    last = order[-FINAL_STEPS:]
    with torch.no_grad():
        init = copy.deepcopy(base)
        init.set_method("native")
        out["init_final_loss"] = float(np.mean([
            float(torch.nn.functional.cross_entropy(init(xtr[i].to(device)), ytr[i].to(device)))
            for i in last]))  # fmt: skip
    for method, key in (("deer", "deer"), ("native", "seq")):
        model = copy.deepcopy(base)
        model.set_method(method)
        threads = torch.get_num_threads()
        if method == "native" and len(sequential_threads(device)) > 1:
            # the sequential baseline at its best: time its first steps (same init and
            # batches) at the default thread count and at 1 thread, train at the faster
            threads = native_threads(base, xtr, ytr, order, preset.lr, device, out, seed)
        with torch_threads(threads):
            run = run_steps(model, xtr, ytr, order, preset.lr, desc=f"train {method} seed {seed}")
        curves[method] = run["losses"]
        model.set_method("native")
        with torch.no_grad():
            logits = torch.cat([model(xte[i : i + 16].to(device)) for i in range(0, len(yte), 16)])
            out[f"{key}_test_loss"] = float(torch.nn.functional.cross_entropy(logits.cpu(), yte))
        out[f"{key}_test_acc"] = accuracy(model, xte, yte)
        out[f"{key}_final_loss"] = float(np.mean(run["losses"][-FINAL_STEPS:]))
        # the first step pays one-off costs (allocator, cuDNN plans): time the rest
        timed = run["seconds"][1:] or run["seconds"]
        out[f"{key}_seconds_per_step"] = float(np.mean(timed))
        if run["iters"]:
            out["deer_mean_iters"] = float(np.mean(run["iters"]))
        log.info("train %s seed %d: final loss %.4f, test acc %.3f, %.3f s/step", method, seed,
                 out[f"{key}_final_loss"], out[f"{key}_test_acc"],
                 out[f"{key}_seconds_per_step"])  # fmt: skip
    out["loss_rel_gap"] = (
        abs(out["deer_final_loss"] - out["seq_final_loss"]) / out["seq_final_loss"]
    )
    out["init_loss_rel_gap"] = (
        abs(out["init_final_loss"] - out["seq_final_loss"]) / out["seq_final_loss"]
    )
    return out, curves


def eigenworms_fit(preset: Preset, seed: int, device, data_dir: str, checkpoint: str,
                   resume: bool) -> dict:  # fmt: skip
    """The paper's EigenWorms run (a unit: it reads the splits from ``data_dir`` itself): the
    official model trained with DEER to the best validation accuracy; first the logit gap
    DEER vs nn.GRU at initialisation on real data. ``checkpoint`` holds every epoch."""
    splits = load_eigenworms(data_dir)  # the driver fetched them (--download) before
    xtr, ytr = splits["train"]
    seed_everything(seed)
    labels = [splits[k][1] for k in ("train", "val", "test")]
    model = ResidualGRUClassifier(classifier_config(preset, xtr, *labels)).to(device)
    with torch.no_grad():
        xb = splits["val"][0][:2].to(device)
        out_deer = model(xb)
        model.set_method("native")
        gap = float((out_deer - model(xb)).abs().max())
        model.set_method("deer")
    res = fit(model, splits, epochs=preset.epochs, batch=preset.train_batch, lr=preset.lr,
              seed=seed, checkpoint=Path(checkpoint), resume=resume,
              log=logging.getLogger("iclr24.deer"))  # fmt: skip
    return {"init_logit_gap": gap, **res}


# ----------------------------------------------------------------------------------------
# 3. ODE: the two-body system against scipy
# ----------------------------------------------------------------------------------------


def ode_check(preset: Preset, seed: int) -> dict[str, float]:
    y0 = two_body_initial(1, seed)
    ts = np.linspace(0.0, preset.ode_t_end, preset.ode_points)
    t0 = time.perf_counter()
    ref = two_body_reference(y0, ts)
    t_ref = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = deer_ode(two_body_rhs, torch.tensor(y0), torch.tensor(ts))
    t_deer = time.perf_counter() - t0
    err = float(np.abs(res.y.numpy() - ref).max() / np.abs(ref).max())
    return {"ode_relerr": err, "ode_iters": res.iterations, "ode_converged": float(res.converged),
            "deer_seconds": t_deer, "scipy_seconds": t_ref}  # fmt: skip


# ----------------------------------------------------------------------------------------
# 4. speed
# ----------------------------------------------------------------------------------------


def speed_point(preset: Preset, n: int, T: int, seed: int, device) -> dict[str, float]:
    """Forward seconds of DEER, quasi-DEER and nn.GRU at one grid point (one seed)."""
    return benchmark_point(n, T, batch=preset.speed_batch, device=device, seed=seed,
                           reps=preset.speed_reps, warmup=1)  # fmt: skip


def memory_check(device) -> dict[str, float]:
    """What a training step keeps for backward (saved tensors) in DEER and quasi-DEER mode,
    per B*T*n state values: the full adjoint stores every n x n Jacobian, quasi-DEER must not."""
    B, T, n = 2, 256, 32
    torch.manual_seed(0)
    cell = GRUCellFn.from_module(torch.nn.GRU(n, n, batch_first=True).to(device))
    xs = torch.randn(B, T, n, device=device, requires_grad=True)
    h0 = torch.zeros(B, n, device=device)
    unit = B * T * n * xs.element_size()
    out = {"n": n}
    for jac, key in (("full", "deer"), ("diag", "qdeer")):
        saved, _ = saved_tensor_bytes(lambda j=jac: deer_rnn(cell, h0, xs, jacobian=j).y)
        out[f"{key}_saved_per_state"] = saved / unit
    return out


def memory_rss(preset: Preset, seed: int) -> dict[str, float]:
    """Peak RSS growth of a DEER and a quasi-DEER forward + backward (GRU, batch 2, fp32, 1
    thread), each in a fresh child process; MiB."""
    out = {"n": preset.mem_hidden}
    for jac, key in (("full", "deer"), ("diag", "qdeer")):
        r = peak_rss_growth(jac, preset.mem_hidden, preset.mem_length, 2, seed)
        out[f"{key}_mib"] = r["growth"] / 2**20
        out[f"{key}_peak_reached"] = r["peak_reached"]
        out[f"{key}_iters"] = r["iters"]
    out["ratio"] = out["qdeer_mib"] / out["deer_mib"]
    return out


# ----------------------------------------------------------------------------------------
# the run
# ----------------------------------------------------------------------------------------


def parallel_units(ctx: RunContext) -> dict[str, functools.partial]:
    """The units that time nothing claimed, slowest first (module-level functions, each
    seeding itself; EigenWorms is read from ``--data-dir`` by the unit)."""
    preset, device, seeds = ctx.preset, ctx.torch_device, ctx.seeds
    jobs = {}
    if preset.data == "eigenworms" and preset.epochs:
        for seed in seeds:
            jobs[f"seed{seed}/eigenworms-v2"] = functools.partial(
                eigenworms_fit, preset, seed, device, str(ctx.data_dir),
                str(ctx.path(f"checkpoints/eigenworms-seed{seed}.pt")), ctx.resume)  # fmt: skip
    if preset.train_steps and device.type == "cpu":
        for seed in seeds:  # each spawns a child process: the slowest after EigenWorms
            jobs[f"seed{seed}/memory_rss"] = functools.partial(memory_rss, preset, seed)
    if preset.eq_hidden and preset.eq_lengths:
        for seed in seeds:
            jobs[f"seed{seed}/equivalence"] = functools.partial(equivalence, preset, seed, device)
        for seed in seeds:
            jobs[f"seed{seed}/gradients"] = functools.partial(gradient_check, preset, seed, device)
    if preset.ode_points > 1 and preset.data == "generated":
        for seed in seeds:
            jobs[f"seed{seed}/ode"] = functools.partial(ode_check, preset, seed)
    if preset.train_steps:
        jobs["memory"] = functools.partial(memory_check, device)
    return jobs


def run(ctx: RunContext) -> Report:
    preset, device = ctx.preset, ctx.torch_device
    # the paper's data first: a missing file stops the run before any work
    splits = (
        load_eigenworms(ctx.data_dir, download=ctx.download)
        if preset.data == "eigenworms"
        else None
    )
    metrics, curves = Metrics(), {}
    items = {}  # metric -> {seed: per-test-item scores} (EigenWorms: one test split for all)
    ctx.log.info("units without claimed timings: equivalence, gradients, ODE, memory%s",
                 ", EigenWorms" if splits is not None and preset.epochs else "")  # fmt: skip
    done = ctx.cached_parallel(parallel_units(ctx), desc="untimed units")
    prefixes = {"equivalence": "equiv/", "gradients": "equiv/", "ode": "ode/",
                "memory_rss": "memrss/", "eigenworms-v2": "eigenworms/"}  # fmt: skip
    for key, values in done.items():
        if key == "memory":
            metrics.update(ctx.seeds[0], values, prefix="memory/")
            continue
        seed_key, what = key.split("/", 1)
        seed = int(seed_key.removeprefix("seed"))
        if what == "eigenworms-v2":
            values = dict(values)
            items.setdefault("eigenworms/test_acc", {})[seed] = values.pop("test_correct")
        metrics.update(seed, values, prefix=prefixes[what])
    ctx.save_partial(metrics)
    # Timings that are claims stay serial, in the driver (issue 52): the training comparison
    # (s/step of DEER and nn.GRU, training-faster) and the speed grid (speedup-hidden*) run
    # one after another at the run's threads, after the pool above has ended, so no other
    # unit shares the cores with a timed call.
    for seed in ctx.seeds:
        if preset.train_steps:
            ctx.log.info(
                "seed %d: training DEER vs sequential (%d steps)", seed, preset.train_steps
            )
            values, seed_curves = ctx.cached(
                f"seed{seed}/training-v2",
                lambda s=seed: train_compare(preset, s, device, splits, ctx.log),
            )
            metrics.update(seed, values, prefix="train/")
            curves.update({f"{m}/seed{seed}": c for m, c in seed_curves.items()})
            ctx.save_partial(metrics)
    skipped = speed_grid(ctx, metrics)
    if any(name.startswith("speed/") for name in metrics.names()):
        ctx.save_figure(plot_speed(metrics, device.type), f"speedup_{device.type}.png")
    if curves:
        ctx.save_figure(plot_training(curves), "training_curves.png")
    claims = make_claims(metrics, preset, device.type, items)
    return Report(metrics, claims, make_checks(metrics, preset),
                  extra={"speed_skipped": skipped, "train_curves": curves},
                  premises=make_premises(metrics, preset))  # fmt: skip


def speed_grid(ctx: RunContext, metrics: Metrics) -> list[str]:
    """The forward-speed grid, every point a unit per seed, serial in the driver (its times
    are the speed claims); returns the points skipped."""
    preset, skipped, t0 = ctx.preset, [], time.perf_counter()
    grid = [(n, T) for n in preset.speed_hidden for T in preset.speed_lengths]
    for n, T in progress(grid, desc="speed grid"):
        if full_jacobian_bytes(n, T, preset.speed_batch) > preset.speed_max_bytes:
            skipped.append(f"h{n}_T{T}: full Jacobian > {preset.speed_max_bytes / 2**30:g} GiB")
            continue
        for seed in ctx.seeds:
            if preset.speed_budget_s and time.perf_counter() - t0 > preset.speed_budget_s:
                skipped.append(f"h{n}_T{T} seed {seed}: time budget")
                continue
            try:
                row = ctx.cached(f"seed{seed}/speed/h{n}_T{T}",
                                 lambda s=seed, n=n, T=T: speed_point(preset, n, T, s, ctx.torch_device))  # fmt: skip
            except torch.OutOfMemoryError:
                torch.cuda.empty_cache()
                skipped.append(f"h{n}_T{T} seed {seed}: out of memory")
                continue
            metrics.update(seed, row, prefix=f"speed/h{n}_T{T}/")
            ctx.log.info("speed hidden %d T %d seed %d: DEER %.4fs (%d it), quasi %.4fs (%d it), "
                         "nn.GRU %.4fs", n, T, seed, row["deer_seconds"], row["deer_iters"],
                         row["qdeer_seconds"], row["qdeer_iters"], row["nngru_seconds"])  # fmt: skip
    for s in skipped:
        ctx.log.info("speed: skipped %s", s)
    return skipped


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())

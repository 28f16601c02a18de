"""The reproduction: PAPER, the presets, the measurements and ``run``; the command line is
``app`` at the bottom (``iclr24-scl-relu reproduce --help``).

Two parts, each per seed:

* UFM (the paper's theoretical model, no data): UFM without ReLU, balanced and imbalanced;
  UFM+ (ReLU) at R in ``ufm_ratios``; UFM+ on a fixed set of small random batches, without
  and with binding examples. Each is optimised to convergence and its class-mean geometry is
  measured.
* Networks: SupCon on STEP-imbalanced data (default: scikit-learn's digits, an MLP; paper
  preset: CIFAR-10/100, ResNet-18), without the final ReLU (the baseline), with it, and with
  it plus batch-binding; geometry of the training embeddings and test accuracy. The no-op
  arm (``CONTROL``): the ReLU network at its initialisation, never trained, through the same
  geometry and accuracy tests.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
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
    preset_option,
    progress,
    seed_everything,
)

from .baselines import random_batches
from .claims import CONTROL, make_checks, make_claims, make_premises
from .data import (
    CIFAR,
    augment_cifar,
    cifar_files,
    cifar_test_view,
    load_cifar,
    load_digits_split,
    step_imbalance,
    ufm_labels,
)
from .figures import plot_curves, plot_grams
from .geometry import class_means, geometry, gram_distance, orthogonal_frame, zero_row_fraction
from .scl_relu import (
    UFM,
    BatchBindingSampler,
    UFMPlus,
    batch_graph_condition,
    bind,
    binding_examples,
    of_loss_value,
)
from .train import (
    SCLNet,
    TrainConfig,
    embed,
    linear_probe_correct,
    mlp,
    ncc_correct,
    resnet18_cifar,
    train_scl,
)

PAPER = Paper(
    title="Symmetric Neural-Collapse Representations with Supervised Contrastive Loss: "
    "The Impact of ReLU and Batching",
    authors="Kini, Vakilian, Behnia, Gill & Thrampoulidis",
    arxiv="2306.07960",
    openreview="AyXIDfvYg8",
    code=None,  # none public (paperswithcode: "No code implementations yet")
)
DOWNLOAD = "CIFAR-10/100 through torchvision, into <data-dir>/scl-relu"
VARIANTS = ("plain", "relu", "plain+bind", "relu+bind")


@dataclass(frozen=True)
class Preset:
    """One preset's scale; each default cites where it comes from."""

    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    """Random seeds (UFM start, batches, data split and subsample, network init); five, so
    that a 2-point accuracy margin is resolved against the seeds' standard error."""
    classes: int = 10
    """Classes k of the UFM (as many as CIFAR-10 and digits)."""
    ufm_dim: int = 32
    """Embedding dimension d of the UFM (Thm 1 needs d >= k)."""
    ufm_majority: int = 100
    """Examples per majority class; raised to 2R when needed so that a minority class keeps
    two examples (a class of one has no positive pair and its direction is not determined)."""
    ufm_imbalance: float = 10.0
    """R of the imbalanced UFM without ReLU (issue: R = 10)."""
    ufm_ratios: tuple[float, ...] = (1.0, 10.0, 100.0)
    """R of the UFM+ runs (issue: R in {1, 10, 100}; the paper's CIFAR ratios are 10, 100)."""
    ufm_temperature: float = 0.2
    """tau of the UFM: Thm 1 holds for every tau; at 0.1 the landscape is so flat
    (negatives weigh e^{-1/tau}) that GD needs far more steps than a CPU budget allows."""
    ufm_lr: float = 0.1
    """Step size of projected GD on the summed loss."""
    ufm_steps: int = 600
    """Projected GD steps (converged to < 1e-6 in distance at the default scale)."""
    batch_ratio: float = 10.0
    """R of the batching experiment."""
    batch_size: int = 8
    """Size of the fixed random batches (small: the batch graph is then disconnected)."""
    data: str = "digits"
    """Network data: digits (bundled with scikit-learn), cifar10 or cifar100 (--data-dir)."""
    net_ratios: tuple[float, ...] = (10.0,)
    """STEP imbalance R of the network's training set (issue: 10; paper: 10, 100)."""
    net_temperatures: tuple[float, ...] = (0.2, 0.1)
    """SupCon temperatures; the first is the one the claims use. 0.1 is SupContrast's recipe
    (README: --temp 0.1); 0.2 is the UFM's, at which the nets converge within the budget."""
    net_variants: tuple[str, ...] = ("plain", "relu", "relu+bind")
    """plain (no final ReLU: the baseline), relu, plain+bind, relu+bind."""
    net_dim: int = 64
    """Embedding dimension (output of the linear head)."""
    net_hidden: int = 256
    """MLP width (digits)."""
    net_epochs: int = 500
    """Training epochs (digits: 670 images, 6 steps per epoch)."""
    net_batch: int = 128
    """Batch size (SupContrast main_supcon.py default 256; digits has 670 training images)."""
    net_lr: float = 0.05
    """Peak learning rate (SupContrast main_supcon.py default 0.05), cosine to 0."""
    net_warmup: int = 0
    """Warm-up epochs (SupContrast: 10 when the batch exceeds 256)."""
    net_head_bias: float = 0.0
    """Initial bias of the last layer; > 0 guards the ReLU against dead embeddings."""
    workers: int | None = 2
    """Processes for the units (UFM fits and networks) on the local executor (``--workers``
    overrides; None: one per thread). 2 processes x 1 thread: the smoke (18 units) took 17.1 s
    against 19.4 s for 1 process x 2 threads, under the CPU lock on this 2-core machine
    (2026-12-05; measured on the smoke because the default took 531 s serially); the units
    are small MLPs and UFM gradient steps that one thread keeps busy (README: Units)."""

    def __post_init__(self):
        if self.data not in ("digits", *CIFAR):
            raise ValueError(f"data must be digits, {', '.join(CIFAR)}")
        if self.ufm_dim < self.classes:
            raise ValueError("ufm_dim must be >= classes (Thm 1 needs d >= k)")
        for name in ("classes", "ufm_majority", "ufm_steps", "batch_size", "net_dim",
                     "net_hidden", "net_epochs", "net_batch"):  # fmt: skip
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.classes < 2:
            raise ValueError("classes must be >= 2")
        ratios = (self.ufm_imbalance, self.batch_ratio, *self.ufm_ratios, *self.net_ratios)
        if min(ratios) < 1:
            raise ValueError("imbalance ratios R must be >= 1")
        if min(self.ufm_temperature, *self.net_temperatures, self.ufm_lr, self.net_lr) <= 0:
            raise ValueError("temperatures and learning rates must be > 0")
        unknown = set(self.net_variants) - set(VARIANTS)
        if unknown or not self.net_variants:
            raise ValueError(f"net_variants must be among {', '.join(VARIANTS)}")
        if not self.net_temperatures or not self.net_ratios:
            raise ValueError("net_temperatures and net_ratios must not be empty")
        if self.workers is not None and self.workers < 1:
            raise ValueError("workers must be >= 1 (or None: one per thread)")


PRESETS = {
    "smoke": Preset(
        seeds=(0, 1),
        ufm_majority=20,
        ufm_ratios=(1.0, 10.0),
        ufm_steps=300,
        ufm_dim=16,
        net_temperatures=(0.2,),
        net_variants=("plain", "relu"),
        net_epochs=40,
    ),  # fmt: skip
    "default": Preset(),
    # ResNet-18 on CIFAR-10 with STEP imbalance R in {10, 100}; SupContrast's README recipe
    # (batch 1024, lr 0.5, temp 0.1, cosine; warm-up 10 epochs for batch > 256).
    "paper": Preset(
        seeds=(0, 1, 2),
        data="cifar10",
        net_ratios=(10.0, 100.0),
        net_temperatures=(0.1,),
        net_variants=VARIANTS,
        net_dim=128,
        net_epochs=350,
        net_batch=1024,
        net_lr=0.5,
        net_warmup=10,
    ),  # fmt: skip
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    preset_option(parser, "--data", field="data", choices=["digits", *CIFAR],
                  help="network data set")  # fmt: skip
    preset_option(parser, "--epochs", field="net_epochs", type=int, help="network epochs")
    preset_option(parser, "--ufm-steps", field="ufm_steps", type=int, help="UFM GD steps")


# ------------------------------------------------------------------ UFM measurements
def _ufm_problem(preset: Preset, ratio: float) -> tuple[np.ndarray, list[int]]:
    n_major = max(preset.ufm_majority, int(np.ceil(2 * ratio)))
    labels = ufm_labels(preset.classes, n_major, ratio)
    counts = np.bincount(labels)
    return labels, [c for c in range(preset.classes) if counts[c] == counts.max()]


def measure_ufm(preset: Preset, seed: int, *, ratio: float, relu: bool, batching: str | None,
                device: str = "cpu", desc: str = "ufm") -> dict:  # fmt: skip
    """Fit UFM (or UFM+) from a random start and measure its geometry.
    batching: None (full batch), "random" (fixed random batches) or "binding" (the same
    batches with one example per class appended)."""
    labels, majority = _ufm_problem(preset, ratio)
    n, out = len(labels), {}
    batches = None
    if batching is not None:
        batches = random_batches(n, preset.batch_size, seed)
        if batching == "binding":
            batches = bind(batches, binding_examples(labels, seed))
        graph = batch_graph_condition(batches, labels)
        out["graph_holds"] = float(graph.holds)
        out["graph_split_classes"] = float(sum(v > 1 for v in graph.components.values()))
        out["graph_pairs_missing"] = float(graph.pairs_missing)
        out["n_batches"] = float(len(batches))
    model = (UFMPlus if relu else UFM)(n, preset.ufm_dim, seed=seed, device=device)
    y = torch.as_tensor(labels, device=device)
    curve, eye = [], orthogonal_frame(preset.classes)
    bar = progress(total=preset.ufm_steps, desc=desc)

    def track(step: int, loss: float) -> None:
        bar.update(1)
        if step % 10 == 0 or step == preset.ufm_steps - 1:
            M = class_means(model.H, labels, preset.classes)
            curve.append((step, gram_distance(M @ M.T, eye)))

    t0 = time.perf_counter()
    loss = model.fit(y, steps=preset.ufm_steps, lr=preset.ufm_lr,
                     temperature=preset.ufm_temperature, batches=batches, callback=track)  # fmt: skip
    out["seconds"] = time.perf_counter() - t0
    bar.close()
    H = model.H.double().cpu()
    out.update(geometry(H, labels, majority, preset.classes))
    out["loss"] = loss
    # the OF's value of the same objective (full batch, or sum_B L_B over these batches): Thm 1's
    # minimum, and Thm 2's: with batches that break the condition, any other global minimiser
    # reaches this value too, so a run ending above it is stuck, not at a second minimiser
    out["loss_minus_of"] = loss - of_loss_value(labels, preset.ufm_temperature, batches)
    out["min_entry"] = float(H.min())
    out["norm_error"] = float((H.norm(dim=1) - 1).abs().max())
    M = class_means(H, labels, preset.classes)
    return {"metrics": out, "gram": M @ M.T, "curve": curve}


def ufm_runs(preset: Preset) -> dict[str, tuple[float, bool, str | None]]:
    """name -> (imbalance ratio R, ReLU, batching) of every UFM measurement."""
    runs = {
        "ufm/balanced": (1.0, False, None),
        "ufm/imbalanced": (preset.ufm_imbalance, False, None),
    }
    runs.update({f"ufm+/R{r:g}": (r, True, None) for r in preset.ufm_ratios})
    runs["batching/random"] = (preset.batch_ratio, True, "random")
    runs["batching/binding"] = (preset.batch_ratio, True, "binding")
    return runs


# ------------------------------------------------------------------ network measurements
def net_group(ratio: float, tau: float) -> str:
    return f"net-R{ratio:g}-tau{tau:g}"


def _network_data(preset: Preset, seed: int, ratio: float, data_dir: Path):
    """The network's data for one seed: the training split STEP-imbalanced with ratio R, the
    test split balanced (CIFAR read from ``data_dir``, downloaded beforehand by the driver).
    -> (X_train, y_train, X_test, y_test, majority classes)"""
    if preset.data == "digits":
        Xtr, Xte, ytr, yte = load_digits_split(0.3, seed)
        keep, majority = step_imbalance(ytr, ratio, 0.5, seed)
        return Xtr[keep], ytr[keep], Xte, yte, majority
    Xtr, ytr, Xte, yte = load_cifar(data_dir, preset.data)
    keep, majority = step_imbalance(ytr, ratio, 0.5, seed)
    return Xtr[keep], ytr[keep], Xte, yte, majority


def measure_network(preset: Preset, seed: int, *, ratio: float, tau: float, variant: str,
                    data, device: str = "cpu", checkpoint: Path | None = None) -> dict:  # fmt: skip
    """Train one SupCon network and measure its training geometry and test accuracy (the
    ``CONTROL`` variant: the ReLU network at its initialisation, not trained). The per-item
    test scores are kept beside the metrics (``items``): on CIFAR every seed is scored on the
    same test set, so the accuracy tests need them. checkpoint: where training saves and
    resumes (CIFAR), or None."""
    Xtr, ytr, Xte, yte, majority = data
    device = torch.device(device)
    untrained = variant == CONTROL
    relu, binding = variant.startswith("relu") or untrained, variant.endswith("+bind")
    seed_everything(seed)
    config = TrainConfig(epochs=preset.net_epochs, batch_size=preset.net_batch, lr=preset.net_lr,
                         temperature=tau, warmup_epochs=preset.net_warmup, binding=binding)  # fmt: skip
    Xtr_t, ytr_t = torch.as_tensor(Xtr, device=device), torch.as_tensor(ytr, device=device)
    Xte_t = torch.as_tensor(Xte, device=device)
    if preset.data == "digits":
        backbone, width = mlp(Xtr.shape[1], preset.net_hidden), preset.net_hidden

        def fetch(idx):
            return Xtr_t[idx][:, None], ytr_t[idx]

        def view(x):
            return x
    else:
        backbone, width = resnet18_cifar()
        gen = torch.Generator(device=device).manual_seed(seed)

        def fetch(idx):
            x = Xtr_t[idx]
            views = [augment_cifar(x, preset.data, gen) for _ in range(2)]  # SupContrast: 2 crops
            return torch.stack(views, 1), ytr_t[idx]

        def view(x):
            return cifar_test_view(x, preset.data)

    model = SCLNet(backbone, width, preset.net_dim, relu, preset.net_head_bias).to(device)
    name = f"{net_group(ratio, tau)}-{variant}-seed{seed}"
    t0 = time.perf_counter()
    history = [float("nan")] if untrained else train_scl(model, ytr, fetch, config, seed=seed,
                                                         desc=name, checkpoint=checkpoint)  # fmt: skip
    seconds = time.perf_counter() - t0

    def chunks(X):
        return (view(X[i : i + 1024]) for i in range(0, len(X), 1024))

    z_tr, h_tr = embed(model, chunks(Xtr_t))
    z_te, h_te = embed(model, chunks(Xte_t))
    out = geometry(h_tr, ytr, majority, int(ytr.max()) + 1)
    items = {"ncc_acc": ncc_correct(h_tr, ytr, h_te, yte),
             "probe_acc": linear_probe_correct(h_tr, ytr, h_te, yte, seed)}  # fmt: skip
    out.update({
        "zero_rows_train": zero_row_fraction(z_tr),
        "zero_rows_test": zero_row_fraction(z_te),
        "ncc_acc": float(items["ncc_acc"].mean()),
        "probe_acc": float(items["probe_acc"].mean()),
        "final_loss": history[-1],
        "epochs": 0.0 if untrained else float(len(history)),
        "train_seconds": seconds,
    })  # fmt: skip
    if binding:
        sampler = BatchBindingSampler(ytr, config.batch_size, seed=seed)
        bound = all(b[-len(sampler.binding) :] == sampler.binding for b in sampler)
        out["binding_in_every_batch"] = float(
            bound and not set(sampler.binding) & set(sampler.pool)
        )
    M = class_means(h_tr, ytr)
    return {"metrics": out, "gram": M @ M.T, "items": items}


# ------------------------------------------------------------------ the units
def ufm_unit(preset: Preset, seed: int, name: str, ratio: float, relu: bool,
             batching: str | None, device: str) -> dict:  # fmt: skip
    """One UFM / UFM+ fit (a unit): seeded by ``seed`` (start, batches), no data."""
    return measure_ufm(preset, seed, ratio=ratio, relu=relu, batching=batching, device=device,
                       desc=f"{name} seed {seed}")  # fmt: skip


def network_unit(preset: Preset, seed: int, ratio: float, tau: float, variant: str,
                 device: str, data_dir: Path, checkpoint: Path | None) -> dict:  # fmt: skip
    """One network (a unit): loads its own data from ``data_dir`` and seeds itself."""
    data = _network_data(preset, seed, ratio, data_dir)
    return measure_network(preset, seed, ratio=ratio, tau=tau, variant=variant, data=data,
                           device=device, checkpoint=checkpoint)  # fmt: skip


# ------------------------------------------------------------------ the run
def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    if preset.data != "digits":  # fail (or download) at once, in the driver, before any unit
        missing = [p for p in cifar_files(ctx.data_dir, preset.data) if not p.exists()]
        if missing:
            load_cifar(ctx.data_dir, preset.data, download=ctx.download)  # or MissingDataError
    metrics, grams, curves = Metrics(), {}, {}
    items = {}  # (group/variant, accuracy) -> {seed: per-test-item scores}
    arms = list(preset.net_variants)
    if {"plain", "relu"} <= set(arms):
        arms.append(CONTROL)  # the no-op arm of the network claims
    runs = ufm_runs(preset)
    # Every UFM fit and every network (seed x setting) is an independent unit: it seeds itself,
    # reads its data from paths and nothing from ctx, so the local pool or Ray gives the serial
    # run's numbers. No timing is a claim (seconds / train_seconds are reported only), so
    # nothing stays serial; the driver only assembles the finished units below.
    net_keys = [(seed, ratio, tau, variant) for seed in ctx.seeds for ratio in preset.net_ratios
                for tau in preset.net_temperatures for variant in arms]  # fmt: skip

    def net_key(seed, ratio, tau, variant):
        return f"{net_group(ratio, tau)}/{variant}/seed{seed}"

    def checkpoint(seed, ratio, tau, variant):
        if preset.data == "digits":
            return None
        ckpt = ctx.path(f"checkpoints/{net_group(ratio, tau)}-{variant}-seed{seed}.pt")
        if not ctx.resume:
            ckpt.unlink(missing_ok=True)  # a fresh run never continues an old one
        return ckpt

    jobs = {f"{name}/seed{seed}": partial(ufm_unit, preset, seed, name, ratio, relu, batching,
                                          ctx.device)
            for seed in ctx.seeds for name, (ratio, relu, batching) in runs.items()}  # fmt: skip
    jobs.update({net_key(*k): partial(network_unit, preset, *k, ctx.device, ctx.data_dir,
                                      checkpoint(*k)) for k in net_keys})  # fmt: skip
    ctx.log.info("%d units: %d UFM fits, %d networks on %s", len(jobs),
                 len(jobs) - len(net_keys), len(net_keys), preset.data)  # fmt: skip
    done = ctx.cached_parallel(jobs, desc="UFM fits and networks")
    for seed in ctx.seeds:
        for name in runs:
            unit = done[f"{name}/seed{seed}"]
            metrics.update(seed, unit["metrics"], prefix=f"{name}/")
            grams.setdefault(name, unit["gram"])
            curves.setdefault(name, unit["curve"])
    for seed, ratio, tau, variant in net_keys:
        group, unit = net_group(ratio, tau), done[net_key(seed, ratio, tau, variant)]
        metrics.update(seed, unit["metrics"], prefix=f"{group}/{variant}/")
        for acc, scores in unit["items"].items():
            items.setdefault((f"{group}/{variant}", acc), {})[seed] = scores
        if variant != CONTROL:
            grams.setdefault(f"{group}/{variant}", unit["gram"])
    ctx.save_partial(metrics)
    ctx.save_figure(plot_grams(grams), "gram_heatmaps.png")
    ctx.save_figure(plot_curves(curves), "ufm_convergence.png")
    return Report(metrics, make_claims(metrics, preset, items), make_checks(metrics, preset),
                  premises=make_premises(metrics, preset))  # fmt: skip


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())

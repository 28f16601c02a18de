"""The reproduction: Point2SSM vs the paper's network baselines that run on CPU (DG-AE,
PN-AE, CPAE) and the no-correspondence floor, on clean, noisy, partial and sparse input
clouds, scored with Chamfer and point-to-surface distance, the ShapeWorks shape-model metrics
and the recovery of the population's known modes.
The command line is ``app`` at the bottom (``iclr24-point2ssm reproduce --help``)."""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
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
    seed_everything,
)

from .baselines import CPAE, AutoEncoder, AutoEncoderConfig, CPAEConfig, no_correspondence
from .claims import best_baseline, convergence_premises, make_checks, make_claims
from .data import (
    Perturbation,
    Population,
    PopulationConfig,
    draw_inputs,
    load_mesh_split,
    make_population,
    mesh_split_dirs,
    open3d,
)
from .figures import plot_loss_curves, plot_modes, plot_ssm_curves, plot_sweep
from .point2ssm import EncoderConfig, Point2SSM, Point2SSMConfig, chamfer_distance
from .shape_model import (
    ShapeModel,
    generalization,
    mode_r2,
    mode_recovery,
    point_to_surface,
    specificity,
)
from .train import TrainConfig, converged, final_loss, predict, tail_drop, train

PAPER = Paper(
    title="Point2SSM: Learning Morphological Variations of Anatomies from Point Clouds",
    authors="Adams & Elhabian",
    arxiv="2305.14486",
    code="https://github.com/jadie1/Point2SSM",
)
TRAINED = ("point2ssm", "dg-ae", "pn-ae", "cpae")
BASELINES = ("dg-ae", "pn-ae", "cpae")
METHODS = (*TRAINED, "no-corr")
CONDITIONS = ("clean", "noisy", "partial", "sparse")


@dataclass(frozen=True)
class Preset:
    """One scale of the reproduction; each default cites its source."""

    seeds: tuple[int, ...] = (0, 1, 2)
    """Random seeds (population, initialisation, batches)."""
    data: str = "generated"
    """'generated' (the known-mode population) or 'meshes' (a mesh folder, e.g. the spleen)."""
    dataset: str = "spleen"
    """data='meshes': the folder under <data-dir>/point2ssm/ (official data/<dataset>/)."""
    n_train: int = 40
    """Generated training shapes (the official spleen set has 40 meshes in all)."""
    n_test: int = 40
    """Generated test shapes."""
    num_input: int = 1024
    """N input points (official cfgs: num_input_points 1024)."""
    num_output: int = 1024
    """M correspondence points (official cfgs: num_output_points 1024)."""
    k: int = 27
    """DGCNN k-NN (official models/dgcnn.py: 27)."""
    bb_size: int = 24
    """DGCNN block width (official: 24)."""
    latent: int = 128
    """Latent width (official cfgs: latent_dim 128)."""
    d_ff: int = 1024
    """Attention feed-forward width (official: 1024)."""
    batch_size: int = 8
    """Batch size (official cfgs: 8)."""
    steps: int = 15000
    """Cap on the optimiser steps of every training (official: up to 3000 epochs with early
    stopping, 15000 steps of 8 of the 40 spleen shapes)."""
    converge_tol: float = 0.01
    """Convergence rule of every training: stop once the loss fell by less than this
    fraction between the 65-75 % window and the last 10 % of the steps so far (train.tail_drop)."""
    min_steps: int = 1000
    """No convergence check before this many steps (past CPAE's loss switch)."""
    check_every: int = 100
    """Steps between convergence checks."""
    lr: float = 1e-4
    """Adam learning rate (official cfgs: lr 0.0001, no decay)."""
    checkpoint_every: int = 500
    """Training steps between checkpoints (--resume continues a training from the last)."""
    noise: float = 0.01
    """Noise sd of the 'noisy' condition, normalised units (official noise_level 0.25-2 mm)."""
    missing: float = 0.2
    """Missing fraction of the 'partial' condition (official missing_percent up to 0.2)."""
    sparse_points: int = 256
    """Input points of the 'sparse' condition (the paper's sparse-input study; our N/4)."""
    cpae_cross_after_epochs: int = 100
    """CPAE: epoch from which its cross-reconstruction loss is on (official: 100)."""
    conditions: tuple[str, ...] = CONDITIONS
    """Input conditions to run."""
    sparse_sweep: tuple[int, ...] = ()
    """Sparse-input sweep: input point counts at which every trained model is also tested
    (clean test shapes; the paper's sparse-input study). Empty: no sweep."""
    train_sizes: tuple[int, ...] = ()
    """Training-size sweep: smaller training populations (the first n training shapes, same
    test shapes and steps) on which Point2SSM and the strongest baseline (the best clean CD of
    the main comparison) are trained again (the paper's limited-training-data study)."""
    train_on_perturbed: bool = True
    """Train a model per condition with perturbed inputs (official), else train on clean only."""
    max_modes: int = 10
    """Modes on the compactness / generalization / specificity curves."""
    spec_samples: int = 200
    """Samples drawn for specificity."""
    threads: int | None = 1
    """Torch threads (the default of ``--threads``; None: every core). The networks are small:
    on the shared 2-core machine a 2-thread pool stalled (3005 s for a run that takes 484 s at
    one thread)."""

    def __post_init__(self):
        for name in ("conditions", "sparse_sweep", "train_sizes"):  # lists from the CLI
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.data not in ("generated", "meshes"):
            raise ValueError("data must be 'generated' or 'meshes'")
        if not self.conditions or set(self.conditions) - set(CONDITIONS):
            raise ValueError(f"conditions must be among {', '.join(CONDITIONS)}")
        for name in ("n_train", "n_test", "num_input", "num_output", "k", "bb_size", "latent",
                     "d_ff", "batch_size", "steps", "max_modes", "spec_samples", "sparse_points",
                     "check_every"):  # fmt: skip
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.n_test < 3:
            raise ValueError("n_test must be >= 3 (generalization is leave-one-out)")
        if self.num_output > self.num_input:
            raise ValueError("num_output must be <= num_input (the no-correspondence floor)")
        if any(not self.k <= n for n in self.sparse_sweep):
            raise ValueError("sparse_sweep sizes must be >= k (the DGCNN's k-NN)")
        if any(not 1 <= n < self.n_train for n in self.train_sizes):
            raise ValueError("train_sizes must be between 1 and n_train - 1")
        if self.converge_tol < 0 or self.min_steps < 0:
            raise ValueError("converge_tol and min_steps must be >= 0")
        if self.lr <= 0 or self.noise < 0 or not 0 <= self.missing < 1:
            raise ValueError("lr must be > 0, noise >= 0 and 0 <= missing < 1")


PRESETS = {
    # seconds per stage: the same code path as default (the convergence rule checked at 10
    # and every 5 steps to the cap of 20)
    "smoke": Preset(seeds=(0,), n_train=16, n_test=12, num_input=64, num_output=32, k=10,
                    bb_size=2, d_ff=64, latent=32, steps=20, min_steps=10, check_every=5,
                    lr=1e-3, max_modes=5, spec_samples=50, sparse_points=24,
                    train_on_perturbed=False, cpae_cross_after_epochs=1, sparse_sweep=(16, 32),
                    train_sizes=(8,)),
    # slim CPU configuration: N=64, M=32, narrow DGCNN; every model trained on clean input
    # (one model per method and seed) until the convergence rule holds (cap 2000 steps =
    # 400 epochs) and tested on every condition; sparse sweep N = 16..64 of the trained
    # models; training-size sweep 10 / 40 shapes; 20 test shapes
    "default": Preset(n_test=20, num_input=64, num_output=32, k=16, bb_size=2, d_ff=256,
                      steps=2000, min_steps=400, lr=1e-3, sparse_points=16,
                      train_on_perturbed=False, cpae_cross_after_epochs=40,
                      sparse_sweep=(16, 32, 64), train_sizes=(10,)),
    # the paper's sizes on the official spleen meshes (GPU expected; every core)
    "paper": Preset(seeds=(0,), data="meshes", threads=None),
}  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    preset_option(parser, "--steps", field="steps", type=int, help="training steps per model")
    preset_option(parser, "--conditions", field="conditions", nargs="+", choices=CONDITIONS,
                  help="input conditions to run")  # fmt: skip
    preset_option(parser, "--train-clean-only", field="train_on_perturbed",
                  action="store_const", const=False,
                  help="train on clean input only and test on every condition (the smoke and "
                       "default presets)")  # fmt: skip
    preset_option(parser, "--train-perturbed", field="train_on_perturbed",
                  action="store_const", const=True,
                  help="one model per condition, trained with that perturbation, as in the "
                       "official code (the paper preset)")  # fmt: skip
    preset_option(parser, "--dataset", field="dataset",
                  help="paper preset: the mesh folder under --data-dir/point2ssm")  # fmt: skip


# ----------------------------------------------------------------------------- pieces


def build(method: str, preset: Preset) -> torch.nn.Module:
    enc = EncoderConfig(latent_dim=preset.latent, k=preset.k, bb_size=preset.bb_size)
    if method == "point2ssm":
        return Point2SSM(Point2SSMConfig(num_output=preset.num_output, enc=enc, d_ff=preset.d_ff))
    if method in ("dg-ae", "pn-ae"):
        encoder = "dgcnn" if method == "dg-ae" else "pn"
        return AutoEncoder(AutoEncoderConfig(num_output=preset.num_output, encoder=encoder,
                                             enc=enc))  # fmt: skip
    if method == "cpae":
        return CPAE(CPAEConfig(num_output=preset.num_output, latent_dim=preset.latent,
                               cross_after_epochs=preset.cpae_cross_after_epochs))  # fmt: skip
    raise ValueError(method)


def train_config(preset: Preset) -> TrainConfig:
    """The one training rule of every model: Adam at the preset's lr and batch until the
    convergence rule holds, capped at ``preset.steps``."""
    return TrainConfig(steps=preset.steps, lr=preset.lr, batch_size=preset.batch_size,
                       checkpoint_every=preset.checkpoint_every, tol=preset.converge_tol,
                       min_steps=preset.min_steps, check_every=preset.check_every)  # fmt: skip


def add_training(metrics: Metrics, seed: int, prefix: str, t: dict, preset: Preset) -> None:
    """A training's steps, final loss, tail drop and whether the rule says it converged."""
    metrics.add(f"{prefix}train_steps", seed, len(t["losses"]))
    metrics.add(f"{prefix}train_loss", seed, final_loss(t["losses"]))
    metrics.add(f"{prefix}train_seconds", seed, t["seconds"])
    metrics.add(f"{prefix}loss_tail_drop", seed, tail_drop(t["losses"]))
    metrics.add(f"{prefix}converged", seed, float(converged(t["losses"], train_config(preset))))


def perturbation(cond: str, preset: Preset) -> Perturbation:
    return Perturbation(
        num_points=preset.sparse_points if cond == "sparse" else preset.num_input,
        noise=preset.noise if cond == "noisy" else 0.0,
        missing=preset.missing if cond == "partial" else 0.0,
    )


def mesh_root(preset: Preset, data_dir: Path) -> Path:
    return data_dir / "point2ssm" / preset.dataset


def load_data(preset: Preset, data_dir: Path, seed: int) -> tuple[Population, Population]:
    """(train, test) populations of one seed."""
    if preset.data == "generated":
        cfg = PopulationConfig(n_train=preset.n_train, n_test=preset.n_test)
        pop = make_population(cfg, seed=seed)
        return pop.subset(range(preset.n_train)), pop.subset(range(preset.n_train, len(pop)))
    split = load_mesh_split(mesh_root(preset, data_dir),
                            pool_points=max(2048, 2 * preset.num_input), seed=seed)  # fmt: skip

    def to_pop(rows) -> Population:
        names, v, t, pool, gt = zip(*rows, strict=True)
        # meshes differ in size: vertices and triangles stay lists
        return Population(list(v), list(t), np.empty((0, 1)), np.stack(pool), np.stack(gt),
                          1.0, list(names))  # fmt: skip

    return to_pop(split["train"]), to_pop(split["test"])


def evaluate(y: np.ndarray, test: Population, preset: Preset, seed: int) -> dict:
    """Shape-model and surface metrics of correspondences y: (S, M, 3) on the test shapes,
    and the metric curves over 1..max_modes modes."""
    tris = test.triangles if isinstance(test.triangles, np.ndarray) else list(test.triangles)
    model = ShapeModel().fit(y)
    comp = model.compactness(preset.max_modes)
    gen = generalization(y, preset.max_modes)
    spec = specificity(y, preset.max_modes, preset.spec_samples, rng=seed)
    cd = chamfer_distance(torch.as_tensor(y).float(), torch.as_tensor(test.gt).float(), "sqrt_mean")
    at3 = lambda c: float(c[min(2, len(c) - 1)])  # noqa: E731
    metrics = {
        "p2s": float(point_to_surface(y, test.vertices, tris).mean()),
        "cd": float(cd.mean()),
        "compactness@3": at3(comp),
        "generalization@3": at3(gen),
        "specificity@3": at3(spec),
        "modes_for_95pct": float(model.modes_needed(0.95)),
    }
    if len(test.coeffs):  # the generated population's known modes
        # its true correspondences (the template's vertices, one order on every shape) give
        # the true compactness (about 0.94); a model above it is more compact than the truth,
        # so the distance to it is scored (lower is better)
        truth = at3(ShapeModel().fit(np.asarray(test.vertices, dtype=np.float64)).compactness(3))
        metrics["true_compactness@3"] = truth
        metrics["compactness_error@3"] = abs(metrics["compactness@3"] - truth)
        metrics["mode1_r2"] = mode_r2(y, test.coeffs[:, 0])
        metrics["mode_recovery"] = float(mode_recovery(y, test.coeffs).mean())
    curves = {"compactness": comp.tolist(), "generalization": gen.tolist(),
              "specificity": spec.tolist()}  # fmt: skip
    return {"metrics": metrics, "curves": curves}


# ----------------------------------------------------------------------------- units


class SeedData:
    """A seed's populations, built the first time a unit that needs them runs (a resumed run
    whose units are all finished never builds them)."""

    def __init__(self, preset: Preset, data_dir: Path, seed: int):
        self.preset, self.data_dir, self.seed, self._pops = preset, data_dir, seed, None

    @property
    def pops(self) -> tuple[Population, Population]:
        if self._pops is None:
            self._pops = load_data(self.preset, self.data_dir, self.seed)
        return self._pops


def train_unit(ctx: RunContext, data: SeedData, method: str, cond: str,
               n_train: int | None = None) -> dict:  # fmt: skip
    """Train one model on one seed's training shapes (the first ``n_train`` of them, else
    all) with one input condition."""
    preset, seed = ctx.preset, data.seed
    train_set = data.pops[0]
    if n_train is not None:
        train_set = train_set.subset(range(n_train))
    seed_everything(seed)
    model = build(method, preset).to(ctx.torch_device)
    cfg = train_config(preset)
    t0 = time.perf_counter()
    losses = train(
        model,
        torch.as_tensor(train_set.pool, dtype=torch.float32),
        torch.as_tensor(train_set.gt, dtype=torch.float32),
        perturbation(cond, preset),
        cfg,
        seed,
        desc=f"seed {seed} {cond} {method}",
        checkpoint=ctx.path(f"checkpoints/seed{seed}-{cond}-{method}-n{n_train or 'all'}.pt"),
        resume=ctx.resume,
    )
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    return {"state": state, "losses": losses, "seconds": time.perf_counter() - t0}


def eval_unit(ctx: RunContext, data: SeedData, method: str, pert: Perturbation,
              trained: dict | None) -> dict:  # fmt: skip
    """Correspondences of the test shapes under one input perturbation, and their metrics."""
    preset, seed = ctx.preset, data.seed
    test = data.pops[1]
    g_test = torch.Generator().manual_seed(10_000 + seed)  # the same test inputs for every method
    x = draw_inputs(torch.as_tensor(test.pool, dtype=torch.float32), pert, g_test)
    if trained is None:
        y = no_correspondence(x, preset.num_output, g_test.manual_seed(seed))
    else:
        model = build(method, preset).to(ctx.torch_device)
        model.load_state_dict(trained["state"])
        y = predict(model, x)
    y = y.numpy().astype(np.float64)
    out = evaluate(y, test, preset, seed)
    out["y"] = y.astype(np.float32)
    return out


def add_degradation(metrics: Metrics, seed: int, cd: dict[tuple[str, str], float]) -> None:
    """Each method's relative CD increase on perturbed over clean input, for one seed (the
    robustness measure; CD to the full surface, so a hole left unfilled counts).
    cd: (condition, method) -> CD of this seed."""
    for (cond, method), value in cd.items():
        if cond != "clean" and method in TRAINED and ("clean", method) in cd:
            metrics.add(f"{cond}/{method}/cd_increase", seed, value / cd["clean", method] - 1)


def add_sweep_point(metrics: Metrics, seed: int, prefix: str, values: dict,
                    clean_cd: float | None) -> None:  # fmt: skip
    """A sweep point's CD and P2S, and its relative CD increase over the same method's main
    model on clean input (same seed)."""
    metrics.add(f"{prefix}cd", seed, values["cd"])
    metrics.add(f"{prefix}p2s", seed, values["p2s"])
    if clean_cd is not None:
        metrics.add(f"{prefix}cd_increase", seed, values["cd"] / clean_cd - 1)


def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    open3d()  # meshes, surface sampling and P2S: a missing open3d/libusb stops the run at once
    if preset.data == "meshes":  # so do absent paper meshes
        mesh_split_dirs(mesh_root(preset, ctx.data_dir), require=True)
    ctx.log.info("preset %s: %s", ctx.preset_name, preset)
    metrics, curves, last_y = Metrics(), {}, {}
    losses, all_cd = {}, {}
    train_conds = preset.conditions if preset.train_on_perturbed else ("clean",)
    for seed in ctx.seeds:
        data = SeedData(preset, ctx.data_dir, seed)
        trained = {}
        for tc in train_conds:
            for method in TRAINED:
                t = ctx.cached(f"seed{seed}/{tc}/{method}/train",
                               lambda m=method, c=tc, d=data: train_unit(ctx, d, m, c))  # fmt: skip
                trained[tc, method] = t
                add_training(metrics, seed, f"{tc}/{method}/", t, preset)
                losses.setdefault(f"{tc}/{method}", []).append(t["losses"])
        seed_cd = {}
        for cond in preset.conditions:
            tc = cond if preset.train_on_perturbed else "clean"
            for method in METHODS:
                model = trained.get((tc, method))  # None: the untrained floor
                res = ctx.cached(f"seed{seed}/{cond}/{method}/eval",
                                 lambda m=method, c=cond, d=data, t=model:
                                 eval_unit(ctx, d, m, perturbation(c, preset), t))  # fmt: skip
                metrics.update(seed, res["metrics"], prefix=f"{cond}/{method}/")
                seed_cd[cond, method] = res["metrics"]["cd"]
                curves.setdefault(f"{cond}/{method}", []).append(res["curves"])
                if cond == preset.conditions[0]:
                    last_y[method] = res["y"]
                m = res["metrics"]
                ctx.log.info("seed %d %-7s %-9s p2s %.4f  cd %.4f  compact@3 %.3f  r2 %s", seed,
                             cond, method, m["p2s"], m["cd"], m["compactness@3"],
                             f"{m['mode1_r2']:.3f}" if "mode1_r2" in m else "n/a")  # fmt: skip
        add_degradation(metrics, seed, seed_cd)
        all_cd[seed] = seed_cd
        for n in preset.sparse_sweep:  # the trained models on sparser clean input
            for method in (m for m in TRAINED if ("clean", m) in trained):
                res = ctx.cached(f"seed{seed}/points{n}/{method}/eval",
                                 lambda m=method, n=n, d=data, t=trained["clean", method]:
                                 eval_unit(ctx, d, m, Perturbation(num_points=n), t))  # fmt: skip
                add_sweep_point(metrics, seed, f"points{n}/{method}/", res["metrics"],
                                seed_cd.get(("clean", method)))  # fmt: skip
        ctx.save_partial(metrics)
    if preset.train_sizes and "clean" in preset.conditions:
        # the training-size sweep: Point2SSM and the strongest baseline of this run's main
        # comparison (best mean clean CD over seeds), on the first n training shapes
        best = best_baseline(metrics, "clean/{}/cd", higher=False)
        ctx.log.info("training-size sweep %s: point2ssm and %s", preset.train_sizes, best)
        for seed in ctx.seeds:
            data = SeedData(preset, ctx.data_dir, seed)
            for n in preset.train_sizes:
                for method in ("point2ssm", best):
                    t = ctx.cached(f"seed{seed}/train{n}/{method}/train",
                                   lambda m=method, n=n, d=data:
                                   train_unit(ctx, d, m, "clean", n))  # fmt: skip
                    add_training(metrics, seed, f"train{n}/{method}/", t, preset)
                    losses.setdefault(f"train{n}/{method}", []).append(t["losses"])
                    res = ctx.cached(f"seed{seed}/train{n}/{method}/eval",
                                     lambda m=method, d=data, t=t:
                                     eval_unit(ctx, d, m, perturbation("clean", preset), t))  # fmt: skip
                    add_sweep_point(metrics, seed, f"train{n}/{method}/", res["metrics"],
                                    all_cd[seed].get(("clean", method)))  # fmt: skip
            ctx.save_partial(metrics)
        names = {n: f"train{n}/{{}}/cd" for n in preset.train_sizes}
        names[preset.n_train] = "clean/{}/cd"  # the main comparison's models
        ctx.save_figure(plot_sweep(metrics, names, ("point2ssm", best), "training shapes",
                                   "test CD vs training-set size"), "train_size.png")  # fmt: skip
    if preset.sparse_sweep:
        names = {n: f"points{n}/{{}}/cd" for n in preset.sparse_sweep}
        ctx.save_figure(plot_sweep(metrics, names, TRAINED, "input points N",
                                   "test CD vs input points (trained at "
                                   f"N={preset.num_input})"), "sparse_input.png")  # fmt: skip
    ctx.save_figure(plot_loss_curves(losses), "training_loss.png")
    cond = preset.conditions[0]
    ctx.save_figure(plot_ssm_curves(curves, METHODS, cond), "ssm_metrics.png")
    if "point2ssm" in last_y:
        sm = ShapeModel().fit(last_y["point2ssm"])
        ctx.save_figure(plot_modes(sm, f"Point2SSM modes of variation ({cond}, last seed)"),
                        "modes_point2ssm.png")  # fmt: skip
        sm.export_modes(ctx.path("modes_point2ssm"), n_modes=3)
    return Report(
        metrics,
        make_claims(metrics, preset),
        make_checks(metrics, preset),
        extra={"curves": curves},
        premises=convergence_premises(metrics, preset),
    )


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())

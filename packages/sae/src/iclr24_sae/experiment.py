"""The reproduction: PAPER, the presets, ``run``; the command line is ``app`` at the bottom
(``iclr24-sae reproduce --help``).

1. Toy model of superposition (the authors' interim report): MMCS of SAE atoms with the
   ground-truth features, against PCA and ICA, over an alpha x dictionary-ratio grid.
2. A real LM (SmolLM2-135M-Instruct, offline): activations of one residual-stream layer on
   CPython's own documentation with generated sentences with names; SAE vs PCA, ICA, neurons
   and random directions on an offline explain-then-simulate score (explanations of a few
   tokens, validated on planted features), with FVU, L0, dead fraction and CE loss
   recovered (and, with ``--llm``, LLM explain-then-simulate scores); the same score of the
   SAE untrained is the claim's degenerate control.
3. IOI activation patching on the same layer: how many SAE nodes (features and the error
   node), neurons or PCA directions must be patched from corrupted to clean prompts to move
   the model's logit difference by a given share; the SAE untrained is the control.

Units (issue 52): the harvest runs in the driver; every other measurement (toy seeds, the
LM's seed-independent reference, each seed's SAE with its IOI curves, the IOI reference, the
planted validation) is a unit of ``ctx.cached_parallel``. No timing is a claim here.
"""

from __future__ import annotations

import argparse
import shutil
from dataclasses import dataclass
from functools import partial

from iclr24_common import (
    ExperimentApp,
    Metrics,
    Paper,
    Report,
    RunContext,
    atomic_write_text,
    preset_option,
)
from iclr24_llm import SPEC_HELP, open_llm

from .autointerp import scripted_llm
from .claims import make_checks, make_claims, make_premises
from .figures import dashboard_html, plot_mmcs_grid, plot_patching
from .harvest import SITES, harvest, hook_module, load_harvest
from .lm import load_lm
from .metrics import loss_recovered
from .studies import (
    ioi_reference,
    llm_autointerp,
    lm_reference,
    lm_sequences,
    lm_spec,
    measure_lm,
    measure_planted,
    measure_toy,
)

PAPER = Paper(
    title="Sparse Autoencoders Find Highly Interpretable Features in Language Models",
    authors="Cunningham, Ewart, Riggs, Huben & Sharkey",
    arxiv="2309.08600",
    code="https://github.com/HoagyC/sparse_coding",
)


@dataclass(frozen=True)
class Preset:
    """One preset's scale; each default cites where it comes from."""

    seeds: tuple[int, ...] = (0, 1, 2)
    """Random seeds (toy features and data, SAE init and batches, ICA and random bases)."""
    workers: int | None = 2
    """Processes for the units on the local executor (``--workers`` overrides; None: one per
    thread). Measured on the smoke (2 threads, under the CPU lock, 2026-12-05): 1 worker x 2
    threads 14.5 s, 2 x 1 thread 23.8 s (each worker loads torch and the model: seconds the
    smoke's units do not repay), so the smoke runs 1; the default's units take minutes each
    (an SAE of 1000 steps, 0.14 s a step on one thread), so it runs 2 (README, Units)."""
    lr: float = 3e-3
    """Adam learning rate. Official config.py (HoagyC/sparse_coding@69c5ae0, TrainArgs and
    ToyArgs): 1e-3 over millions of activations (the paper preset's value); the CPU presets
    train ~1% of the official steps, where 3e-3 converges (measured on the toy model: MMCS
    0.97 after 1200 steps vs 0.60 at 1e-3)."""
    normalize: bool = True
    """Scale the LM's activations by one constant so that E||x||^2 = d before the SAE (as
    SAELens' ``normalize_activations``), so that one alpha grid serves any model. The paper
    (and the official code, ``center_dataset=False``) trains on raw activations, where its
    alpha = 8.6e-4 is meant: the paper preset turns this off. With it on, the loss of a
    scale-``s`` input is ``s^2 (MSE(x) + (alpha / s) L1(x))`` for the same code: an alpha
    here equals ``alpha / s`` on raw activations (``lm/sae/scale`` is stored)."""
    tied: bool = False
    """Tied encoder/decoder (the paper trains both; its main residual SAEs are tied)."""
    pre_bias: bool = True
    """Pre-encoder/decoder bias b_dec (the peers' option; the paper's SAE has none)."""
    # --- toy model (interim report: d=256, 512 features, 5 active, decay 0.99; issue: 64/128)
    toy_d: int = 64
    toy_features: int = 128
    toy_active: float = 5.0
    toy_decay: float = 0.99
    toy_ratios: tuple[float, ...] = (0.5, 1.0, 2.0)
    """Dictionary sizes as multiples of the number of ground-truth features."""
    toy_alphas: tuple[float, ...] = (1e-3, 3e-3, 1e-2)
    toy_ratio: float = 1.0
    """The grid cell the claim reads (fixed before the run, not picked by MMCS)."""
    toy_alpha: float = 3e-3
    toy_recovery: float = 0.9
    """A ground-truth feature is recovered when an atom's cosine with it exceeds this: the
    official code's MMCS threshold (standard_metrics.py run_mmcs_with_larger(threshold=0.9),
    config.py InvestigateArgs.threshold = 0.9, HoagyC/sparse_coding@69c5ae0)."""
    toy_steps: int = 1200
    toy_batch: int = 256
    """Official toy batch 4096 (config.py ToyArgs); 256 for CPU."""
    toy_eval_samples: int = 8192
    toy_fit_samples: int = 20000
    # --- the LM
    lm: str = "local"
    """local (SmolLM2-135M-Instruct via iclr24_llm), tiny (random byte Llama), or a folder."""
    layer: int = 3
    site: str = "resid"
    seq_len: int = 128
    n_seq: int = 320
    names_frac: float = 0.25
    """Share of the text's characters from generated sentences with names (the IOI templates
    completed with their answer, and other sentences with names), interleaved with CPython's
    documentation, which has almost none: the SAE sees text like the IOI prompts (issue 49;
    the paper's OpenWebText has names). Not used by the paper preset."""
    name_docs: int = 1000
    """Paragraphs of generated sentences with names available to interleave."""
    ratio: float = 2.0
    """Dictionary size / d (the paper's R = 2 for its main results)."""
    alphas: tuple[float, ...] = (5e-4, 1e-3, 2e-3)
    """Ascending; trained at once. Paper: 8.6e-4 (Pythia-70M, unnormalised activations)."""
    fvu_max: float = 0.25
    """The chosen alpha is the largest whose evaluation FVU stays under this."""
    steps: int = 1000
    """SAE training steps. The paper trains on its activations once through (~100k steps of
    batch 256 on 60 GB; the paper preset); here 1000 steps of batch 256 on 30,480 training
    activations (8 passes): 2000 steps would take the default past its ~8 min budget on 2
    cores (0.14 s per step per seed on one thread, measured), 1000 leave it under."""
    batch_size: int = 256
    """Official default batch (config.py TrainArgs.batch_size)."""
    resample_every: int = 0
    """Dead-feature resampling period in steps (0: off, as in the paper)."""
    val_frac: float = 0.25
    baseline_fit_tokens: int = 30000
    ica_fit_tokens: int = 3000
    interp_tokens: int = 10000
    top_k: int = 20
    """Top activations of the explain half the explanation is read from."""
    n_explain: int = 5
    """Tokens an explanation may name (see ``explanation_scores``): a one-line explanation
    names a handful of tokens; an unlimited lookup table (the earlier score) explains any
    dense direction and failed the validations (issue 49)."""
    ce_seqs: int = 4
    dashboard_features: int = 12
    # --- IOI activation patching (paper Sec. 5) in the SAE, neuron and PCA bases
    ioi_prompts: int = 40
    """IOI prompt pairs (fixed across seeds: the seeds vary the SAE; 0 skips the study)."""
    ioi_share: float = 0.5
    """The share of the clean-to-corrupted logit-difference change the claim reads."""
    ioi_ks: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
    """Numbers of features patched (each basis also patches all its features)."""
    ioi_accuracy_min: float = 0.8
    """The model 'solves' the task when this share of clean prompts has IO - S > 0."""
    # --- --llm explain-then-simulate (off by default; the offline score is the claim's)
    llm: str = ""
    """Explainer and simulator LLM spec (iclr24_llm: local, openai:..., a path; scripted for
    tests); empty: off."""
    llm_features: int = 6
    """Features scored per basis and seed with --llm (drawn at random among live ones)."""

    def __post_init__(self):
        if self.site not in SITES:
            raise ValueError(f"site must be one of {', '.join(SITES)}")
        if list(self.alphas) != sorted(self.alphas) or min(self.alphas) <= 0:
            raise ValueError("alphas must be positive and ascending")
        if self.toy_alpha not in self.toy_alphas or self.toy_ratio not in self.toy_ratios:
            raise ValueError("toy_alpha/toy_ratio must be in toy_alphas/toy_ratios")
        if min(self.toy_steps, self.steps, self.n_seq, self.ce_seqs, self.batch_size) < 1:
            raise ValueError("steps, n_seq, ce_seqs and batch_size must be >= 1")
        if self.ioi_prompts < 0 or not 0 < self.ioi_share < 1 or min(self.ioi_ks) < 1:
            raise ValueError("need ioi_prompts >= 0, 0 < ioi_share < 1 and ioi_ks >= 1")
        if list(self.ioi_ks) != sorted(set(self.ioi_ks)) or self.llm_features < 1:
            raise ValueError("ioi_ks must ascend without repeats; llm_features >= 1")
        if not 0 < self.val_frac < 1:
            raise ValueError("val_frac must be in (0, 1)")
        if not 0 <= self.names_frac < 1 or self.n_explain < 1 or not 0 < self.toy_recovery < 1:
            raise ValueError("need 0 <= names_frac < 1, n_explain >= 1, 0 < toy_recovery < 1")
        if self.workers is not None and self.workers < 1:
            raise ValueError("workers must be >= 1 (or None: one per thread)")
        if self.layer < 0 or self.seq_len < 4 or self.ratio <= 0:
            raise ValueError("need layer >= 0, seq_len >= 4 and ratio > 0")


PRESETS = {
    "smoke": Preset(
        seeds=(0, 1),
        workers=1,
        toy_d=32,
        toy_features=64,
        toy_ratios=(1.0,),
        toy_alphas=(3e-3,),
        toy_alpha=3e-3,
        toy_steps=300,
        toy_batch=512,
        toy_eval_samples=2048,
        toy_fit_samples=4000,
        lm="tiny",
        layer=0,
        seq_len=64,
        n_seq=48,
        alphas=(1e-3,),
        steps=150,
        interp_tokens=1500,
        baseline_fit_tokens=2000,
        ica_fit_tokens=1000,
        ce_seqs=2,
        dashboard_features=4,
        ioi_prompts=8,
        ioi_ks=(1, 4, 16),
        llm_features=2,
    ),  # fmt: skip
    "default": Preset(),
    # Pythia-70M-deduped residual stream, tied R = 2, alpha = 8.6e-4 (paper Sec. 3) on raw
    # activations; Adam lr 1e-3 and toy batch 4096 (official config.py @69c5ae0)
    "paper": Preset(
        lm="paper",
        lr=1e-3,
        normalize=False,
        toy_batch=4096,
        layer=2,
        tied=True,
        pre_bias=False,
        alphas=(8.6e-4,),
        n_seq=20000,
        seq_len=256,
        steps=100000,
        toy_d=256,
        toy_features=512,
    ),  # fmt: skip
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    preset_option(parser, "--layer", field="layer", type=int, help="layer to hook")
    preset_option(parser, "--site", field="site", choices=SITES, help="resid or mlp")
    preset_option(parser, "--lm", field="lm", help="local, tiny, or a Hugging Face folder")
    preset_option(parser, "--llm", field="llm", help=f"explain-then-simulate autointerp with this "
                  f"LLM (off by default). {SPEC_HELP}; 'scripted' for tests")  # fmt: skip


def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    llm = _load_llm(ctx, preset.llm) if preset.llm else None  # fail now, not after the run
    data_dir = ctx.data_dir
    spec = lm_spec(preset, data_dir)  # the paper preset: MissingDataError now, not in a unit

    # the harvest stays in the driver: every LM unit reads its activations from act_dir
    act_dir = ctx.path("activations")
    if not ctx.resume and act_dir.exists():
        shutil.rmtree(act_dir)  # a fresh run never mixes in another run's chunks

    def do_harvest():
        ctx.log.info("loading %s", spec)
        lm = load_lm(spec, threads=ctx.threads)
        ids = lm_sequences(preset, lm, data_dir)
        module = hook_module(lm.model, preset.layer, preset.site)
        return harvest(lm.model, module, ids[: preset.n_seq], act_dir)

    manifest = ctx.cached("harvest", do_harvest)
    acts, tokens = load_harvest(act_dir)
    ctx.log.info("harvested %d tokens x %d dims at layer %d (%s)", *acts.shape, preset.layer,
                 preset.site)  # fmt: skip
    del acts, tokens

    # every independent unit in one pool, the slowest first (each loads the LM and reads the
    # harvest itself; nothing in this package is a timing claim, so nothing else stays serial)
    jobs = {f"lm/seed{s}": partial(measure_lm, preset, s, act_dir, data_dir) for s in ctx.seeds}
    if preset.ioi_prompts:
        jobs["ioi/reference"] = partial(ioi_reference, preset, act_dir, data_dir)
    jobs |= {f"toy/seed{s}": partial(measure_toy, preset, s) for s in ctx.seeds}
    jobs["lm/reference"] = partial(lm_reference, preset, act_dir, data_dir)
    jobs |= {f"planted/seed{s}": partial(measure_planted, preset, s, act_dir) for s in ctx.seeds}
    units = ctx.cached_parallel(jobs, desc="toy, LM and IOI units")

    metrics = Metrics()
    reference = units["lm/reference"]
    dashboards, saes = {}, {}
    for seed in ctx.seeds:
        metrics.update(seed, units[f"toy/seed{seed}"])
        metrics.update(seed, units[f"planted/seed{seed}"])
        res = dict(units[f"lm/seed{seed}"])
        dashboards[seed], saes[seed] = res.pop("_dashboard"), (res.pop("_sae"), res["lm/sae/scale"])
        res["lm/sae/ce_recovered"] = loss_recovered(reference["lm/ce/clean"], res["lm/ce/sae"],
                                                    reference["lm/ce/zero_ablation"])  # fmt: skip
        metrics.update(seed, {**reference, **res})
        if preset.ioi_prompts:
            metrics.update(seed, units["ioi/reference"])
    ctx.save_partial(metrics)
    ctx.save_figure(plot_mmcs_grid(metrics, preset), "toy_mmcs_grid.png")
    atomic_write_text(ctx.path("dashboard.html"), dashboard_html(dashboards[ctx.seeds[0]], preset))
    if preset.ioi_prompts:
        ctx.save_figure(plot_patching(metrics, preset), "ioi_patching.png")
    if llm is not None:  # needs the trained SAEs (earlier units) and the one LLM: serial
        holder: dict = {}

        def decode(ids):
            if "lm" not in holder:
                holder["lm"] = load_lm(spec, threads=ctx.threads)
            return holder["lm"].decode(ids)

        acts, tokens = load_harvest(act_dir)
        for seed in ctx.seeds:
            res = dict(ctx.cached(f"llm/seed{seed}", lambda s=seed: llm_autointerp(
                preset, s, llm, acts, tokens, *saes[s], decode)))  # fmt: skip
            ctx.save_json(f"llm_explanations_seed{seed}.json", res.pop("_explanations"))
            metrics.update(seed, res)
    return Report(metrics, make_claims(metrics, preset), make_checks(metrics, preset, manifest),
                  premises=make_premises(metrics, preset))  # fmt: skip


def _load_llm(ctx: RunContext, spec: str):
    """The --llm backend: 'scripted' (tests: a token-listing explainer, a token-matching
    simulator), else ``iclr24_llm.load_llm``; a backend that does not answer is one line,
    exit 2."""
    if spec == "scripted":
        return scripted_llm()
    return open_llm(spec, threads=ctx.threads, device=ctx.device,
                    cache_dir=ctx.path("llm_cache"), log=ctx.log)  # fmt: skip


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())

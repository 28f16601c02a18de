"""The reproduction: PAPER, the presets, the measurements and ``run``; the command line is
``app`` at the bottom (``iclr24-aug-rkhs reproduce --help``).

Two parts.

1. An exact finite space (V tokens, length L, inputs from a two-topic mixture of Markov
   chains, the downstream target the topic posterior). For every [MASK] rate alpha the
   augmentation's kernel, spectrum, kappa, trace and the target's isometry constant are
   exact; the ideal encoder (top-d eigenfunctions) is probed with the norm-constrained RKHS
   regression the paper analyses and its error compared with the
   estimation + approximation bound; the finite-sample encoder (m pretraining samples,
   Monte-Carlo kernel, Nystrom) is probed by ridge regression tuned on validation, and its
   error across alpha locates the sweet spot. Errors are exact: E_{P_X}(f_hat - f*)^2 over
   every input.
2. Real text (``pydoc_data.topics``, or the user's corpus for the paper preset): kappa of
   [MASK] replacement against the sequence length L, with P_X the corpus's bigram chain,
   K_X(x, x) summed exactly over the 2^L masks, the sup over x estimated by Monte Carlo over
   sampled windows; the Monte-Carlo estimator over masks is checked against the exact sum.
"""

from __future__ import annotations

import argparse
import functools
import math
from dataclasses import dataclass

import numpy as np

from iclr24_common import (
    ExperimentApp,
    Metrics,
    Paper,
    Report,
    RunContext,
    UsageError,
    preset_option,
)

from .aug_rkhs import (
    constrained_probe,
    kernel_pca_encoder_counts,
    mask_augmentation,
    mask_kappa_sq_product,
    mask_log_kernel_diagonal_markov,
    mask_log_kernel_diagonal_mc,
    mask_trace,
    nystrom_encoder,
    predict,
    replacement_augmentation,
    replacement_kappa_sq_uniform,
    ridge_probe,
)
from .bounds import finite_sample_error_bound, probe_error_bound, trace_gap_sample_bound
from .claims import make_checks, make_claims, make_premises, msweep_cases
from .data import Corpus, MarkovChain, load_corpus, load_pydoc_topics, topic_mixture, topic_target
from .figures import plot_errors, plot_kappa, plot_mlm, plot_spectra

PAPER = Paper(
    title="Understanding Augmentation-based Self-Supervised Representation Learning via RKHS "
    "Approximation and Regression",
    authors="Zhai, Liu, Risteski, Kolter & Ravikumar",
    arxiv="2306.00788",
    openreview="Ax2yRhCQr1",
    code=None,  # no official code is public
)
USES_TORCH = False
LN10 = math.log(10)


@dataclass(frozen=True)
class Preset:
    """One preset's scale. The paper has no finite-space experiment and no public code, so
    the finite-space sizes are ours (chosen so that every quantity is exact and a run takes
    minutes); the text lengths and mask rates follow masked language modelling practice."""

    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    """Random seeds (pretraining samples, labels, label noise, text windows)."""
    vocab_size: int = 3
    """V, tokens of the finite space."""
    length: int = 6
    """L, sequence length of the finite space (V**L inputs, (V+1)**L masked views)."""
    stay: float = 0.7
    """Each topic's chain returns to its own token with this probability per step."""
    alphas: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
    """[MASK] rates of the finite space."""
    d: int = 1
    """Encoder dimension (non-constant eigenfunctions; the probe adds a bias). On the
    two-topic space lambda_1 (the topic direction) is isolated and lambda_2.. form a
    degenerate block at 1 - alpha, so d = 1 is the one d whose top-d eigenspace is unique at
    every rate (a larger d would split that block arbitrarily)."""
    n_pretrain: int = 200
    """m, pretraining inputs of the finite-sample encoder."""
    n_labels: int = 200
    """n, labelled inputs for the probe."""
    n_val: int = 100
    """Labelled validation inputs, to choose the ridge penalty (finite-sample encoder)."""
    noise: float = 0.1
    """Label noise std (uniform noise, so |y| is bounded as the estimation bound needs)."""
    penalties: tuple[float, ...] = (1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)
    """Ridge penalties tried on validation, the same grid at every alpha."""
    delta: float = 0.05
    """Failure probability of the estimation bound."""
    msweep_rates: tuple[float, ...] = (0.8, 0.9, 0.95)
    """[MASK] rates of the trace gap's decay in m (kernel PCA of the exact kernel): the three
    highest rates of ``alphas``, where kappa^2 (241, 30, 7 at L = 6) lets the a-priori bound
    become non-vacuous at m <= 10^10; at 0.5 it needs m ~ 10^10, at 0.2 m ~ 10^12."""
    msweep_m: tuple[int, ...] = tuple(round(10 ** (k / 2)) for k in range(4, 21))
    """Pretraining sample sizes m of that sweep: 100 to 10^10 in half decades (a multinomial
    draw of the inputs' counts, so a large m costs nothing)."""
    msweep_delta: float = 0.01
    """Failure probability of the a-priori trace-gap bound, shared (union bound) by every
    (case, rate, m, seed) of the sweep."""
    msweep_gapfree_d: int = 2
    """Encoder dimension of the sweep's gap-free case (0: not run), the case Theorem 2 is
    about (issue 50): on the two-topic space lambda_2 = .. = lambda_8 = 1 - alpha (a
    degenerate block), so at d = 2 the eigen-gap lambda_d - lambda_{d+1} is exactly 0 and the
    top-d eigenspace is not unique; the trace gap is still defined (premise no-eigengap checks
    the gap is 0). The gapped case is ``d`` (lambda_1 isolated)."""
    workers: int | None = 2
    """Processes for the units on the local executor (``--workers`` overrides; None: one per
    thread). Measured on the default under the CPU lock (2026-12-05): see the README."""
    low_rate: float = 0.1
    """The weak augmentation compared with the best rate (the sweet-spot claim)."""
    sweet_factor: float = 2.0
    """The sweet-spot claim: error at ``low_rate`` >= this times the error at the best rate."""
    corpus: str = "pydoc"
    """Text for kappa: pydoc (CPython's pydoc_data.topics) or file (<data-dir>/aug-rkhs/corpus.txt)."""
    text_alphas: tuple[float, ...] = (0.05, 0.15, 0.3, 0.5, 0.8)
    """[MASK] rates for kappa on text (BERT's 0.15 among them)."""
    text_lengths: tuple[int, ...] = (4, 8, 16, 24, 32, 48, 64)
    """Sequence lengths L for kappa on text."""
    n_windows: int = 2000
    """Windows of the text per length: kappa^2 is their largest K_X(x, x)."""
    smoothing: float = 0.5
    """Add-k smoothing of the bigram chain fitted to the text (full support)."""
    mc_length: int = 12
    """Window length for the check of the Monte-Carlo estimator against the exact sum."""
    mc_windows: int = 100
    """Windows for that check."""
    mc_masks: int = 400
    """Masks per window for the Monte-Carlo estimator."""
    mlm_rates: tuple[float, ...] = ()
    """Part (c), masked-LM pretraining: the mask rates (empty: not run). Needs the mlm extra."""
    mlm_length: int = 32
    """Tokens (characters) per window, pretraining and probe."""
    mlm_steps: int = 400
    """Pretraining steps per rate."""
    mlm_batch: int = 64
    """Windows per pretraining step."""
    mlm_lr: float = 1e-3
    """AdamW peak learning rate (BERT's schedule: 10% linear warm-up, then linear decay; 1e-3
    rather than BERT-base's 1e-4, as small models from scratch take larger rates)."""
    mlm_hidden: int = 64
    """Hidden size of the BERT-style encoder (intermediate size 4x)."""
    mlm_layers: int = 2
    """Transformer layers."""
    mlm_heads: int = 2
    """Attention heads."""
    mlm_classes: int = 8
    """Downstream target: which of this many equal contiguous parts of the corpus a window
    starts in (a topic label on a corpus of articles)."""
    mlm_probe_train: int = 2000
    """Labelled windows for the linear probe."""
    mlm_probe_val: int = 500
    """Validation windows (the probe's ridge penalty)."""
    mlm_probe_test: int = 2000
    """Test windows (the reported error)."""
    mlm_penalties: tuple[float, ...] = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
    """Ridge penalties of the probe, the same grid at every rate."""
    mlm_device: str = "auto"
    """Device of the masked-LM part: auto (cuda when available), cpu or cuda."""

    def __post_init__(self):
        if self.vocab_size < 2 or self.length < 2 or self.vocab_size**self.length > 5000:
            raise ValueError("vocab_size and length must be >= 2, with V**L <= 5000 inputs")
        if not 0 <= self.stay < 1:
            raise ValueError("stay must be in [0, 1)")
        if not self.alphas or any(not 0 < a < 1 for a in self.alphas):
            raise ValueError("alphas must be in (0, 1)")
        if list(self.alphas) != sorted(set(self.alphas)) or len(self.alphas) < 3:
            raise ValueError("alphas must be at least 3 increasing, distinct rates")
        if self.low_rate not in self.alphas:
            raise ValueError("low_rate must be one of alphas")
        if not 1 <= self.d < min(self.n_pretrain, self.vocab_size**self.length - 1):
            raise ValueError("d must be >= 1 and below n_pretrain and the number of inputs")
        if min(self.n_labels, self.n_val) < 2 or self.noise < 0 or not 0 < self.delta < 1:
            raise ValueError("n_labels, n_val >= 2, noise >= 0, delta in (0, 1)")
        if not self.penalties or min(self.penalties) < 0:
            raise ValueError("penalties must be non-negative")
        if self.corpus not in ("pydoc", "file"):
            raise ValueError("corpus must be pydoc or file")
        if not self.text_alphas or any(not 0 < a < 1 for a in self.text_alphas):
            raise ValueError("text_alphas must be in (0, 1)")
        if len(self.text_lengths) < 3 or min(self.text_lengths) < 1:
            raise ValueError("text_lengths needs at least 3 lengths >= 1")
        if min(self.n_windows, self.mc_windows, self.mc_masks, self.mc_length) < 1:
            raise ValueError("n_windows, mc_windows, mc_masks and mc_length must be >= 1")
        if any(not 0 < a < 1 for a in self.mlm_rates) or list(self.mlm_rates) != sorted(
            set(self.mlm_rates)
        ):
            raise ValueError("mlm_rates must be increasing, distinct rates in (0, 1)")
        if self.mlm_rates and len(self.mlm_rates) < 3:
            raise ValueError("mlm_rates needs at least 3 rates (or none)")
        if min(self.mlm_length, self.mlm_steps, self.mlm_batch, self.mlm_hidden, self.mlm_layers,
               self.mlm_heads, self.mlm_probe_train, self.mlm_probe_val,
               self.mlm_probe_test) < 1 or self.mlm_classes < 2:  # fmt: skip
            raise ValueError("the mlm sizes must be >= 1 and mlm_classes >= 2")
        if any(not 0 < a < 1 for a in self.msweep_rates) or not 0 < self.msweep_delta < 1:
            raise ValueError("msweep_rates must be in (0, 1) and msweep_delta in (0, 1)")
        if len(self.msweep_m) < 3 or min(self.msweep_m) < 1:
            raise ValueError("msweep_m needs at least 3 sample sizes >= 1")
        if not 0 <= self.msweep_gapfree_d < min(self.n_pretrain, self.vocab_size**self.length - 1):
            raise ValueError("msweep_gapfree_d must be >= 0 (0: off) and below the inputs")
        if self.workers is not None and self.workers < 1:
            raise ValueError("workers must be >= 1 (or None: one per thread)")
        if self.mlm_hidden % self.mlm_heads:
            raise ValueError("mlm_hidden must be a multiple of mlm_heads")
        if self.mlm_device not in ("auto", "cpu", "cuda"):
            raise ValueError("mlm_device must be auto, cpu or cuda")


PRESETS = {
    "smoke": Preset(
        seeds=(0, 1),
        length=5,
        alphas=(0.05, 0.1, 0.3, 0.5, 0.7, 0.9),
        n_pretrain=150,
        text_alphas=(0.15, 0.5),
        text_lengths=(4, 8, 16),
        n_windows=300,
        mc_windows=40,
        mc_masks=200,
        msweep_rates=(0.9, 0.95),
        msweep_m=tuple(10**k for k in range(2, 11)),
    ),
    "default": Preset(),
    # the masked-LM sweep as a CPU demo on pydoc_data.topics (minutes; not in the default,
    # whose claims it would not sharpen at this scale: see the README)
    "mlm-demo": Preset(
        seeds=(0, 1, 2),
        mlm_rates=(0.05, 0.15, 0.3, 0.5, 0.8),
        mlm_steps=300,
        mlm_probe_train=1500,
        mlm_probe_val=500,
        mlm_probe_test=1500,
    ),
    "paper": Preset(
        corpus="file",
        length=7,
        text_lengths=(8, 16, 32, 64, 96, 128),
        n_windows=20000,
        mlm_rates=(0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
        mlm_length=128,
        mlm_steps=20000,
        mlm_batch=128,
        mlm_lr=5e-4,
        mlm_hidden=256,
        mlm_layers=4,
        mlm_heads=4,
        mlm_probe_train=20000,
        mlm_probe_val=5000,
        mlm_probe_test=20000,
    ),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    preset_option(parser, "--d", field="d", type=int, help="encoder dimension")
    preset_option(parser, "--n-pretrain", field="n_pretrain", type=int, help="pretraining inputs")
    preset_option(parser, "--n-labels", field="n_labels", type=int, help="labelled inputs")


def rate_key(alpha: float) -> str:
    return f"a{alpha:g}"


# ------------------------------------------------------------------ finite space
def measure_rate(preset: Preset, alpha: float, n_top: int = 40):
    """Everything at one [MASK] rate: the exact spectrum quantities (the same for every
    seed) and, per seed, the two encoders' probe errors.
    -> ({seed: metrics}, the top ``n_top`` eigenvalues)"""
    space = topic_mixture(preset.vocab_size, preset.length, preset.stay)
    aug = mask_augmentation(space.p_x, preset.vocab_size, preset.length, alpha)
    f_star = topic_target(space)  # (n_x,)
    lam, psi = aug.spectrum.eigenvalues, aug.spectrum.eigenfunctions
    d, key = preset.d, rate_key(alpha)
    norm_sq, eps = aug.rkhs_norm_sq(f_star), aug.isometry_epsilon(f_star)
    kernel = aug.kernel()
    probe_f = np.random.default_rng(0).standard_normal(aug.n_inputs)
    exact = {
        "kappa_sq": aug.kappa() ** 2,
        "trace": aug.trace(),
        "trace_closed_form": mask_trace(preset.vocab_size, preset.length, alpha),
        "lambda0": lam[0],
        "psi0_spread": float(np.ptp(psi[:, 0])),
        "lambda_next": lam[d + 1],
        "gap_d": lam[d] - lam[d + 1],
        "epsilon": eps,
        "rkhs_norm_sq": norm_sq,
        "approx_error": aug.approximation_error(f_star, d),
        "kernel_asymmetry": float(np.abs(kernel - kernel.T).max()),
        "kernel_min_eig": float(np.linalg.eigvalsh(kernel).min() / np.abs(kernel).max()),
        "operator_gap": float(
            np.abs(aug.gamma_adjoint(aug.gamma(probe_f)) - aug.integral_operator(probe_f)).max()
        ),
    }
    exact = {f"spectrum/{key}/{k}": float(v) for k, v in exact.items()}
    y_max = float(np.abs(f_star).max()) + preset.noise * math.sqrt(3)
    bound = probe_error_bound(
        epsilon=eps,
        rkhs_norm_sq=norm_sq,
        lambda_next=lam[d + 1],
        kappa=aug.kappa(),
        y_max=y_max,
        n=preset.n_labels,
        delta=preset.delta,
    )
    exact[f"spectrum/{key}/approx_bound"] = bound["approximation"]
    exact[f"spectrum/{key}/estimation_bound"] = bound["estimation"]
    exact[f"spectrum/{key}/bound"] = bound["total"]

    def error(pred: np.ndarray) -> float:
        return float(space.p_x @ (pred - f_star) ** 2)

    ideal = psi[:, : d + 1]  # psi_0 (the constant) .. psi_d
    gram = np.diag(1 / lam[: d + 1])  # H_Gamma Gram matrix of those eigenfunctions
    out = {}
    for seed in preset.seeds:
        rng = np.random.default_rng([seed, round(alpha * 1e6)])
        lab, val, pre = (
            rng.choice(aug.n_inputs, size=n, p=space.p_x)
            for n in (preset.n_labels, preset.n_val, preset.n_pretrain)
        )
        half_width = preset.noise * math.sqrt(3)  # uniform noise of std ``noise``
        y_lab = f_star[lab] + half_width * rng.uniform(-1, 1, len(lab))
        y_val = f_star[val] + half_width * rng.uniform(-1, 1, len(val))
        w = constrained_probe(ideal[lab], y_lab, gram, math.sqrt(norm_sq))
        finite, _ = nystrom_encoder(aug, pre, d)  # (n_x, d)
        row = dict(exact)
        # Theorem 2's form: the constrained probe on the finite-sample encoder against the
        # trace-gap bound (tau measured exactly; same radius ||f*||_H as the ideal encoder)
        tau = aug.trace_gap(finite)
        fs_bound = finite_sample_error_bound(
            epsilon=eps, rkhs_norm_sq=norm_sq, lambda_next=lam[d + 1], trace_gap=tau,
            kappa=aug.kappa(), y_max=y_max, n=preset.n_labels, delta=preset.delta,
        )  # fmt: skip
        span = np.column_stack([np.ones(aug.n_inputs), finite])  # (n_x, d + 1)
        w_fs = constrained_probe(span[lab], y_lab, aug.grams(finite)[1], math.sqrt(norm_sq))
        row[f"finite/{key}/trace_gap"] = tau
        row[f"finite/{key}/approx_bound"] = fs_bound["approximation"]
        row[f"finite/{key}/bound"] = fs_bound["total"]
        row[f"finite/{key}/constrained_error"] = error(span @ w_fs)
        for name, feats in (("finite", finite), ("ideal_ridge", psi[:, 1 : d + 1])):
            coef = tuned_ridge(feats[lab], y_lab, feats[val], y_val, preset.penalties)
            row[f"{name}/{key}/error"] = error(predict(feats, coef))
        row[f"ideal/{key}/error"] = error(ideal @ w)
        row[f"ideal/{key}/rkhs_norm_sq_fit"] = float(w @ gram @ w)
        row[f"finite/{key}/approx_error"] = population_fit_error(finite, f_star, space.p_x)
        out[seed] = row
    return out, lam[:n_top].tolist()


def measure_msweep(preset: Preset, alpha: float, group: str = "msweep",
                   d: int | None = None) -> dict[int, dict[str, float]]:  # fmt: skip
    """The trace gap of the kernel-PCA encoder of dimension ``d`` (default ``preset.d``)
    against the number m of pretraining inputs, and the a-priori bound
    ``trace_gap_sample_bound`` at each m. Per seed, one multinomial draw of the counts per m;
    the slope of log tau against log m is fitted over the m where the bound is non-vacuous
    (below lambda_1 + .. + lambda_d, the largest trace gap possible): there it predicts a
    decay at least as fast as m^-1/2. Metrics under ``group``/a<alpha>/. -> {seed: metrics}"""
    d = preset.d if d is None else d
    space = topic_mixture(preset.vocab_size, preset.length, preset.stay)
    aug = mask_augmentation(space.p_x, preset.vocab_size, preset.length, alpha)
    lam, kappa_sq, key = aug.spectrum.eigenvalues, aug.kappa() ** 2, rate_key(alpha)
    cases = len(msweep_cases(preset))
    cells = cases * len(preset.msweep_rates) * len(preset.msweep_m) * len(preset.seeds)
    bounds = np.array([trace_gap_sample_bound(kappa_sq, m, d, preset.msweep_delta / cells)
                       for m in preset.msweep_m])  # fmt: skip
    ceiling = float(lam[1 : d + 1].sum())
    fit = bounds < ceiling
    out = {}
    for seed in preset.seeds:
        # the gapped case keeps its draws of every earlier run; the gap-free one its own
        tag = [seed, 30, round(alpha * 1e6)] + ([] if group == "msweep" else [d])
        rng = np.random.default_rng(tag)
        taus = np.array([kernel_pca_encoder_counts(aug, rng.multinomial(m, space.p_x), d)[1]
                         for m in preset.msweep_m])  # fmt: skip
        k = f"{group}/{key}"
        row = {f"{k}/kappa_sq": kappa_sq, f"{k}/ceiling": ceiling,
               f"{k}/eigengap": float(lam[d] - lam[d + 1]), f"{k}/n_fit": float(fit.sum()),
               f"{k}/bound_ratio_max": float(np.max(taus / bounds))}  # fmt: skip
        for m, tau, b in zip(preset.msweep_m, taus, bounds, strict=True):
            row[f"{k}/m{m}/trace_gap"] = float(tau)
            row[f"{k}/m{m}/bound"] = float(b)
        ok = fit & (taus > 0)
        row[f"{k}/slope"] = (  # fewer than 3 points: no slope (the claim: inconclusive)
            float(np.polyfit(np.log(np.array(preset.msweep_m)[ok]), np.log(taus[ok]), 1)[0])
            if ok.sum() >= 3 else float("nan")
        )  # fmt: skip
        row[f"{k}/slope_all"] = float(
            np.polyfit(np.log(preset.msweep_m), np.log(np.maximum(taus, 1e-300)), 1)[0]
        )
        out[seed] = row
    return out


def tuned_ridge(f_tr, y_tr, f_val, y_val, penalties) -> np.ndarray:
    """Ridge probe with the penalty of least validation error."""
    fits = [ridge_probe(f_tr, y_tr, p) for p in penalties]
    val = [np.mean((predict(f_val, c) - y_val) ** 2) for c in fits]
    return fits[int(np.argmin(val))]


def population_fit_error(features: np.ndarray, f_star: np.ndarray, p_x: np.ndarray) -> float:
    """min_{b, w} E_{P_X}(b + w^T phi - f*)^2: the encoder's approximation error, exactly."""
    design = np.column_stack([np.ones(len(f_star)), features]) * np.sqrt(p_x)[:, None]
    coef = np.linalg.lstsq(design, f_star * np.sqrt(p_x), rcond=None)[0]
    return float(np.sum((design @ coef - f_star * np.sqrt(p_x)) ** 2))


def closed_form_checks(preset: Preset) -> dict[str, float]:
    """Closed forms against the numbers, under a product (uniform) P_X and for the bigram
    dynamic programme against enumeration: the largest relative error of each."""
    v, length, alpha = preset.vocab_size, min(preset.length, 5), 0.3
    uniform = np.full(v**length, 1.0 / v**length)
    masked = mask_augmentation(uniform, v, length, alpha)
    replaced = replacement_augmentation(uniform, v, length, alpha)
    chain = MarkovChain(
        np.arange(1, v + 1) / (v * (v + 1) / 2), MarkovChain.sticky(v, 0, 0.5).transition
    )
    seqs = np.indices((v,) * length).reshape(length, -1).T
    chain_aug = mask_augmentation(np.exp(chain.log_prob(seqs)), v, length, alpha)
    dp = np.exp(mask_log_kernel_diagonal_markov(chain, seqs, alpha))
    rel = lambda a, b: abs(a / b - 1)  # noqa: E731
    return {
        "closed/mask_kappa_sq": rel(masked.kappa() ** 2, mask_kappa_sq_product(np.full((length, v), 1 / v), alpha)),
        "closed/mask_trace": rel(masked.trace(), mask_trace(v, length, alpha)),
        "closed/replacement_kappa_sq": rel(replaced.kappa() ** 2, replacement_kappa_sq_uniform(v, length, alpha)),
        "closed/markov_dp": float(np.max(np.abs(dp / chain_aug.kernel_diagonal() - 1))),
    }  # fmt: skip


# ------------------------------------------------------------------ text
def measure_text(preset: Preset, corpus: Corpus, seed: int) -> dict[str, float]:
    """log10 kappa^2 of [MASK] replacement on text windows, per rate and length; the fitted
    slope per token; the i.i.d.-token closed form beside it; the Monte-Carlo check."""
    rng = np.random.default_rng([seed, 20])
    chain = MarkovChain.fit(corpus.tokens, corpus.vocab_size, preset.smoothing)
    out: dict[str, float] = {}
    lengths = np.array(preset.text_lengths, dtype=float)
    for length in preset.text_lengths:
        wins = corpus.windows(length, preset.n_windows, rng)
        for alpha in preset.text_alphas:
            log_k = mask_log_kernel_diagonal_markov(chain, wins, alpha)  # (n_windows,)
            iid = np.log(alpha + (1 - alpha) / chain.initial[wins]).sum(1)  # product P_X
            key = f"text/{rate_key(alpha)}/L{length}"
            out[f"{key}/log10_kappa_sq"] = float(log_k.max() / LN10)
            out[f"{key}/iid_log10_kappa_sq"] = float(iid.max() / LN10)
    for alpha in preset.text_alphas:
        key = f"text/{rate_key(alpha)}"
        ys = np.array([out[f"{key}/L{n}/log10_kappa_sq"] for n in preset.text_lengths])
        slope, intercept = np.polyfit(lengths, ys, 1)
        resid = ys - (slope * lengths + intercept)
        out[f"{key}/slope"] = float(slope)
        out[f"{key}/r2"] = float(1 - resid @ resid / np.sum((ys - ys.mean()) ** 2))
        iid = np.array([out[f"{key}/L{n}/iid_log10_kappa_sq"] for n in preset.text_lengths])
        out[f"{key}/iid_slope"] = float(np.polyfit(lengths, iid, 1)[0])
        pi_min = chain.initial.min()
        out[f"{key}/iid_sup_slope"] = float(np.log10(alpha + (1 - alpha) / pi_min))
    # the Monte-Carlo estimator over masks against the exact sum, on short windows
    wins = corpus.windows(preset.mc_length, preset.mc_windows, rng)
    alpha = preset.text_alphas[0]
    exact = mask_log_kernel_diagonal_markov(chain, wins, alpha)
    mc = mask_log_kernel_diagonal_mc(wins, chain_log_marginal(chain), alpha, preset.mc_masks, rng)
    ratio = np.exp(mc - exact)
    out["text/mc/ratio_mean"] = float(ratio.mean())
    out["text/mc/ratio_se"] = float(ratio.std(ddof=1) / math.sqrt(len(ratio)))
    out["text/vocab_size"] = float(corpus.vocab_size)
    return out


def chain_log_marginal(chain: MarkovChain):
    """log P(X_keep = x_keep) under a Markov chain, for ``mask_log_kernel_diagonal_mc``."""

    def log_marginal(seqs: np.ndarray, keep: np.ndarray) -> np.ndarray:
        n, length = seqs.shape
        log_mu = np.log(chain.marginals(length))
        log_pow = np.log(chain.transition_powers(length)[1:])  # gap g at [g - 1]
        total, last = np.zeros(n), np.full(n, -1)
        for j in range(length):
            k = keep[:, j]
            first = k & (last < 0)
            step = k & (last >= 0)
            total[first] += log_mu[j, seqs[first, j]]
            prev = last[step]
            total[step] += log_pow[j - prev - 1, seqs[step, prev], seqs[step, j]]
            last[k] = j
        return total

    return log_marginal


# ------------------------------------------------------------------ run
def corpus_of(preset: Preset, data_dir) -> Corpus:
    """The text: CPython's bundled pydoc topics, or <data_dir>/aug-rkhs/corpus.txt."""
    return load_corpus(data_dir) if preset.corpus == "file" else load_pydoc_topics()


def text_unit(preset: Preset, data_dir, seed: int) -> dict[str, float]:
    """One seed of the text part, reading the corpus itself (a unit of the executor)."""
    return measure_text(preset, corpus_of(preset, data_dir), seed)


def mlm_unit(preset: Preset, data_dir, alpha: float | None, seed: int, device: str) -> dict:
    """One masked-LM unit: the references (``alpha`` None) or one rate, for one seed."""
    from . import mlm

    corpus = corpus_of(preset, data_dir)
    if alpha is None:
        return mlm.measure_mlm_references(preset, corpus, seed, device)
    return mlm.measure_mlm_rate(preset, corpus, alpha, seed, device)


def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    corpus = corpus_of(preset, ctx.data_dir)  # here: its size for the log, and a missing
    ctx.log.info(  # file stops the run before any unit starts
        "finite space: V=%d, L=%d (%d inputs); text: %s (%d characters, %d tokens)",
        preset.vocab_size, preset.length, preset.vocab_size**preset.length,
        corpus.source, len(corpus.tokens), corpus.vocab_size,
    )  # fmt: skip
    seeds_tag = "-".join(map(str, preset.seeds))  # a rate unit holds every seed's row

    # every unit is independent (each builds its space or reads its corpus from the data
    # path, seeds itself and reads nothing from ctx), so the pool (or Ray) gives the serial
    # run's numbers; no timing is a claim, nothing stays serial in the driver. The slowest
    # first: the gap-free m sweep, the m sweep, the text seeds, the rates.
    def msweep_key(group: str, d: int, alpha: float) -> str:
        return (f"msweep/rate{alpha:g}_seeds{seeds_tag}" if group == "msweep"
                else f"{group}/d{d}/rate{alpha:g}_seeds{seeds_tag}")  # fmt: skip

    jobs = {msweep_key(group, d, alpha): functools.partial(measure_msweep, preset, alpha, group, d)
            for group, d in reversed(msweep_cases(preset)) for alpha in preset.msweep_rates}  # fmt: skip
    for seed in ctx.seeds:
        jobs[f"text/seed{seed}"] = functools.partial(text_unit, preset, ctx.data_dir, seed)
    for alpha in preset.alphas:
        jobs[f"rate{alpha:g}_seeds{seeds_tag}"] = functools.partial(measure_rate, preset, alpha)
    jobs["closed_forms"] = functools.partial(closed_form_checks, preset)
    if preset.mlm_rates:
        device = mlm_device(preset)
        ctx.log.info("masked LM on %s: %d rates x %d seeds, %d steps each (%s)", corpus.source,
                     len(preset.mlm_rates), len(ctx.seeds), preset.mlm_steps, device)  # fmt: skip
        mlm_jobs = {f"mlm/a{alpha:g}/seed{seed}": (alpha, seed)
                    for alpha in preset.mlm_rates for seed in ctx.seeds}  # fmt: skip
        mlm_jobs |= {f"mlm/references/seed{seed}": (None, seed) for seed in ctx.seeds}
        jobs = {key: functools.partial(mlm_unit, preset, ctx.data_dir, a, s, device)
                for key, (a, s) in mlm_jobs.items()} | jobs  # fmt: skip
    units = ctx.cached_parallel(jobs, desc="units")
    metrics, eigenvalues = Metrics(), {}
    for alpha in preset.alphas:  # the metrics in the serial run's order
        rows, top = units[f"rate{alpha:g}_seeds{seeds_tag}"]
        for seed, row in rows.items():
            metrics.update(seed, row)
        eigenvalues[rate_key(alpha)] = top
    for group, d in msweep_cases(preset):
        for alpha in preset.msweep_rates:
            for seed, row in units[msweep_key(group, d, alpha)].items():
                metrics.update(seed, row)
    for seed in ctx.seeds:
        metrics.update(seed, units["closed_forms"])
    for seed in ctx.seeds:
        metrics.update(seed, units[f"text/seed{seed}"])
    if preset.mlm_rates:
        for seed in ctx.seeds:
            metrics.update(seed, units[f"mlm/references/seed{seed}"])
        for alpha in preset.mlm_rates:
            for seed in ctx.seeds:
                metrics.update(seed, units[f"mlm/a{alpha:g}/seed{seed}"])
    ctx.save_partial(metrics)
    ctx.save_figure(plot_errors(metrics, preset), "error_vs_mask_rate.png")
    ctx.save_figure(plot_spectra(eigenvalues, preset), "spectrum.png")
    ctx.save_figure(plot_kappa(metrics, preset), "kappa_vs_length.png")
    if preset.mlm_rates:
        ctx.save_figure(plot_mlm(metrics, preset), "mlm_probe_vs_mask_rate.png")
    return Report(
        metrics,
        make_claims(metrics, preset),
        make_checks(metrics, preset),
        extra={"top_eigenvalues": eigenvalues},
        premises=make_premises(metrics, preset),
    )


def mlm_device(preset: Preset) -> str:
    """The masked-LM part's device; a missing extra or CUDA is one line (exit 2)."""
    try:
        import torch

        from . import mlm  # noqa: F401
    except ImportError as e:
        raise UsageError(
            f"mlm_rates needs the mlm extra (torch, transformers): pip install "
            f"'iclr24-aug-rkhs[mlm]' ({e})"
        ) from e
    device = preset.mlm_device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif device == "cuda" and not torch.cuda.is_available():
        raise UsageError("mlm_device=cuda but no CUDA device is available")
    return device


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())

"""The measurements of the reproduction: the toy model of superposition (MMCS of the SAE
against PCA and ICA), real LM activations (FVU, L0, dead fraction, CE loss recovered, and
the offline interpretability score of SAE features against PCA, ICA, neuron and random
bases), and IOI activation patching in the SAE, neuron and PCA bases."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from iclr24_common import UsageError

from .autointerp import autointerp_scores
from .baselines import ica_basis, neuron_basis, pca_basis, random_basis
from .data import ToySuperposition, cpython_text, mixed_text, name_text, paper_files
from .harvest import ce_loss, hook_module, load_harvest, splice
from .lm import load_lm, token_sequences
from .metrics import (
    close_pairs,
    dead_fraction,
    dense_fraction,
    explanation_scores,
    fvu,
    l0,
    mmcs,
    planted_token_features,
    recovered_share,
    token_simulation_scores,
)
from .patching import features_needed, ioi_prompts, patching_curve, task_logit_diffs
from .sae import SparseAutoencoder
from .train import TrainConfig, train_sae


@torch.no_grad()
def _sae_eval(sae: SparseAutoencoder, x: torch.Tensor, batch: int = 4096) -> list[dict]:
    """FVU, L0, dead and dense fractions of every member on ``x`` ``(n, d)``."""
    x_hat, codes = [], []
    for lo in range(0, len(x), batch):
        xh, c = sae(x[lo : lo + batch])
        x_hat.append(xh)
        codes.append(c)
    x_hat, codes = torch.cat(x_hat, 1).numpy(), torch.cat(codes, 1).numpy()
    xn = x.numpy()
    return [{"fvu": fvu(xn, x_hat[m]), "l0": l0(codes[m]), "dead": dead_fraction(codes[m]),
             "dense": dense_fraction(codes[m])} for m in range(sae.k)]  # fmt: skip


def _unit_norm_error(sae: SparseAutoencoder) -> float:
    return float((sae.dictionary().detach().norm(dim=-1) - 1).abs().max())


# ---------------------------------------------------------------------- toy model
def measure_toy(preset, seed: int) -> dict[str, float]:
    """Train an SAE per (dictionary ratio, alpha) on fresh toy samples; MMCS against the
    ground truth, with PCA and ICA fitted on ``toy_fit_samples`` samples as baselines."""
    toy = ToySuperposition(d=preset.toy_d, n_features=preset.toy_features,
                           n_active=preset.toy_active, decay=preset.toy_decay, seed=seed)  # fmt: skip
    truth = toy.features.numpy()
    gen = torch.Generator().manual_seed(10_000 + seed)
    x_eval = toy.sample(preset.toy_eval_samples, gen)
    out: dict[str, float] = {}
    config = TrainConfig(steps=preset.toy_steps, batch_size=preset.toy_batch, lr=preset.lr)
    for ratio in preset.toy_ratios:
        n_dict = int(round(ratio * preset.toy_features))
        sae = SparseAutoencoder(preset.toy_d, n_dict, preset.toy_alphas, tied=preset.tied,
                                pre_bias=preset.pre_bias, seed=seed)  # fmt: skip
        train_sae(sae, toy.sample, config, seed=seed, desc=f"toy r={ratio:g}")
        atoms = sae.dictionary().detach().numpy()
        stats = _sae_eval(sae, x_eval)
        for m, alpha in enumerate(preset.toy_alphas):
            key = f"toy/sae/r{ratio:g}_a{alpha:g}"
            out[f"{key}/mmcs"] = mmcs(truth, atoms[m])
            out[f"{key}/recovered"] = recovered_share(truth, atoms[m], preset.toy_recovery)
            out[f"{key}/fvu"] = stats[m]["fvu"]
            out[f"{key}/l0"] = stats[m]["l0"]
            out[f"{key}/dead"] = stats[m]["dead"]
        out[f"toy/sae/r{ratio:g}/unit_norm_error"] = _unit_norm_error(sae)
    main = f"toy/sae/r{preset.toy_ratio:g}_a{preset.toy_alpha:g}"
    for name in ("mmcs", "recovered", "fvu", "l0", "dead"):
        out[f"toy/sae/{name}"] = out[f"{main}/{name}"]
    out["toy/sae/best_grid_mmcs"] = max(v for k, v in out.items() if k.endswith("/mmcs"))
    # baselines see as many samples as fit in memory comfortably; they have no tuning knob
    x_fit = toy.sample(preset.toy_fit_samples, gen).numpy()
    # PCA, ICA and random directions have arbitrary sign: each scores by its better sign
    # (signed=False), as the official to_nneg_dict dictionaries hold both signs
    bases = {"pca": pca_basis(x_fit).directions, "ica": ica_basis(x_fit, seed=seed).directions,
             "random": random_basis(preset.toy_d, preset.toy_features, seed).directions}  # fmt: skip
    for name, directions in bases.items():
        out[f"toy/{name}/mmcs"] = mmcs(truth, directions, signed=False)
        out[f"toy/{name}/recovered"] = recovered_share(truth, directions, preset.toy_recovery,
                                                       signed=False)  # fmt: skip
    # pairs of ground-truth features one direction could both recover: with none, a basis of
    # d directions (PCA, ICA) recovers at most d of them (the claim's ceiling d / n)
    out["toy/features/close_pairs"] = float(close_pairs(truth, preset.toy_recovery))
    return out


# ---------------------------------------------------------------------- the LM
def split_tokens(n_tokens: int, val_frac: float) -> tuple[slice, slice]:
    """Training rows first, evaluation rows last (contiguous, so no text is in both)."""
    cut = int(round(n_tokens * (1 - val_frac)))
    return slice(0, cut), slice(cut, n_tokens)


def _interp_split(preset, acts: np.ndarray, tokens: np.ndarray):
    """The evaluation tokens every dictionary is scored on, and the explain/simulate halves."""
    _, ev = split_tokens(len(acts), preset.val_frac)
    x, tok = acts[ev][: preset.interp_tokens], tokens[ev][: preset.interp_tokens]
    return x, tok, np.arange(len(x)) < len(x) // 2


def _live_mean(v: np.ndarray) -> float:
    """Mean over the scored (live) features; 0 when none is scored."""
    v = v[np.isfinite(v)]
    return float(v.mean()) if len(v) else 0.0


def _score(name: str, feats: np.ndarray, tok: np.ndarray, explain: np.ndarray, preset) -> dict:
    """The offline interpretability score of a dictionary (:func:`explanation_scores`, an
    explanation of ``preset.n_explain`` tokens): the mean over its live features (those
    firing at least 5 times in both halves; a rare or dead feature cannot be explained, so it
    is left out rather than scored 0, as the official interpret.py skips a feature "due to
    lack of activating examples", HoagyC/sparse_coding@69c5ae0), with the share of features
    that are live and the share of tokens they fire on beside it. The earlier token-lookup
    score (:func:`token_simulation_scores`, an unlimited lookup table) is kept beside it as
    ``interp_lookup``: it failed the validations (issue 49) and decides nothing."""
    sim, conc = token_simulation_scores(feats, tok, explain, top_k=preset.top_k)
    score = explanation_scores(feats, tok, explain, n_explain=preset.n_explain, top_k=preset.top_k)
    return {f"lm/{name}/interp": _live_mean(score),
            f"lm/{name}/interp_scored_frac": float(np.isfinite(score).mean()),
            f"lm/{name}/interp_lookup": _live_mean(sim),
            f"lm/{name}/interp_lookup_scored_frac": float(np.isfinite(sim).mean()),
            f"lm/{name}/concentration": _live_mean(conc),
            f"lm/{name}/firing_frac": float((feats > 0).mean()),
            f"lm/{name}/n_features": feats.shape[1]}  # fmt: skip


def activation_scale(preset, acts_train: np.ndarray) -> float:
    """The constant the LM's activations are multiplied by before the SAE: ``sqrt(d /
    E||x||^2)`` on the training tokens when ``preset.normalize``, else 1 (the paper's raw
    activations)."""
    if not preset.normalize:
        return 1.0
    return float(np.sqrt(acts_train.shape[1] / (acts_train.astype(np.float64) ** 2).sum(1).mean()))


def _keep_first(h: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
    """``new`` at positions >= 1, the original first position (never harvested or trained on)."""
    return torch.cat([h[:, :1], new.to(h.dtype)], 1)


# ---------------------------------------------------------------------- units
# Every unit below is a module-level function of the preset, a seed and paths (the harvest's
# folder, the data root): it loads what it needs itself (ctx.cached_parallel runs it in
# another process or on Ray), so its results equal a serial run's.
def lm_text(preset, data_dir) -> list[str]:
    """The text the LM reads: the paper's OpenWebText files (paper preset), else CPython's
    documentation with generated sentences with names interleaved (``preset.names_frac`` of
    the characters; the IOI task is about names, which the documentation lacks)."""
    if preset.lm == "paper":
        _, text = paper_files(data_dir)
        return [p.read_text(errors="replace") for p in sorted(text.glob("*.txt"))]
    return mixed_text(cpython_text(), name_text(preset.name_docs, seed=NAME_TEXT_SEED),
                      preset.names_frac)  # fmt: skip


NAME_TEXT_SEED = 1
"""The name draw of the SAE's training text (the IOI prompts are drawn with seed 0)."""


def lm_spec(preset, data_dir) -> str:
    """The model :func:`load_lm` opens: the paper's Pythia folder, or the preset's spec."""
    return str(paper_files(data_dir)[0]) if preset.lm == "paper" else preset.lm


def lm_sequences(preset, lm, data_dir) -> torch.Tensor:
    """The ``n_seq`` harvested sequences, then the ``ce_seqs`` held out for the CE loss."""
    need = preset.n_seq + preset.ce_seqs
    ids = token_sequences(lm, lm_text(preset, data_dir), preset.seq_len, need)
    if len(ids) < need:  # else the CE sequences would be silently empty
        raise UsageError(f"the text gives {len(ids)} sequences of {preset.seq_len} tokens; "
                         f"n_seq + ce_seqs = {need} are needed (add text or lower n_seq)")  # fmt: skip
    return ids


def _open_lm(preset, data_dir):
    """The LM, its hooked module and the CE sequences, inside a unit (torch's threads are the
    unit's: ``threads=None``)."""
    lm = load_lm(lm_spec(preset, data_dir), threads=None)
    module = hook_module(lm.model, preset.layer, preset.site)
    return lm, module, lm_sequences(preset, lm, data_dir)[preset.n_seq :]


def measure_planted(preset, seed: int, act_dir) -> dict[str, float]:
    """The validation of the offline score on a case with known answers: features planted on
    the evaluation tokens (:func:`planted_token_features`, as many as the SAE has, in the
    LM's width), scored as the true codes, as random directions of the planted activations
    and as the untrained SAE's codes of them, each by the claim's score and by the earlier
    token-lookup score."""
    acts, tokens = load_harvest(act_dir)
    _, tok, explain = _interp_split(preset, acts, tokens)
    d = acts.shape[1]
    codes, x = planted_token_features(tok, d, int(preset.ratio * d), seed=seed)
    xs = torch.from_numpy(x).float()
    xs = xs * float(np.sqrt(d / (xs**2).sum(1).mean()))
    sae = SparseAutoencoder(d, int(preset.ratio * d), preset.alphas[:1], tied=preset.tied,
                            pre_bias=preset.pre_bias, seed=seed)  # fmt: skip
    with torch.no_grad():
        untrained = sae.encode(xs)[0].numpy()
    feats = {"truth": codes, "random": random_basis(d, int(preset.ratio * d) // 2, seed).features(x),
             "untrained": untrained}  # fmt: skip
    out = {}
    for name, f in feats.items():
        res = _score(name, f, tok, explain, preset)
        out[f"planted/{name}/interp"] = res[f"lm/{name}/interp"]
        out[f"planted/{name}/interp_lookup"] = res[f"lm/{name}/interp_lookup"]
        out[f"planted/{name}/interp_scored_frac"] = res[f"lm/{name}/interp_scored_frac"]
    return out


def lm_reference(preset, act_dir, data_dir) -> dict:
    """What does not depend on the seed, computed once: PCA, ICA (random_state 0) and neuron
    scores, and the model's clean and zero-ablated cross-entropy."""
    acts, tokens = load_harvest(act_dir)
    lm, module, ce_ids = _open_lm(preset, data_dir)
    tr, _ = split_tokens(len(acts), preset.val_frac)
    x, tok, explain = _interp_split(preset, acts, tokens)
    fit = acts[tr][: preset.baseline_fit_tokens].astype(np.float64)
    out: dict[str, float] = {}
    for basis in (pca_basis(fit), ica_basis(fit[: preset.ica_fit_tokens], seed=0),
                  neuron_basis(acts.shape[1])):  # fmt: skip
        out.update(_score(basis.name, basis.features(x.astype(np.float64)), tok, explain, preset))
    out["lm/ce/clean"] = ce_loss(lm.model, ce_ids)
    with splice(module, lambda h: _keep_first(h, torch.zeros_like(h[:, 1:]))):
        out["lm/ce/zero_ablation"] = ce_loss(lm.model, ce_ids)
    return out


def _new_sae(preset, d: int, seed: int) -> SparseAutoencoder:
    return SparseAutoencoder(d, int(preset.ratio * d), preset.alphas, tied=preset.tied,
                             pre_bias=preset.pre_bias, seed=seed)  # fmt: skip


def measure_lm(preset, seed: int, act_dir, data_dir) -> dict[str, Any]:
    """The SAE (every alpha at once) and the random basis for one seed, then its IOI
    patching curves (the trained SAE and, as the claim's control, the same SAE untrained).

    The SAE's alpha is chosen on the evaluation split by reconstruction only (the largest
    alpha whose FVU <= ``fvu_max``), never by the interpretability score. Every dictionary is
    scored on the same evaluation tokens: the first half explains, the second half is
    simulated (:func:`explanation_scores`)."""
    acts, tokens = load_harvest(act_dir)
    lm, module, ce_ids = _open_lm(preset, data_dir)
    tr, ev = split_tokens(len(acts), preset.val_frac)
    x_train = torch.from_numpy(acts[tr])
    scale = activation_scale(preset, acts[tr])
    d = acts.shape[1]
    sae = _new_sae(preset, d, seed)
    config = TrainConfig(steps=preset.steps, batch_size=preset.batch_size, lr=preset.lr,
                         resample_every=preset.resample_every)  # fmt: skip
    info = train_sae(sae, x_train * scale, config, seed=seed, desc=f"sae seed {seed}")
    stats = _sae_eval(sae, torch.from_numpy(acts[ev]) * scale)
    out: dict[str, Any] = {"lm/sae/scale": scale, "lm/sae/resampled": info["resampled"],
                           "lm/sae/unit_norm_error": _unit_norm_error(sae)}  # fmt: skip
    for m, alpha in enumerate(preset.alphas):
        for name, v in stats[m].items():
            out[f"lm/sae/a{alpha:g}/{name}"] = v
    ok = [m for m in range(sae.k) if stats[m]["fvu"] <= preset.fvu_max]
    best = max(ok) if ok else 0  # alphas ascend: the sparsest member within the FVU budget
    out["lm/sae/alpha"] = float(preset.alphas[best])
    for name, v in stats[best].items():
        out[f"lm/sae/{name}"] = v
    chosen = sae.member(best)

    x, tok, explain = _interp_split(preset, acts, tokens)
    with torch.no_grad():
        sae_feats = chosen.encode(torch.from_numpy(x) * scale)[0].numpy()
    out.update(_score("sae", sae_feats, tok, explain, preset))
    rand = random_basis(d, int(preset.ratio * d) // 2, seed)  # as many features as the SAE
    out.update(_score("random", rand.features(x.astype(np.float64)), tok, explain, preset))
    out.update(measure_untrained(preset, seed, acts, tokens, best, scale))

    # CE loss recovered: splice the SAE's reconstruction into the model
    def recon(h):
        with torch.no_grad():
            rec = chosen(h[:, 1:].reshape(-1, d) * scale)[0][0] / scale
        return _keep_first(h, rec.reshape(h.shape[0], -1, d))

    with splice(module, recon):
        out["lm/ce/sae"] = ce_loss(lm.model, ce_ids)
    out["_dashboard"] = _top_contexts(sae_feats, tok, preset.dashboard_features, lm.decode)
    out["_sae"] = chosen  # for the --llm units (pickled with the unit)
    if preset.ioi_prompts:
        pairs = ioi_prompts(lm.encode, preset.ioi_prompts)
        out.update(ioi_sae(preset, lm.model, module, pairs, chosen, scale, "sae"))
        untrained = _new_sae(preset, d, seed).member(best)  # the control: the same SAE untrained
        out.update(ioi_sae(preset, lm.model, module, pairs, untrained, scale, "untrained"))
    return out


def measure_untrained(preset, seed: int, acts, tokens, alpha_index: int, scale: float) -> dict:
    """The degenerate control of the interpretability claim: the SAE of ``seed`` as it is
    before training (same size, same init, same seed; the member of the alpha the trained SAE
    chose), its codes of the same scaled evaluation tokens scored exactly as the trained
    SAE's (:func:`_score`). If an untrained SAE passes the claim's criterion, the criterion
    cannot tell learning from a random ReLU read-out."""
    untrained = _new_sae(preset, acts.shape[1], seed).member(alpha_index)
    x, tok, explain = _interp_split(preset, acts, tokens)
    with torch.no_grad():
        feats = untrained.encode(torch.from_numpy(x) * scale)[0].numpy()
    out = _score("untrained", feats, tok, explain, preset)
    out["lm/untrained/l0"] = l0(feats)
    out["lm/untrained/dead"] = dead_fraction(feats)
    return out


def _top_contexts(feats: np.ndarray, tokens: np.ndarray, n: int, decode, k: int = 8) -> list[dict]:
    """For ``n`` features drawn at random among those that fire (not cherry-picked): the ``k``
    top activations, each as (text before, token, text after, activation)."""
    freq = (feats > 0).mean(0)
    alive = np.flatnonzero(freq > 0)
    out = []
    for f in np.sort(np.random.default_rng(0).permutation(alive)[:n]):
        top = np.argsort(-feats[:, f])[:k]
        out.append({"feature": int(f), "freq": float(freq[f]),
                    "top": [(decode(tokens[max(0, i - 12) : i].tolist()), decode([int(tokens[i])]),
                             decode(tokens[i + 1 : i + 4].tolist()), float(feats[i, f]))
                            for i in top if feats[i, f] > 0]})  # fmt: skip
    return out


# ---------------------------------------------------------------------- IOI patching
def _grid(ks, m: int, zero: bool = False) -> list[int]:
    """The preset's patching grid below ``m``, then ``m`` itself (every feature); with
    ``zero``, 0 first (the SAE's error node alone)."""
    return [0] * zero + [k for k in ks if k < m] + [m]


def _curve(preset, name: str, model, module, pairs, encode, directions, error=None) -> dict:
    ks = _grid(preset.ioi_ks, directions.shape[0], zero=error is not None)
    shares = patching_curve(model, module, pairs, encode, directions, ks, error=error)
    out = {f"ioi/{name}/share_k{k}": s for k, s in zip(ks, shares)}
    needed = features_needed(ks, shares, preset.ioi_share)
    # the SAE's error node is one node of the circuit (Marks et al. 2024): nodes = features + 1
    out[f"ioi/{name}/k_needed"] = needed + (error is not None)
    out[f"ioi/{name}/full_share"] = shares[-1]
    if error is not None:
        out[f"ioi/{name}/error_share"] = shares[0]
    return out


def ioi_reference(preset, act_dir, data_dir) -> dict[str, float]:
    """What does not depend on the seed: whether the model solves the task (logit difference
    IO - S on clean and corrupted prompts) and the patching curves of the neuron basis and
    of PCA (fitted on the same training tokens as in :func:`lm_reference`)."""
    acts, _ = load_harvest(act_dir)
    lm, module, _ = _open_lm(preset, data_dir)
    model, pairs = lm.model, ioi_prompts(lm.encode, preset.ioi_prompts)
    clean, corrupt = task_logit_diffs(model, pairs)
    out = {"ioi/task/logit_diff": float(clean.mean()),
           "ioi/task/logit_diff_se": float(clean.std() / len(clean) ** 0.5),
           "ioi/task/accuracy": float((clean > 0).float().mean()),
           "ioi/task/corrupt_logit_diff": float(corrupt.mean()),
           "ioi/task/prompts": float(len(clean))}  # fmt: skip
    d = acts.shape[1]
    out.update(_curve(preset, "neurons", model, module, pairs, lambda h: h, torch.eye(d)))
    tr, _ = split_tokens(len(acts), preset.val_frac)
    vt = torch.from_numpy(pca_basis(acts[tr][: preset.baseline_fit_tokens].astype(np.float64))
                          .directions).float()  # fmt: skip
    out.update(_curve(preset, "pca", model, module, pairs, lambda h: h @ vt.T, vt))
    return out


def ioi_sae(preset, model, module, pairs, sae: SparseAutoencoder, scale: float, name: str) -> dict:
    """An SAE's patching curve as in sparse feature circuits (Marks et al. 2024): its codes of
    the scaled activations, its unit atoms mapped back to the model's scale, and its
    reconstruction error patched as one more node with every ``k`` (so patching every
    feature and the error is the full patch); beside it, the share of all features with the
    error left clean (``explained_share``: what the SAE's features alone carry)."""
    with torch.no_grad():
        atoms = sae.dictionary()[0] / scale
    encode = lambda h: sae.encode(h * scale)[0]  # noqa: E731
    error = lambda h: h - sae(h * scale)[0][0] / scale  # noqa: E731
    out = _curve(preset, name, model, module, pairs, encode, atoms, error=error)
    out[f"ioi/{name}/explained_share"] = patching_curve(model, module, pairs, encode, atoms,
                                                        [atoms.shape[0]])[0]  # fmt: skip
    return out


# ---------------------------------------------------------------------- --llm autointerp
def llm_autointerp(preset, seed: int, llm, acts, tokens, sae, scale: float, decode) -> dict:
    """Explain-then-simulate scores (:mod:`.autointerp`) of ``llm_features`` features of the
    SAE and of every baseline, on the same evaluation tokens and halves as the offline
    score."""
    x, tok, explain = _interp_split(preset, acts, tokens)
    tr, _ = split_tokens(len(acts), preset.val_frac)
    fit = acts[tr][: preset.baseline_fit_tokens].astype(np.float64)
    with torch.no_grad():
        feats = {"sae": sae.encode(torch.from_numpy(x) * scale)[0].numpy()}
    for basis in (pca_basis(fit), ica_basis(fit[: preset.ica_fit_tokens], seed=0),
                  neuron_basis(acts.shape[1]), random_basis(acts.shape[1], sae.n_dict // 2, seed)):  # fmt: skip
        feats[basis.name] = basis.features(x.astype(np.float64))
    out: dict = {"_explanations": {}}
    for name, f in feats.items():
        res = autointerp_scores(llm, f, tok, explain, decode, preset.llm_features, seed=seed)
        out[f"lm/{name}/llm_interp"] = res["score"]
        out["_explanations"][name] = res["features"]
    return out

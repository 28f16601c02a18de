"""The measurements of a dictionary: reconstruction (FVU), sparsity (L0, dead and dense
fractions), recovery of known features (MMCS), loss recovered when spliced into the model,
and an offline interpretability score computed from top-activating tokens."""

from __future__ import annotations

import numpy as np
from scipy import sparse


def fvu(x: np.ndarray, x_hat: np.ndarray) -> float:
    """Fraction of variance unexplained: ``sum ||x - x_hat||^2 / sum ||x - mean(x)||^2``."""
    x, x_hat = np.asarray(x, np.float64), np.asarray(x_hat, np.float64)
    return float(((x - x_hat) ** 2).sum() / ((x - x.mean(0)) ** 2).sum())


def l0(codes: np.ndarray) -> float:
    """Mean number of non-zero features per input, codes ``(batch, n_features)``."""
    return float((np.asarray(codes) != 0).sum(-1).mean())


def firing_frequency(codes: np.ndarray) -> np.ndarray:
    """Fraction of inputs on which each feature is non-zero, ``(n_features,)``."""
    return (np.asarray(codes) != 0).mean(0)


def dead_fraction(codes: np.ndarray) -> float:
    """Fraction of features that never fire on the evaluation inputs."""
    return float((firing_frequency(codes) == 0).mean())


def dense_fraction(codes: np.ndarray, threshold: float = 0.1) -> float:
    """Fraction of features firing on more than ``threshold`` of the inputs (the peers'
    "dense features"; 10% is our choice, SAELens' dashboards use the same cut)."""
    return float((firing_frequency(codes) > threshold).mean())


def mmcs(true_features: np.ndarray, learned: np.ndarray, *, signed: bool = True) -> float:
    """Mean max cosine similarity: for every ground-truth feature (row of ``true_features``,
    ``(n_true, d)``), its best cosine with any learned atom (row of ``learned``), averaged.

    ``signed=True`` (an SAE's atoms: its codes are non-negative, so an atom pointing the
    opposite way cannot represent the feature): signed cosines, as the official
    ``mean_max_cosine_similarity`` (HoagyC/sparse_coding@69c5ae0, replicate_toy_models.py).
    ``signed=False`` (PCA, ICA, random directions: their sign is arbitrary): every direction
    scores by its better sign, ``|cos|``, which is what the official code computes for these
    bases, whose ``to_nneg_dict`` dictionaries hold both ``+w`` and ``-w``
    (autoencoders/ica.py ``NNegICAEncoder.get_learned_dict``)."""
    t = true_features / np.linalg.norm(true_features, axis=1, keepdims=True)
    atoms = learned / np.maximum(np.linalg.norm(learned, axis=1, keepdims=True), 1e-12)
    cos = t @ atoms.T
    return float((cos if signed else np.abs(cos)).max(1).mean())


def recovered_share(
    true_features: np.ndarray, learned: np.ndarray, threshold: float = 0.9, *, signed: bool = True
) -> float:
    """Share of the ground-truth features (rows of ``true_features``) whose best cosine with a
    learned atom exceeds ``threshold``: the features a dictionary "recovers". The official
    code counts features above an MMCS threshold of 0.9 (``standard_metrics.py``
    ``run_mmcs_with_larger(threshold=0.9)``, ``config.py`` ``InvestigateArgs.threshold``,
    HoagyC/sparse_coding@69c5ae0). ``signed`` as in :func:`mmcs`."""
    t = true_features / np.linalg.norm(true_features, axis=1, keepdims=True)
    atoms = learned / np.maximum(np.linalg.norm(learned, axis=1, keepdims=True), 1e-12)
    cos = t @ atoms.T
    return float(((cos if signed else np.abs(cos)).max(1) > threshold).mean())


def close_pairs(features: np.ndarray, threshold: float = 0.9) -> int:
    """Pairs of ground-truth features one direction could both recover at ``threshold``: a
    unit ``w`` with ``cos(w, f1), cos(w, f2) > t`` needs ``cos(f1, f2) > 2 t^2 - 1`` (0.62 at
    t = 0.9), by the triangle inequality on angles; ``|cos|`` counts the opposite signs of
    arbitrary-sign bases. With no such pair, a basis of ``d`` directions (``+w`` and ``-w``
    being one direction) recovers at most ``d`` features."""
    t = features / np.linalg.norm(features, axis=1, keepdims=True)
    cos = np.abs(t @ t.T)
    return int((np.triu(cos, 1) > 2 * threshold**2 - 1).sum())


def loss_recovered(ce_clean: float, ce_spliced: float, ce_ablated: float) -> float:
    """Share of the CE-loss increase from zero-ablating the layer that the SAE's reconstruction
    takes back: ``(ce_ablated - ce_spliced) / (ce_ablated - ce_clean)`` (1 = lossless)."""
    return float((ce_ablated - ce_spliced) / (ce_ablated - ce_clean))


# ---------------------------------------------------------------------- interpretability
def token_simulation_scores(
    acts: np.ndarray,
    tokens: np.ndarray,
    train: np.ndarray,
    *,
    top_k: int = 20,
    min_fires: int = 5,
    chunk: int = 256,
) -> tuple[np.ndarray, np.ndarray]:
    """An offline stand-in for the paper's explain-then-simulate score, per feature.

    The "explanation" of a feature is read off its training split only: the mean activation
    of each token id (a token lookup table, what a one-line explanation like "fires on ' the'"
    can encode). "Simulation" predicts each held-out activation from its token through that
    table; the score is the Pearson correlation between predicted and true activations on
    the held-out split (the paper's scoring rule, Sec. 3). A second score, concentration, is
    the share of the feature's ``top_k`` held-out activations whose token is the feature's
    single most common top token.

    ``acts`` ``(n_tokens, n_features)`` non-negative activations; ``tokens`` ``(n_tokens,)``
    ids; ``train`` a boolean mask. Features firing fewer than ``min_fires`` times in either
    split get NaN (they cannot be explained or scored; count them as not interpretable).
    Returns (simulation correlation, top-token concentration), each ``(n_features,)``.
    """
    tokens, train = np.asarray(tokens), np.asarray(train, bool)
    _, tok = np.unique(tokens, return_inverse=True)
    sim, conc = [], []
    for lo in range(0, acts.shape[1], chunk):  # feature chunks: memory stays bounded
        a = np.asarray(acts[:, lo : lo + chunk], np.float64)
        s, c = _score_chunk(a, tok, train, top_k, min_fires)
        sim.append(s)
        conc.append(c)
    return np.concatenate(sim), np.concatenate(conc)


def _score_chunk(acts, tok, train, top_k, min_fires):
    test = ~train
    n_vocab = int(tok.max()) + 1
    # the lookup table from the training split: mean activation per token id
    rows = tok[train]
    onehot = sparse.csr_matrix((np.ones(len(rows)), (rows, np.arange(len(rows)))),
                               shape=(n_vocab, len(rows)))  # fmt: skip
    sums = onehot @ acts[train]  # (n_vocab, n_features)
    counts = np.bincount(tok[train], minlength=n_vocab).astype(np.float64)
    seen = counts > 0
    table = np.where(seen[:, None], sums / np.maximum(counts, 1)[:, None], 0.0)
    table[~seen] = acts[train].mean(0)  # tokens never seen in training: the feature's mean
    pred, true = table[tok[test]], acts[test]
    pc, tc = pred - pred.mean(0), true - true.mean(0)
    denom = np.sqrt((pc**2).sum(0) * (tc**2).sum(0))
    corr = np.where(denom > 0, (pc * tc).sum(0) / np.where(denom > 0, denom, 1), 0.0)

    k = min(top_k, int(test.sum()))
    top = np.argpartition(-true, k - 1, axis=0)[:k]  # (k, n_features) held-out rows
    top_tok = tok[test][top]
    conc = np.array([np.bincount(col).max() / k for col in top_tok.T])

    fires = lambda m: (acts[m] > 0).sum(0)  # noqa: E731
    ok = (fires(train) >= min_fires) & (fires(test) >= min_fires)
    return np.where(ok, corr, np.nan), np.where(ok, conc, np.nan)


def explanation_scores(
    acts: np.ndarray,
    tokens: np.ndarray,
    train: np.ndarray,
    *,
    n_explain: int = 5,
    top_k: int = 20,
    min_fires: int = 5,
) -> np.ndarray:
    """The offline interpretability score the claim reads: explain-then-simulate with an
    explanation of a few tokens, per feature.

    "Explanation": the explainer sees the feature's ``top_k`` top activations on the
    ``train`` half (as the paper's explainer sees top-activating contexts) and names at most
    ``n_explain`` tokens, the most frequent among them (ties: the first seen in order of
    activation), each with the feature's mean activation on that token over the ``train``
    half. "Simulation": on the held-out half, the predicted activation of a token is its
    value in the explanation, 0 for a token the explanation does not name. The score is the
    Pearson correlation of prediction and truth over every held-out token (the paper's
    scoring rule, Sec. 3). A direction that is a function of many tokens (a random mixture of
    token features, what a dense direction is at an early layer) cannot be explained in a
    few tokens and scores low; a feature that fires on a few tokens scores high. Features
    firing fewer than ``min_fires`` times in either half get NaN, as in
    :func:`token_simulation_scores`.

    ``acts`` ``(n_tokens, n_features)`` non-negative activations; returns ``(n_features,)``.
    """
    tokens, train = np.asarray(tokens), np.asarray(train, bool)
    _, tok = np.unique(tokens, return_inverse=True)
    n_vocab = int(tok.max()) + 1
    rows_tr, rows_te = np.flatnonzero(train), np.flatnonzero(~train)
    counts = np.bincount(tok[rows_tr], minlength=n_vocab).astype(np.float64)
    k = min(top_k, len(rows_tr))
    out = np.full(acts.shape[1], np.nan)
    for f in range(acts.shape[1]):
        a = np.asarray(acts[:, f], np.float64)
        a_tr, a_te = a[rows_tr], a[rows_te]
        if (a_tr > 0).sum() < min_fires or (a_te > 0).sum() < min_fires:
            continue
        top = np.argsort(-a_tr, kind="stable")[:k]
        top = top[a_tr[top] > 0]
        ids, first, cnt = np.unique(tok[rows_tr][top], return_index=True, return_counts=True)
        named = ids[np.lexsort((first, -cnt))[:n_explain]]  # most frequent, then first seen
        table = np.zeros(n_vocab)
        table[named] = (
            np.bincount(tok[rows_tr], weights=a_tr, minlength=n_vocab)[named] / counts[named]
        )
        pred = table[tok[rows_te]]
        pc, tc = pred - pred.mean(), a_te - a_te.mean()
        denom = np.sqrt((pc**2).sum() * (tc**2).sum())
        out[f] = (pc * tc).sum() / denom if denom > 0 else 0.0
    return out


def planted_token_features(
    tokens: np.ndarray,
    d: int,
    n_features: int,
    seed: int = 0,
    max_tokens: int = 3,
    min_count: int = 10,
) -> tuple[np.ndarray, np.ndarray]:
    """A case with known answers for an interpretability score: ``n_features`` ground-truth
    features planted on a real token stream, each firing (magnitude U(0.5, 1)) on 1 to
    ``max_tokens`` token ids drawn among those the stream holds at least ``min_count``
    times (so that each feature can be scored), superposed as random unit directions
    in ``d`` dimensions (``n_features > d``: superposition, as in the toy model). Returns the
    true codes ``(n_tokens, n_features)`` (interpretable by construction: each is a few
    tokens) and the activations ``(n_tokens, d)`` = codes @ directions. A score fit to read
    interpretability ranks the true codes above random directions of the activations (each a
    mixture of many token features)."""
    rng = np.random.default_rng(seed)
    _, tok, count = np.unique(np.asarray(tokens), return_inverse=True, return_counts=True)
    common = np.flatnonzero(count >= min_count)
    codes = np.zeros((len(tok), n_features))
    for f in range(n_features):
        chosen = rng.choice(common, size=rng.integers(1, max_tokens + 1), replace=False)
        on = np.isin(tok, chosen)
        codes[on, f] = rng.uniform(0.5, 1.0, on.sum())
    directions = rng.standard_normal((n_features, d))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return codes, codes @ directions

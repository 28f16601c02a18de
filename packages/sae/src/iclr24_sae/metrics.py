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

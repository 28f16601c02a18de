"""Data: exact finite input spaces (sequences from generated Markov chains, targets whose
smoothness is known), the bundled real text (CPython's ``pydoc_data.topics``), and the loader
of a user's own corpus for the paper preset.

Sequences of length L over V tokens are enumerated in ``itertools.product`` order: input
index ``i`` is the base-V number whose first digit is position 0.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr24_common import MissingDataError


def enumerate_sequences(vocab_size: int, length: int) -> np.ndarray:
    """Every sequence of ``length`` tokens over ``vocab_size`` tokens. -> (V**L, L) int"""
    if vocab_size < 1 or length < 1:
        raise ValueError("vocab_size and length must be >= 1")
    grid = np.indices((vocab_size,) * length).reshape(length, -1).T
    return np.ascontiguousarray(grid)


@dataclass(frozen=True)
class MarkovChain:
    """A first-order Markov chain over V tokens: x_0 ~ initial, x_t | x_{t-1} ~ transition."""

    initial: np.ndarray
    """(V,) distribution of the first token."""
    transition: np.ndarray
    """(V, V) row-stochastic: transition[u, v] = P(x_t = v | x_{t-1} = u)."""

    def __post_init__(self):
        init, trans = np.asarray(self.initial, float), np.asarray(self.transition, float)
        if trans.ndim != 2 or trans.shape[0] != trans.shape[1] or init.shape != trans.shape[:1]:
            raise ValueError("initial must be (V,) and transition (V, V)")
        if (init < 0).any() or (trans < 0).any():
            raise ValueError("probabilities must be non-negative")
        if not np.isclose(init.sum(), 1) or not np.allclose(trans.sum(1), 1):
            raise ValueError("initial and every row of transition must sum to 1")

    @property
    def vocab_size(self) -> int:
        return len(self.initial)

    @classmethod
    def sticky(cls, vocab_size: int, favourite: int, stay: float) -> MarkovChain:
        """A chain that returns to token ``favourite`` with probability ``stay`` at every step
        (else a uniform token); uniform first token."""
        if not 0 <= stay < 1:
            raise ValueError("stay must be in [0, 1)")
        trans = np.full((vocab_size, vocab_size), (1 - stay) / vocab_size)
        trans[:, favourite] += stay
        return cls(np.full(vocab_size, 1 / vocab_size), trans)

    @classmethod
    def fit(cls, tokens: np.ndarray, vocab_size: int, smoothing: float = 0.5) -> MarkovChain:
        """Maximum-likelihood bigram chain of a token stream with add-``smoothing`` counts
        (so every transition has positive probability). The first token follows the
        unigram frequencies."""
        tokens = np.asarray(tokens)
        uni = np.bincount(tokens, minlength=vocab_size) + smoothing
        pairs = np.zeros((vocab_size, vocab_size))
        np.add.at(pairs, (tokens[:-1], tokens[1:]), 1.0)
        pairs += smoothing
        return cls(uni / uni.sum(), pairs / pairs.sum(1, keepdims=True))

    def marginals(self, length: int) -> np.ndarray:
        """(L, V): P(x_j = v) = (initial P^j)[v]."""
        out = np.empty((length, self.vocab_size))
        out[0] = self.initial
        for j in range(1, length):
            out[j] = out[j - 1] @ self.transition
        return out

    def transition_powers(self, max_gap: int) -> np.ndarray:
        """(max_gap + 1, V, V): [g] = P^g, the g-step transition (P^0 = I)."""
        out = np.empty((max_gap + 1, self.vocab_size, self.vocab_size))
        out[0] = np.eye(self.vocab_size)
        for g in range(1, max_gap + 1):
            out[g] = out[g - 1] @ self.transition
        return out

    def log_prob(self, seqs: np.ndarray) -> np.ndarray:
        """log P(x) of sequences (n, L) -> (n,)."""
        seqs = np.atleast_2d(seqs)
        steps = np.log(self.transition[seqs[:, :-1], seqs[:, 1:]]).sum(1)
        return np.log(self.initial[seqs[:, 0]]) + steps

    def sample(self, n: int, length: int, rng: np.random.Generator) -> np.ndarray:
        """n sequences of ``length`` tokens. -> (n, L) int"""
        cum_init, cum_trans = np.cumsum(self.initial), np.cumsum(self.transition, axis=1)
        out = np.empty((n, length), dtype=np.int64)
        out[:, 0] = np.minimum(np.searchsorted(cum_init, rng.random(n)), self.vocab_size - 1)
        for t in range(1, length):
            u = rng.random(n)[:, None]
            nxt = (u > cum_trans[out[:, t - 1]]).sum(1)
            out[:, t] = np.minimum(nxt, self.vocab_size - 1)
        return out


@dataclass(frozen=True)
class FiniteSpace:
    """An exact input space: every sequence of V**L, its probability and the latent topic
    posterior under a mixture of Markov chains."""

    sequences: np.ndarray
    """(n_x, L) every input, in enumeration order."""
    p_x: np.ndarray
    """(n_x,) P_X, strictly positive."""
    topic_posterior: np.ndarray
    """(n_x, n_topics) P(topic | x)."""
    vocab_size: int

    @property
    def length(self) -> int:
        return self.sequences.shape[1]


def topic_mixture(vocab_size: int, length: int, stay: float, n_topics: int = 2) -> FiniteSpace:
    """Inputs from an equal mixture of ``n_topics`` sticky Markov chains (topic t returns to
    token t with probability ``stay``): a latent class that every token carries a little
    evidence of, the structure a masked-token augmentation can reveal or destroy."""
    if not 1 <= n_topics <= vocab_size:
        raise ValueError("n_topics must be between 1 and vocab_size")
    seqs = enumerate_sequences(vocab_size, length)
    chains = [MarkovChain.sticky(vocab_size, t, stay) for t in range(n_topics)]
    joint = np.stack([np.exp(c.log_prob(seqs)) for c in chains], axis=1) / n_topics  # (n_x, T)
    p_x = joint.sum(1)
    return FiniteSpace(seqs, p_x, joint / p_x[:, None], vocab_size)


def normalize(f: np.ndarray, p_x: np.ndarray) -> np.ndarray:
    """f - E f, scaled to unit variance under P_X."""
    f = f - p_x @ f
    return f / np.sqrt(p_x @ f**2)


def topic_target(space: FiniteSpace, topic: int = 1) -> np.ndarray:
    """The downstream target: the posterior of one topic, centred and unit-variance. (n_x,)"""
    return normalize(space.topic_posterior[:, topic], space.p_x)


def random_target(space: FiniteSpace, degree: int, rng: np.random.Generator) -> np.ndarray:
    """A random target of known smoothness: a sum, over every set S of at most ``degree``
    positions, of a random table of the tokens at S (interactions of order <= degree),
    centred and unit-variance under P_X. (n_x,)"""
    if not 1 <= degree <= space.length:
        raise ValueError("degree must be between 1 and the sequence length")
    f = np.zeros(len(space.p_x))
    for k in range(1, degree + 1):
        for positions in itertools.combinations(range(space.length), k):
            table = rng.standard_normal((space.vocab_size,) * k)
            f += table[tuple(space.sequences[:, j] for j in positions)]
    return normalize(f, space.p_x)


# ------------------------------------------------------------------ real text
@dataclass(frozen=True)
class Corpus:
    """A character-level token stream and its vocabulary."""

    tokens: np.ndarray
    """(N,) int token ids."""
    vocab: tuple[str, ...]
    """Characters of the ids (the last one, '\\x00', stands for every rare character)."""
    source: str

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def windows(self, length: int, n: int, rng: np.random.Generator) -> np.ndarray:
        """n windows of ``length`` consecutive tokens at uniformly random offsets. (n, L)"""
        if length > len(self.tokens):
            raise ValueError(f"windows of {length} tokens do not fit in {len(self.tokens)}")
        start = rng.integers(0, len(self.tokens) - length + 1, size=n)
        return self.tokens[start[:, None] + np.arange(length)]


def tokenize_chars(text: str, source: str, min_count: int = 20) -> Corpus:
    """Character-level tokens; whitespace runs become one space and characters seen fewer
    than ``min_count`` times share one rare-character token."""
    text = " ".join(text.split())
    counts = Counter(text)
    vocab = sorted(c for c, k in counts.items() if k >= min_count) + ["\x00"]
    index = {c: i for i, c in enumerate(vocab)}
    rare = len(vocab) - 1
    tokens = np.fromiter((index.get(c, rare) for c in text), dtype=np.int64, count=len(text))
    return Corpus(tokens, tuple(vocab), source)


def load_pydoc_topics() -> Corpus:
    """CPython's bundled ``pydoc_data.topics`` (the help texts of the language reference,
    ~0.5 M characters), as a character-level corpus."""
    from pydoc_data.topics import topics

    text = "\n".join(topics[k] for k in sorted(topics))
    return tokenize_chars(text, "pydoc_data.topics")


def load_corpus(root: str | Path) -> Corpus:
    """The paper preset's corpus: ``<root>/aug-rkhs/corpus.txt``, plain UTF-8 text."""
    path = Path(root) / "aug-rkhs" / "corpus.txt"
    if not path.exists():
        raise MissingDataError(
            "the pretraining corpus (the paper estimates kappa on wikipedia-simple)",
            [path],
            "export the text of a corpus (e.g. the Simple English Wikipedia dump, "
            "https://dumps.wikimedia.org/simplewiki/) as plain UTF-8 text into that file",
        )
    return tokenize_chars(path.read_text(encoding="utf-8", errors="replace"), str(path))

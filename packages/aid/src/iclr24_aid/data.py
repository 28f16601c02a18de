"""The systematic associative recall (SAR) task, generated as the official generator does
(``SARtask/task/systematic_associative_recall.py``), with synthetic tokens for its English words.

Four word groups of ``K`` words: keys X1, X2 and values Y1, Y2 (official: 250 each, the 1000
most common English words). Training pairs: every X1 key with Y2 values, the first
``ratio * K`` X1 keys also with Y1 values, every X2 key with Y1 values. The test asks for the
combinations never seen in training, X2 x Y2, all of them exactly once: K test sequences, each
storing all K X2 keys (longer than the N pairs of a training sequence) and querying each.

A sequence of N pairs has 2N + 2 steps:

    step 0            input flag          key PAD    value PAD
    steps 1..N        pairs               key x_i    value y_i
    step N + 1        output flag         key PAD    value PAD
    steps N+2..2N+1   queries             key x_q    value PAD     target y_q

Token ids: 0 is PAD, then X1, X2, Y1, Y2 in that order (the official dictionary's order).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from iclr24_common import MissingDataError


@dataclass(frozen=True)
class Batch:
    keys: torch.Tensor  # (B, 2N + 2) token ids
    values: torch.Tensor  # (B, 2N + 2) token ids, PAD on the query steps
    flags: torch.Tensor  # (B, 2N + 2, 2) input / output flag
    targets: torch.Tensor  # (B, N + 1): the values of the queried keys; 0 (PAD) is ignored

    def __len__(self) -> int:
        return self.keys.shape[0]

    def to(self, device) -> Batch:
        """The same batch on ``device`` (the model's)."""
        return Batch(*(t.to(device) for t in (self.keys, self.values, self.flags, self.targets)))


def _layout(keys: np.ndarray, values: np.ndarray, order: np.ndarray) -> Batch:
    """Sequences from stored pairs keys, values: (B, N) and query order: (B, N)."""
    B, N = keys.shape
    k = np.zeros((B, 2 * N + 2), np.int64)
    v = np.zeros_like(k)
    k[:, 1 : N + 1], v[:, 1 : N + 1] = keys, values
    k[:, N + 2 :] = np.take_along_axis(keys, order, axis=1)
    flags = np.zeros((B, 2 * N + 2, 2), np.float32)
    flags[:, 0, 0] = flags[:, N + 1, 1] = 1.0
    targets = np.zeros((B, N + 1), np.int64)
    targets[:, 1:] = np.take_along_axis(values, order, axis=1)
    return Batch(*(torch.from_numpy(a) for a in (k, v, flags, targets)))


class SAR:
    """The SAR task with ``words`` tokens per group (official 250), ``ratio`` p of X1 keys also
    paired with Y1 values. ``seed`` fixes the test pairings (the official pickle's shuffles)."""

    def __init__(self, words: int, ratio: float = 0.0, seed: int = 0):
        if words < 2:
            raise ValueError(f"words must be >= 2, got {words}")
        if not 0.0 <= ratio <= 1.0:
            raise ValueError(f"ratio must be in [0, 1], got {ratio}")
        K = self.words = words
        self.ratio = ratio
        self.X1, self.X2, self.Y1, self.Y2 = (np.arange(1, K + 1) + g * K for g in range(4))
        self.vocab_size = 4 * K + 1
        split = int(K * ratio)  # official: int(len(X1_list) * ratio)
        # allowed values per training key, padded: row i lists the values key train_keys[i] takes
        self.train_keys = np.concatenate([self.X1, self.X2])
        both = np.concatenate([self.Y1, self.Y2])
        self._allowed = np.zeros((2 * K, 2 * K), np.int64)
        self._count = np.zeros(2 * K, np.int64)
        for i in range(2 * K):
            vals = (both if i < split else self.Y2) if i < K else self.Y1
            self._allowed[i, : len(vals)], self._count[i] = vals, len(vals)
        rng = np.random.default_rng([seed, 7])
        self._test_perm = np.stack([rng.permutation(self.Y2) for _ in self.X2])  # (K, K)

    def train_pairs(self) -> set[tuple[int, int]]:
        """Every (key, value) combination a training sequence can hold."""
        return {
            (int(k), int(v))
            for k, row, n in zip(self.train_keys, self._allowed, self._count)
            for v in row[:n]
        }

    def sample(self, batch_size: int, pairs: int, rng: np.random.Generator) -> Batch:
        """Training-distribution sequences: ``pairs`` distinct training keys, each with one of
        its allowed values, queried in random order (official ``__next__``)."""
        if not 1 <= pairs <= len(self.train_keys):
            raise ValueError(f"pairs must be in [1, {len(self.train_keys)}], got {pairs}")
        idx = np.argsort(rng.random((batch_size, len(self.train_keys))), axis=1)[:, :pairs]
        pick = (rng.random(idx.shape) * self._count[idx]).astype(np.int64)
        values = self._allowed[idx, pick]
        order = np.argsort(rng.random((batch_size, pairs)), axis=1)
        return _layout(self.train_keys[idx], values, order)

    def test(self) -> Batch:
        """All X2 x Y2 combinations once (official ``get_test_samples``): K sequences of all K
        X2 keys in a fixed order, sequence b giving key i its b-th value, queried in order."""
        K = self.words
        keys = np.broadcast_to(self.X2, (K, K)).copy()
        values = self._test_perm.T.copy()  # (sequence b, key i) -> perm[i, b]
        return _layout(keys, values, np.broadcast_to(np.arange(K), (K, K)).copy())


def load_words(root: str | Path) -> list[str]:
    """The paper's vocabulary, ``<root>/aid/words.txt``: 1000 words, one a line (the official
    generator's 1000 most common English words). The task only needs distinct tokens, so the
    words are labels for the 4 x 250 token ids; the paper preset checks they are there."""
    path = Path(root) / "aid" / "words.txt"
    if not path.exists():
        raise MissingDataError(
            "the SAR vocabulary (1000 most common English words)",
            [path],
            "copy the word list of SARtask/task/systematic_associative_recall.py "
            "(github.com/taewonpark/AID), one word a line; or run --preset default",
        )
    words = [w.strip() for w in path.read_text().splitlines() if w.strip()]
    if len(words) != 1000 or len(set(words)) != 1000:
        raise MissingDataError(
            f"1000 distinct words in {path} (found {len(set(words))})", [path], "one word a line"
        )
    return words

"""Data: bytes of English prose that ship with CPython (default), and C4 with the T5 tokenizer
(the paper's data, read from ``<data-dir>/relora/`` when the user has it).

Every batch is a pure function of (seed, step), so all methods see the same batch stream,
every DDP rank knows every other rank's batch, and a resumed run continues bit-identically.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from iclr24_common import MissingDataError

BYTE_VOCAB = 256


def pydoc_bytes() -> np.ndarray:
    """The Python reference manual's topic texts (``pydoc_data.topics``, ~466k bytes of English
    prose and code), in sorted-key order, as uint8 bytes."""
    from pydoc_data.topics import topics

    text = "\n\n".join(topics[k] for k in sorted(topics))
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8).copy()


@dataclass
class TokenStream:
    """A token array split into train (the first ``1 - val_fraction - eval_fraction``),
    validation (the next ``val_fraction``: what the tuning grid is chosen on) and eval (the
    last ``eval_fraction``: the held-out test set the claims read)."""

    tokens: np.ndarray
    vocab_size: int
    eval_fraction: float = 0.1
    val_fraction: float = 0.05

    def __post_init__(self):
        n = len(self.tokens)
        cut = int(n * (1 - self.eval_fraction))
        val_cut = int(n * (1 - self.eval_fraction - self.val_fraction))
        self.train = torch.from_numpy(self.tokens[:val_cut].astype(np.int64))
        self.val = torch.from_numpy(self.tokens[val_cut:cut].astype(np.int64))
        self.eval = torch.from_numpy(self.tokens[cut:].astype(np.int64))

    def batch(self, seed: int, step: int, batch_size: int, seq_len: int) -> torch.Tensor:
        """Training batch ``step`` of run ``seed``: (batch_size, seq_len) random windows."""
        g = torch.Generator().manual_seed(int(seed) * 1_000_003 + int(step))
        return _windows(self.train, g, batch_size, seq_len)

    def eval_batches(self, n: int, batch_size: int, seq_len: int) -> list[torch.Tensor]:
        """The fixed evaluation batches (the same for every seed and method)."""
        g = torch.Generator().manual_seed(12345)
        return [_windows(self.eval, g, batch_size, seq_len) for _ in range(n)]

    def val_batches(self, n: int, batch_size: int, seq_len: int) -> list[torch.Tensor]:
        """The fixed validation batches (tuning only; disjoint from train and eval)."""
        g = torch.Generator().manual_seed(54321)
        return [_windows(self.val, g, batch_size, seq_len) for _ in range(n)]


def _windows(data: torch.Tensor, g: torch.Generator, batch_size: int, seq_len: int):
    if len(data) <= seq_len:
        raise ValueError(f"seq_len {seq_len} is longer than the data ({len(data)} tokens)")
    starts = torch.randint(0, len(data) - seq_len, (batch_size,), generator=g)
    return data[starts[:, None] + torch.arange(seq_len)]  # (batch, seq)


def byte_stream() -> TokenStream:
    return TokenStream(pydoc_bytes(), BYTE_VOCAB)


# ---------------------------------------------------------------- the paper's data

C4_HOW = (
    "the official runs read C4 (allenai/c4, 'en') through HF datasets and tokenise it with the "
    "t5-base tokenizer; put C4 json.gz shards under <data-dir>/relora/c4/ (e.g. "
    "c4-train.00000-of-01024.json.gz from huggingface.co/datasets/allenai/c4/tree/main/en) and "
    "the tokenizer under <data-dir>/relora/t5-base/ (tokenizer.save_pretrained), and install "
    "the extra: pip install 'iclr24-relora[paper]'"
)


def c4_stream(root: str | Path, max_docs: int | None = None) -> TokenStream:
    """C4 shards under ``<root>/relora/c4/*.json.gz`` tokenised with the T5 tokenizer from
    ``<root>/relora/t5-base/`` (documents joined by the tokenizer's EOS)."""
    base = Path(root) / "relora"
    shards = sorted((base / "c4").glob("*.json.gz"))
    tok_dir = base / "t5-base"
    missing = ([] if shards else [base / "c4" / "*.json.gz"]) + (
        [] if (tok_dir / "tokenizer_config.json").exists() else [tok_dir / "tokenizer_config.json"]
    )
    if missing:
        raise MissingDataError("C4 (en) and the t5-base tokenizer", missing, C4_HOW)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tok_dir)
    ids: list[int] = []
    for shard in shards:
        with gzip.open(shard, "rt", encoding="utf-8") as f:
            for i, line in enumerate(f):
                if max_docs is not None and i >= max_docs:
                    break
                ids.extend(tokenizer(json.loads(line)["text"])["input_ids"])
    return TokenStream(np.asarray(ids, dtype=np.int64), len(tokenizer))

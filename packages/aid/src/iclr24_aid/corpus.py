"""Language-modelling corpora: WikiText-103 from local files (the paper's), and a character-level
corpus made of the help texts that ship with CPython (``pydoc_data.topics``) for CPU demos."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from iclr24_common import MissingDataError

WT103_FILES = {  # Salesforce's names, and Transformer-XL getdata.sh's
    "train": ("wiki.train.tokens", "train.txt"),
    "valid": ("wiki.valid.tokens", "valid.txt"),
    "test": ("wiki.test.tokens", "test.txt"),
}
WT103_SOURCE = (
    "WikiText-103 (Merity et al., 2016), word level: wikitext-103-v1.zip from "
    "https://s3.amazonaws.com/research.metamind.io/wikitext/ (what the official getdata.sh "
    "fetches), or the Hugging Face dataset Salesforce/wikitext (wikitext-103-v1) written one "
    "line per row; put wiki.{train,valid,test}.tokens in the folder above"
)


@dataclass(frozen=True)
class Corpus:
    """Token ids of each split (1-D LongTensors) and the vocabulary."""

    vocab: list[str]
    train: torch.Tensor
    valid: torch.Tensor
    test: torch.Tensor


def pydoc_corpus() -> Corpus:
    """Characters of CPython's help topics (``pydoc_data.topics``, ~465k characters): topics in
    sorted order, the first 90 % for training, the next 5 % validation, the last 5 % test."""
    from pydoc_data.topics import topics

    text = "\n".join(topics[k] for k in sorted(topics))
    vocab = sorted(set(text))
    index = {c: i for i, c in enumerate(vocab)}
    ids = torch.tensor([index[c] for c in text], dtype=torch.long)
    a, b = int(0.9 * len(ids)), int(0.95 * len(ids))
    return Corpus(vocab, ids[:a], ids[a:b], ids[b:])


def wt103_dir(root: str | Path) -> Path:
    return Path(root) / "aid" / "wikitext-103"


def wt103_paths(root: str | Path) -> dict[str, Path]:
    """The three split files under ``<root>/aid/wikitext-103``; MissingDataError if absent."""
    folder, found, missing = wt103_dir(root), {}, []
    for split, names in WT103_FILES.items():
        hit = next((folder / n for n in names if (folder / n).exists()), None)
        if hit is None:
            missing.append(folder / names[0])
        found[split] = hit
    if missing:
        raise MissingDataError("WikiText-103 (the paper's language-modelling data)", missing,
                               WT103_SOURCE)  # fmt: skip
    return found


def _words(path: Path):
    """Transformer-XL's reading: whitespace tokens of each line, then <eos>."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            yield from line.split()
            yield "<eos>"


def load_wikitext103(root: str | Path) -> Corpus:
    """Word-level WikiText-103, vocabulary from the training split in order of frequency (as
    Transformer-XL builds it: ~267k words, <unk> already in the text)."""
    paths = wt103_paths(root)
    counts = Counter(_words(paths["train"]))
    vocab = [w for w, _ in counts.most_common()]
    index = {w: i for i, w in enumerate(vocab)}
    unk = index.get("<unk>", 0)
    splits = {  # streamed into an array: no Python list of WikiText-103's 103M ids
        s: torch.from_numpy(np.fromiter((index.get(w, unk) for w in _words(p)), np.int64))
        for s, p in paths.items()
    }
    return Corpus(vocab, splits["train"], splits["valid"], splits["test"])


def batchify(ids: torch.Tensor, batch_size: int) -> torch.Tensor:
    """(N,) -> (batch_size, N // batch_size): contiguous streams, one per row."""
    n = len(ids) // batch_size
    return ids[: n * batch_size].view(batch_size, n)

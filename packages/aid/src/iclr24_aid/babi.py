"""bAbI and systematic bAbI (sys-bAbI) from local files, read as the official AID code reads
them (``bAbItask/AID_with_TPRRNN/babi/data_preprocess/preprocess.py``, ``replace.py``).

The data is bAbI v1.2, ``en-valid-10k`` (10k training stories per task with a validation
split), under ``<data-dir>/aid/babi/en-valid-10k/qa<N>_{train,valid,test}.txt``. A file has
numbered lines; a line with tabs is a question ``text \\t answer \\t supporting ids``, the other
lines are story sentences; the numbering restarts at 1 with each story. Each question becomes
one sample holding the story sentences before it (the last 70).

sys-bAbI is the same training data with test names the model never saw in those roles: the
official ``replace.py`` renames daniel, john, sandra to bill, fred, julie in the test stories of
tasks 1, 2, 3, 6, 7, 8, 9, 11, 12, 13, and the reverse in tasks 5, 10, 14.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from iclr24_common import MissingDataError

SPLITS = ("train", "valid", "test")
SYS_RENAME = {"daniel": "bill", "john": "fred", "sandra": "julie"}  # official replace.py
SYS_FORWARD = (1, 2, 3, 6, 7, 8, 9, 11, 12, 13)
SYS_REVERSE = (5, 10, 14)
SOURCE = (
    "bAbI v1.2 (Weston et al.): http://www.thespermwhale.com/jaseweston/babi/"
    "tasks_1-20_v1-2.tar.gz (what the official download.py fetches); extract its "
    "en-valid-10k folder to the path above"
)
_SPLIT_RE = re.compile(r"(\W+)")


def tokenize(sentence: str) -> list[str]:
    """Lower-cased words and punctuation (official ``tokenize``)."""
    return [t.strip().lower() for t in _SPLIT_RE.split(sentence) if t.strip()]


def parse_stories(path: str | Path) -> list[tuple[list[list[str]], list[str], str]]:
    """(story sentences, question, answer) for every question of a bAbI file."""
    samples, story = [], []
    for line in Path(path).read_text().splitlines():
        if not line.strip():
            continue
        nid, text = line.strip().split(" ", 1)
        if int(nid) == 1:
            story = []
        if "\t" in text:
            question, answer, _ = text.split("\t")
            samples.append(([s for s in story if s], tokenize(question), answer.lower()))
            story.append([])  # keeps the line numbering; dropped from the story above
        else:
            story.append(tokenize(text))
    return samples


def rename(samples, mapping: dict[str, str]):
    """The samples with every word renamed by ``mapping`` (sys-bAbI's test names)."""
    f = lambda words: [mapping.get(w, w) for w in words]  # noqa: E731
    return [([f(s) for s in story], f(q), mapping.get(a, a)) for story, q, a in samples]


@dataclass(frozen=True)
class BabiSplit:
    """One task's split: story (n, S, W), query (n, W), answer (n,) word ids (0 = PAD)."""

    story: torch.Tensor
    query: torch.Tensor
    answer: torch.Tensor

    def __len__(self) -> int:
        return len(self.answer)


@dataclass(frozen=True)
class Babi:
    """Every task's splits, one shared vocabulary (index 0 is PAD)."""

    vocab: list[str]
    tasks: dict[int, dict[str, BabiSplit]]

    @property
    def max_words(self) -> int:
        return max(s.story.shape[2] for t in self.tasks.values() for s in t.values())


def _vectorize(samples, word2id, story_max, sentence_max) -> BabiSplit:
    n = len(samples)
    S = np.zeros((n, story_max, sentence_max), np.int64)
    Q = np.zeros((n, sentence_max), np.int64)
    A = np.zeros(n, np.int64)
    for i, (story, q, a) in enumerate(samples):
        for j, sentence in enumerate(story[-story_max:]):  # official: the last 70 sentences
            S[i, j, : len(sentence)] = [word2id[w] for w in sentence]
        Q[i, : len(q)] = [word2id[w] for w in q]
        A[i] = word2id[a]
    return BabiSplit(*(torch.from_numpy(x) for x in (S, Q, A)))


def babi_dir(root: str | Path) -> Path:
    return Path(root) / "aid" / "babi" / "en-valid-10k"


def load_babi(root: str | Path, tasks=tuple(range(1, 21)), systematic: bool = True) -> Babi:
    """Tasks ``tasks`` of bAbI en-valid-10k under ``<root>/aid/babi/en-valid-10k``; with
    ``systematic`` the test splits carry sys-bAbI's renamed entities."""
    folder = babi_dir(root)
    paths = {(t, s): folder / f"qa{t}_{s}.txt" for t in tasks for s in SPLITS}
    missing = [folder] if not folder.is_dir() else [p for p in paths.values() if not p.exists()]
    if missing:
        raise MissingDataError("bAbI en-valid-10k (sys-bAbI's training data)", missing, SOURCE)
    raw = {key: parse_stories(p) for key, p in paths.items()}
    for t in tasks:
        if systematic and (t in SYS_FORWARD or t in SYS_REVERSE):
            mapping = SYS_RENAME if t in SYS_FORWARD else {v: k for k, v in SYS_RENAME.items()}
            raw[t, "test"] = rename(raw[t, "test"], mapping)
    words = sorted(  # deterministic order (the official one follows Python's set order)
        {w for samples in raw.values() for st, q, a in samples for w in [a, *q, *sum(st, [])]}
    )
    word2id = {w: i + 1 for i, w in enumerate(words)}
    out = {}
    for t in tasks:
        samples = [raw[t, s] for s in SPLITS]
        sentence_max = max(len(x) for ss in samples for st, q, _ in ss for x in [q, *st])
        # official: 70 sentences (its 130 for task 3 compares the task id string with 3: never)
        story_max = min(max(len(st) for ss in samples for st, _, _ in ss), 70)
        out[t] = {
            s: _vectorize(ss, word2id, story_max, sentence_max) for s, ss in zip(SPLITS, samples)
        }
    return Babi(["<pad>", *words], out)

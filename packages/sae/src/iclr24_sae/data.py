"""Data: the toy model of superposition (generated), text that ships with CPython mixed with
generated sentences with names (for the offline LM), and the paper's model and corpus (paper
preset, read from ``--data-dir``)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path

import torch

from iclr24_common import MissingDataError


# ---------------------------------------------------------------------- toy superposition
@dataclass
class ToySuperposition:
    """The toy data of the authors' interim report (official ``replicate_toy_models.py``,
    ``generate_rand_dataset``): ``n_features`` random unit-norm ground-truth directions in
    ``d`` dimensions; feature ``i`` is active with probability ``p_i = decay**i * n_active /
    n_features`` (so ~``n_active`` per sample before the decay), with a U(0, 1) magnitude;
    a sample is the sum of its active features. Official: d = 256, 512 features, 5 active,
    decay 0.99; the issue's CPU scale is d = 64 and 128 features."""

    d: int = 64
    n_features: int = 128
    n_active: float = 5.0
    decay: float = 0.99
    noise: float = 0.0
    """Std of Gaussian noise added to every sample (official noise_level: 0)."""
    seed: int = 0

    def __post_init__(self):
        g = torch.Generator().manual_seed(self.seed)
        self.features = torch.nn.functional.normalize(
            torch.randn(self.n_features, self.d, generator=g), dim=1
        )  # (n_features, d)
        self.probs = self.decay ** torch.arange(self.n_features) * self.n_active / self.n_features

    def sample_codes(self, n: int, gen: torch.Generator) -> torch.Tensor:
        """Ground-truth codes ``(n, n_features)``."""
        on = torch.rand(n, self.n_features, generator=gen) <= self.probs
        return torch.rand(n, self.n_features, generator=gen) * on

    def sample(self, n: int, gen: torch.Generator) -> torch.Tensor:
        """Samples ``(n, d)``."""
        x = self.sample_codes(n, gen) @ self.features
        return x + self.noise * torch.randn(x.shape, generator=gen) if self.noise else x


# ---------------------------------------------------------------------- text
def cpython_text(max_chars: int | None = None, docstrings: bool = True) -> list[str]:
    """Documents of English technical prose that ship with every CPython: the ``pydoc_data``
    help topics (~465k characters) and, optionally, the docstrings of a fixed list of
    standard-library modules. Deterministic order; cut to ``max_chars`` in all."""
    import pydoc_data.topics as topics

    docs = [topics.topics[k] for k in sorted(topics.topics)]
    if docstrings:
        import importlib

        for name in DOC_MODULES:
            try:
                mod = importlib.import_module(name)
            except ImportError:
                continue
            docs += [inspect.getdoc(obj) or "" for _, obj in sorted(vars(mod).items())
                     if inspect.isfunction(obj) or inspect.isclass(obj)]  # fmt: skip
    docs = [d.strip() for d in docs if len(d.strip()) > 40]
    if max_chars is not None:
        out, total = [], 0
        for d in docs:
            if total >= max_chars:
                break
            out.append(d[: max_chars - total])
            total += len(out[-1])
        docs = out
    return docs


DOC_MODULES = ("collections", "json", "pathlib", "argparse", "functools", "itertools",
               "statistics", "fractions", "textwrap", "string")  # fmt: skip


# Sentences with people's names besides the IOI templates (patching.TEMPLATES): simple
# narrative English in which first names play subject and object
NAME_SENTENCES = (
    "{A} wrote a long letter to{B}.",
    "{A} met{B} at the station in the morning.",
    "{A} asked{B} for the keys to the car.",
    "Later that day,{A} told{B} about the trip.",
    "{A} and{B} walked home together after the game.",
    "{A} thanked{B} for the help with the move.",
    "The teacher asked{A} to sit next to{B}.",
    "{A} called{B} to say that the train was late.",
)


def name_text(n_docs: int, seed: int = 0, sentences: int = 6) -> list[str]:
    """``n_docs`` paragraphs of ``sentences`` sentences each in which people's names play
    subject, indirect object and object: the IOI templates of :mod:`.patching` completed with
    their answer (the indirect object), mixed with :data:`NAME_SENTENCES`, names drawn from
    the IOI names with ``seed`` (text like the IOI prompts, which CPython's documentation
    lacks)."""
    import random

    from .patching import NAMES, TEMPLATES

    rng = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        out = []
        for _ in range(sentences):
            a, b = rng.sample(NAMES, 2)
            if rng.random() < 0.5:
                t = rng.choice(TEMPLATES)
                out.append(t.format(A=" " + a, B=" " + b, S=" " + b) + " " + a + ".")
            else:
                out.append(rng.choice(NAME_SENTENCES).format(A=a, B=" " + b))
        docs.append(" ".join(s.strip() for s in out))
    return docs


def mixed_text(docs: list[str], names: list[str], frac: float) -> list[str]:
    """``docs`` with the paragraphs ``names`` interleaved so that about ``frac`` of the
    characters so far are from ``names`` at every point (so a contiguous train / held-out
    split sees both kinds of text)."""
    out, total, named, it = [], 0, 0, iter(names)
    for doc in docs:
        while frac > 0 and named < frac * (total + 1):
            nxt = next(it, None)
            if nxt is None:
                break
            out.append(nxt)
            total, named = total + len(nxt), named + len(nxt)
        out.append(doc)
        total += len(doc)
    return out


# ---------------------------------------------------------------------- the paper's data
def paper_files(root: str | Path) -> tuple[Path, Path]:
    """The paper preset's inputs under ``<root>/sae/``: a Hugging Face folder of
    Pythia-70M-deduped and a folder of OpenWebText ``.txt`` files."""
    base = Path(root) / "sae"
    model, text = base / "pythia-70m-deduped", base / "openwebtext"
    if not (model / "config.json").exists() or not any(text.glob("*.txt")):
        raise MissingDataError(
            "Pythia-70M-deduped and OpenWebText text",
            [model / "config.json", text / "*.txt"],
            "save EleutherAI/pythia-70m-deduped with transformers' save_pretrained to the "
            "first path and OpenWebText documents as .txt files into the second",
        )
    return model, text

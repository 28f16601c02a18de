"""A simulated position-biased LLM, for the voting and stopping logic at any scale.

It reads a batch prompt (any :class:`Task`), looks each point up in the ground truth, and
answers the point at position p (0-based) wrongly with probability
``e(p) = min(0.5, base + slope * p)``: the paper's two observations (accuracy drops with the
batch size and depends on the position) in their simplest form. It says "(confident)" with
probability ``conf_right`` after a right label and ``conf_wrong`` after a wrong one, and
breaks the format now and then (a label line dropped, a line repeated, a number outside the
batch), which the number-aligned parser must absorb. Draws come from one seeded
``random.Random`` in call order, so a run is reproducible.

With independent errors, the accuracy of a K-vote majority is a Poisson-binomial tail
(:func:`predicted_accuracy`): what the BPE claim is measured against.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from iclr24_llm import ScriptedBackend

from .batchprompt import CONFIDENT, NOT_CONFIDENT, Task


@dataclass(frozen=True)
class PositionBias:
    base: float = 0.05
    """Error rate at the first position (and of SinglePrompt)."""
    slope: float = 0.02
    """Added error per position (position 15: 0.35)."""
    conf_right: float = 0.85
    """P("confident") after a right label."""
    conf_wrong: float = 0.25
    """P("confident") after a wrong label."""
    drop: float = 0.02
    """P(a label line is left out)."""
    repeat: float = 0.01
    """P(a label line is written twice, the second time with a random label)."""
    extra: float = 0.02
    """P(an extra line with a number outside the batch, per answer)."""

    def error(self, position: int) -> float:
        return min(0.5, self.base + self.slope * position)


def simulated_llm(task: Task, truth: dict[str, int], bias: PositionBias, seed: int = 0,
                  key: str = "sentence") -> ScriptedBackend:  # fmt: skip
    """A :class:`ScriptedBackend` answering batch prompts of ``task`` whose points'
    ``key`` field is in ``truth`` (text -> class id)."""
    rng = random.Random(seed)
    head = re.escape(task.template.split("[INPUT_INDEX]")[0])
    tail = task.template.split("[INPUT_INDEX]")[1]
    field = re.escape(tail).replace(re.escape(f"[{key.upper()}]"), r"(?P<x>[^\n]*)")
    # the other fields of a two-field task (BoolQ's question, RTE's hypothesis): any line
    field = re.sub(r"\\\[[A-Z0-9_]+\\\]", lambda _: r"[^\n]*", field)
    pattern = re.compile(rf"^{head}(?P<i>\d+){field}$", re.M)

    def answer(prompt) -> str:
        text = prompt if isinstance(prompt, str) else prompt[-1]["content"]
        lines = []
        for m in pattern.finditer(text):
            i, y = int(m.group("i")), truth[m.group("x").strip()]
            wrong = rng.random() < bias.error(i)
            label = (1 - y) if wrong else y  # a numeric task (GSM8K): another number
            sure = rng.random() < (bias.conf_wrong if wrong else bias.conf_right)
            line = task.label_line(i, label, CONFIDENT if sure else NOT_CONFIDENT)
            if rng.random() < bias.drop:
                continue
            lines.append(line)
            if rng.random() < bias.repeat:
                lines.append(task.label_line(i, rng.randrange(2), CONFIDENT))
        if lines and rng.random() < bias.extra:
            lines.append(task.label_line(len(lines) + 5, 0, CONFIDENT))
        return "\n".join(lines)

    return ScriptedBackend(answer, name=f"position-biased(base={bias.base}, slope={bias.slope})")


def majority_wrong(errors: Sequence[float]) -> float:
    """P(more than half of independent votes are wrong), vote j wrong with prob errors[j]
    (Poisson binomial; an even tie counts half, as a coin flip would)."""
    dist = np.array([1.0])
    for e in errors:
        dist = np.convolve(dist, [1 - e, e])
    k = len(errors)
    wrong = dist[k // 2 + 1 :].sum()
    return float(wrong + (0.5 * dist[k // 2] if k % 2 == 0 else 0.0))


def predicted_accuracy(bias: PositionBias, n: int, batch_size: int, rounds: int) -> float:
    """Expected accuracy of BPE with ``rounds`` votes on the simulated LLM (format errors
    ignored): round 1 at the point's own position, later rounds at a uniform position of its
    batch."""
    accs = []
    for start in range(0, n, batch_size):
        b = min(batch_size, n - start)
        mean_e = float(np.mean([bias.error(p) for p in range(b)]))
        for p in range(b):
            accs.append(1 - majority_wrong([bias.error(p)] + [mean_e] * (rounds - 1)))
    return float(np.mean(accs))

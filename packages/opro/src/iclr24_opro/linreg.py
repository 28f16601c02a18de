"""OPRO on linear regression (paper Section 3.1, Table 2), in the official code's format.

    X = 1..50,  y = w_true * X + b_true + N(0, 1)           (optimize_linear_regression.py)
    f(w, b) = || y - (w X + b) ||_2^2                        (evaluate_loss)

The meta-prompt shows the 20 best integer (w, b) pairs with their (integer-truncated)
values, worst first; the answer is the last ``[w, b]`` of the reply, rounded to integers.
Success is proposing exactly (w_true, b_true).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .opro import Scored

# The paper's (w_true, b_true) settings (Table 2).
PAPER_SETTINGS: tuple[tuple[int, int], ...] = (
    (15, 14), (17, 17), (16, 10), (3, 5), (25, 23), (2, 30), (36, -1),
)  # fmt: skip

LINREG_HEADER = (
    "Now you will help me minimize a function with two input variables w, b. I have some "
    "(w, b) pairs and the function values at those points. The pairs are arranged in "
    "descending order based on their function values, where lower values are better."
)
LINREG_REQUEST = (
    "Give me a new (w, b) pair that is different from all pairs above, and has a function "
    "value lower than any of the above. Do not write code. The output must end with a pair "
    "[w, b], where w and b are numerical values."
)


def linreg_data(w_true: float, b_true: float, rep: int, num_points: int = 50):
    """(X, y) of repetition ``rep`` with the official seeding (np.random.seed(rep + 1))."""
    X = np.arange(num_points, dtype=float) + 1  # noqa: N806 (the paper's notation)
    y = X * w_true + b_true + np.random.RandomState(rep + 1).randn(num_points)
    return X, y


def linreg_starts(rep: int, num_starting_points: int = 5) -> list[list[int]]:
    """The official starting points: w ~ U[10, 20] (seed 10 (rep+1)), b ~ U[10, 20]
    (seed 100 (rep+1)), rounded to integers, de-duplicated (np.unique: sorted)."""
    w = np.random.RandomState((rep + 1) * 10).uniform(10, 20, num_starting_points)
    b = np.random.RandomState((rep + 1) * 100).uniform(10, 20, num_starting_points)
    pairs = np.unique(np.stack([np.round(w), np.round(b)], 1), axis=0)
    return [[int(p[0]), int(p[1])] for p in pairs]


def linreg_loss(X, y, w, b) -> float:  # noqa: N803
    return float(np.sum((y - (X * w + b)) ** 2))


def format_linreg_meta_prompt(shown: Sequence[tuple[int, int, float]]) -> str:
    """Meta-prompt from (w, b, value) triples already ordered worst -> best; values are
    shown as ``int(value)`` (official: num_output_decimals = 0 truncates)."""
    pairs = "".join(f"\ninput:\nw={int(w)}, b={int(b)}\nvalue:\n{int(z)}\n" for w, b, z in shown)
    return f"{LINREG_HEADER}\n\n{pairs.strip()}\n\n{LINREG_REQUEST}"


def extract_last_bracket(text: str) -> str:
    """The contents of the last ``[...]`` on one line that is not the template ``[w, b]``
    itself (a bracket naming w or b must hold an '=' to count), else ''."""
    for pair in re.findall(r"\[.*?\]", text)[::-1]:
        if "=" not in pair and ("w" in pair or "b" in pair):
            continue
        return pair[1:-1]
    return ""


def parse_linreg(text: str) -> list[int] | None:
    """``[w, b]`` from a reply: the last bracket, 'w=15' accepted, rounded half-to-even
    (np.round) to integers; None when it does not hold exactly two finite numbers."""
    inner = extract_last_bracket(text)
    if not inner:
        return None
    vals = []
    for item in inner.split(","):
        if "=" in item:
            item = item[item.index("=") + 1 :]
        try:
            vals.append(float(item.strip()))
        except ValueError:
            return None
    if len(vals) != 2 or not all(np.isfinite(vals)):
        return None
    return [int(np.round(v)) for v in vals]


@dataclass
class LinearRegression:
    """The OPRO linear-regression problem of one repetition."""

    w_true: int = 15
    """Official default w_true = 15."""
    b_true: int = 14
    """Official default b_true = 14."""
    rep: int = 0
    """Repetition index: seeds the data and the starting points as the official loop."""
    num_points: int = 50
    """Official num_points = 50."""
    search_box: tuple[int, int] = (0, 30)
    """Random-search range for w and b: the starting interval [10, 20] widened by 10 each
    side (ours; the paper gives no random-search box)."""
    minimize: bool = field(default=True, init=False)

    def __post_init__(self):
        self.X, self.y = linreg_data(self.w_true, self.b_true, self.rep, self.num_points)

    def initial_solutions(self) -> list[list[int]]:
        return linreg_starts(self.rep)

    def score(self, solution) -> float:
        return linreg_loss(self.X, self.y, solution[0], solution[1])

    def key(self, solution):
        return (int(solution[0]), int(solution[1]))

    def meta_prompt(self, shown: Sequence[Scored]) -> str:
        return format_linreg_meta_prompt([(*s.solution, s.value) for s in shown])

    def parse(self, text: str):
        return parse_linreg(text)

    def is_optimal(self, solution, value: float) -> bool:
        return tuple(solution) == (self.w_true, self.b_true)

    def random_solution(self, rng: np.random.Generator) -> list[int]:
        lo, hi = self.search_box
        return [int(v) for v in rng.integers(lo, hi + 1, size=2)]

    def perturb(self, solution, rng: np.random.Generator) -> list[int]:
        """A step of -1, 0 or +1 on each coordinate, not (0, 0)."""
        while True:
            d = rng.integers(-1, 2, size=2)
            if d.any():
                return [int(solution[0] + d[0]), int(solution[1] + d[1])]


_SHOWN_PAIR = re.compile(r"w=(-?\d+), b=(-?\d+)\nvalue:\n(-?\d+)")


def scripted_linreg_optimizer(prompt) -> list[str]:
    """A capable optimizer without a model ("best +/- 1"): reads the pairs in the
    meta-prompt and answers with a neighbour (+/-1 on w and/or b) of the best one that the
    prompt does not already show; falls back to the next best when all are shown."""
    from iclr24_llm.scripted import prompt_text

    pairs = [(int(w), int(b)) for w, b, _ in _SHOWN_PAIR.findall(prompt_text(prompt))]
    seen = set(pairs)
    for w, b in reversed(pairs):  # best last
        nbrs = [
            (w + dw, b + db)
            for dw in (-1, 0, 1)
            for db in (-1, 0, 1)
            if (dw or db) and (w + dw, b + db) not in seen
        ]
        if nbrs:
            return [f"A pair with a lower value is [{nw}, {nb}]" for nw, nb in nbrs]
    return ["[0, 0]"]

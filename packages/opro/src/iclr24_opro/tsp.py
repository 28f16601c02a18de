"""OPRO on the travelling salesman problem (paper Section 3.2, Table 3), in the official
code's format (optimize_tsp.py), with the reference solvers the paper compares against.

Points have integer coordinates in [-100, 100] (int() of U(-100, 100), as the official code);
a trace is a permutation of 0..n-1 starting at 0; its length is the closed tour's length.
The meta-prompt lists the points, then the 10 best traces worst first in ``<trace>`` tags
with their lengths (integer-truncated, official num_decimals = 0).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .opro import Scored


def tsp_instance(n: int, seed: int) -> np.ndarray:
    """(n, 2) integer coordinates: int() of U(-100, 100) (truncation towards 0, official)."""
    rng = np.random.default_rng(seed)
    return np.trunc(rng.uniform(-100, 100, size=(n, 2))).astype(np.int64)


def distance_matrix(pts: np.ndarray) -> np.ndarray:
    d = pts[:, None, :].astype(float) - pts[None, :, :]
    return np.sqrt((d**2).sum(-1))  # (n, n)


def tour_length(dist: np.ndarray, tour: Sequence[int]) -> float:
    t = np.asarray(tour)
    return float(dist[t, np.roll(t, -1)].sum())


def nearest_neighbour(dist: np.ndarray) -> list[int]:
    """Greedy tour from city 0 (official solve_tsp 'nearest_neighbor'; first index on ties)."""
    n = len(dist)
    tour, free = [0], np.ones(n, bool)
    free[0] = False
    for _ in range(n - 1):
        d = np.where(free, dist[tour[-1]], np.inf)
        nxt = int(np.argmin(d))
        tour.append(nxt)
        free[nxt] = False
    return tour


def farthest_insertion(dist: np.ndarray) -> list[int]:
    """Official solve_tsp 'farthest_insertion', ties included: from [0], every remaining city
    (in index order) gets its cheapest insertion place (1..len, never before city 0) by the
    new tour's whole length **truncated to an integer** (official num_decimals = 0, summed
    edge by edge in tour order, closing edge last); the city whose cheapest length is the
    largest is inserted there. The truncation makes ties, broken towards the first place and
    the first city as the official strict comparisons do."""
    n = len(dist)
    tour = [0]
    free = list(range(1, n))
    while free:
        m = len(tour)
        f = np.asarray(free)[:, None, None]  # (F, 1, 1)
        pos = np.arange(1, m + 1)[None, :, None]  # insertion index i: tour[:i] + [f] + tour[i:]
        k = np.arange(m + 1)[None, None, :]
        t = np.asarray(tour)
        before = t[np.minimum(k, m - 1)]
        after = t[np.clip(k - 1, 0, m - 1)]
        cand = np.where(k < pos, before, np.where(k == pos, f, after))  # (F, m, m + 1)
        edges = dist[
            cand, np.roll(cand, -1, axis=-1)
        ]  # edge j: cand[j] -> cand[j + 1], closing last
        length = np.cumsum(edges, axis=-1)[..., -1]  # sequential sum, as the official loop adds
        cost = np.trunc(length)  # (F, m)
        best_pos = cost.argmin(1)  # first place on ties
        i = int(np.argmax(cost[np.arange(len(free)), best_pos]))  # first city on ties
        tour.insert(int(best_pos[i]) + 1, int(free[i]))
        free.pop(i)
    return tour


def two_opt(dist: np.ndarray, tour: Sequence[int] | None = None) -> list[int]:
    """Best-improvement 2-opt (segment reversal) from ``tour`` (default: nearest neighbour)
    until no move shortens the tour by more than 1e-9; city 0 stays first."""
    t = list(tour if tour is not None else nearest_neighbour(dist))
    n = len(t)
    if n < 4:
        return t
    while True:
        arr = np.asarray(t)
        i, j = np.triu_indices(n, 1)
        keep = (i >= 1) & (j - i >= 1)
        i, j = i[keep], j[keep]
        # reversing t[i..j]: edges (t[i-1], t[i]) and (t[j], t[j+1]) become
        # (t[i-1], t[j]) and (t[i], t[j+1])
        a, b, c, d = arr[i - 1], arr[i], arr[j], arr[(j + 1) % n]
        gain = dist[a, b] + dist[c, d] - dist[a, c] - dist[b, d]
        k = int(np.argmax(gain))
        if gain[k] <= 1e-9:
            return t
        t[i[k] : j[k] + 1] = t[i[k] : j[k] + 1][::-1]


def held_karp(dist: np.ndarray) -> tuple[list[int], float]:
    """Exact optimum by dynamic programming over subsets (O(2^n n^2); n <= ~16).

    C(S, j) = min_{k in S \\ {j}} C(S \\ {j}, k) + d(k, j), tours from city 0.
    """
    n = len(dist)
    if n <= 3:
        t = list(range(n))
        return t, tour_length(dist, t)
    m = n - 1  # cities 1..n-1 as bits 0..m-1
    full = 1 << m
    cost = np.full((full, m), np.inf)
    parent = np.full((full, m), -1, dtype=np.int64)
    d = dist[1:, 1:]  # (m, m)
    cost[1 << np.arange(m), np.arange(m)] = dist[0, 1:]
    bits = (np.arange(full)[:, None] >> np.arange(m)[None, :]) & 1  # (full, m)
    for mask in range(1, full):
        inside = bits[mask].astype(bool)
        if inside.sum() < 2:
            continue
        for j in np.flatnonzero(inside):
            prev = mask & ~(1 << j)
            cand = cost[prev] + d[:, j]  # over last cities k in prev
            cand[~bits[prev].astype(bool)] = np.inf
            k = int(np.argmin(cand))
            cost[mask, j], parent[mask, j] = cand[k], k
    last = cost[full - 1] + dist[1:, 0]
    j = int(np.argmin(last))
    best = float(last[j])
    tour, mask = [], full - 1
    while j >= 0:
        tour.append(j + 1)
        mask, j = mask & ~(1 << j), int(parent[mask, j])
    return [0, *tour[::-1]], best


def brute_force(dist: np.ndarray) -> tuple[list[int], float]:
    """Exact optimum by enumerating all (n-1)! tours from city 0 (tests only, n <= 9)."""
    n = len(dist)
    best, arg = np.inf, None
    for perm in itertools.permutations(range(1, n)):
        t = [0, *perm]
        v = tour_length(dist, t)
        if v < best:
            best, arg = v, t
    return arg, float(best)


TSP_HEADER = "You are given a list of points with coordinates below:\n"
TSP_MIDDLE = (
    ".\n\nBelow are some previous traces and their lengths. The traces are arranged in "
    "descending order based on their lengths, where lower values are better."
)
TSP_REQUEST = (
    "Give me a new trace that is different from all traces above, and has a length lower "
    "than any of the above. The trace should traverse all points exactly once. The trace "
    "should start with '<trace>' and end with </trace>."
)


def format_tsp_meta_prompt(pts: np.ndarray, shown: Sequence[tuple[Sequence[int], float]]) -> str:
    """Meta-prompt from the points and (trace, length) pairs ordered worst -> best."""
    points = ", ".join(f"({i}): ({int(x)}, {int(y)})" for i, (x, y) in enumerate(pts))
    traces = "".join(
        f"\n<trace> {','.join(str(int(c)) for c in t)} </trace>\nlength:\n{int(v)}\n"
        for t, v in shown
    )
    return f"{TSP_HEADER}{points}{TSP_MIDDLE}\n\n{traces.strip()}\n\n{TSP_REQUEST}"


def extract_trace(text: str) -> list[int]:
    """Integers between the first '<trace>' and the next '</trace>' (comma-separated;
    items that are not integers are skipped, as in the official extract_string)."""
    start, end = "<trace>", "</trace>"
    if start not in text:
        return []
    text = text[text.index(start) + len(start) :]
    if end not in text:
        return []
    out = []
    for item in text[: text.index(end)].split(","):
        try:
            out.append(int(item.strip()))
        except ValueError:
            continue
    return out


def parse_tsp(text: str, n: int) -> list[int] | None:
    """A valid trace: every city 0..n-1 exactly once, starting at 0 (official checks, plus
    indices in range: the official code let a negative index pass as a city)."""
    t = extract_trace(text)
    if len(t) != n or sorted(t) != list(range(n)) or t[0] != 0:
        return None
    return t


@dataclass
class TSP:
    """The OPRO TSP problem on one generated instance."""

    n: int = 10
    """Number of cities (paper Table 3: 10, 15, 20, 50)."""
    seed: int = 0
    """Seeds the instance and the starting traces."""
    num_starting_points: int = 5
    """Official num_starting_points = 5 (random traces from city 0)."""
    minimize: bool = field(default=True, init=False)

    def __post_init__(self):
        self.points = tsp_instance(self.n, self.seed)
        self.dist = distance_matrix(self.points)
        self._optimum: float | None = None

    @property
    def optimum(self) -> float:
        """Held-Karp optimum (n <= 16), else the best of 2-opt from NN and from FI."""
        if self._optimum is None:
            if self.n <= 16:
                self._optimum = held_karp(self.dist)[1]
            else:
                starts = (nearest_neighbour(self.dist), farthest_insertion(self.dist))
                self._optimum = min(tour_length(self.dist, two_opt(self.dist, t)) for t in starts)
        return self._optimum

    def gap(self, length: float) -> float:
        """Optimality gap in percent: 100 (length - opt) / opt."""
        return 100.0 * (length - self.optimum) / self.optimum

    def initial_solutions(self) -> list[list[int]]:
        """Random traces from city 0, none optimal (official: none equal to the reference)."""
        rng = np.random.default_rng([self.seed, 1])
        out: list[list[int]] = []
        while len(out) < self.num_starting_points:
            t = self.random_solution(rng)
            if self.n < 4 or tour_length(self.dist, t) > self.optimum + 1e-6:
                out.append(t)
        return out

    def score(self, solution) -> float:
        return tour_length(self.dist, solution)

    def key(self, solution):
        return tuple(int(c) for c in solution)

    def meta_prompt(self, shown: Sequence[Scored]) -> str:
        return format_tsp_meta_prompt(self.points, [(s.solution, s.value) for s in shown])

    def parse(self, text: str):
        return parse_tsp(text, self.n)

    def is_optimal(self, solution, value: float) -> bool:
        return value <= self.optimum + 1e-6

    def random_solution(self, rng: np.random.Generator) -> list[int]:
        return [0, *(rng.permutation(self.n - 1) + 1).tolist()]

    def perturb(self, solution, rng: np.random.Generator) -> list[int]:
        """A random 2-opt move: reverse a segment t[i..j], 1 <= i < j <= n-1."""
        i, j = sorted(rng.choice(np.arange(1, self.n), size=2, replace=False).tolist())
        t = list(solution)
        t[i : j + 1] = t[i : j + 1][::-1]
        return t


_SHOWN_TRACE = re.compile(r"<trace> ([\d,]+) </trace>")


def tsp_neighbours(tour: Sequence[int]) -> list[list[int]]:
    """All 2-opt reversals and single-city moves of ``tour`` that keep city 0 first."""
    t, n = list(tour), len(tour)
    out = [t[:i] + t[i : j + 1][::-1] + t[j + 1 :] for i in range(1, n) for j in range(i + 1, n)]
    for i in range(1, n):
        rest = t[:i] + t[i + 1 :]
        out += [rest[:k] + [t[i]] + rest[k:] for k in range(1, n) if k != i]
    return out


def scripted_tsp_optimizer(prompt) -> list[str]:
    """A capable optimizer without a model: answers with a 2-opt or move-one-city neighbour
    of the best shown trace (or of the second best) that the prompt does not show."""
    from iclr24_llm.scripted import prompt_text

    shown = [[int(c) for c in s.split(",")] for s in _SHOWN_TRACE.findall(prompt_text(prompt))]
    seen = {tuple(t) for t in shown}
    cands = [t for base in shown[::-1][:2] for t in tsp_neighbours(base) if tuple(t) not in seen]
    if not cands:
        return ["no idea"]
    return [f"<trace> {','.join(map(str, t))} </trace>" for t in cands]

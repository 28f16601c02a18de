"""Verdicts: how a claim's outcome is computed from paired per-seed values.

Every claim of every package goes through one of three tests, and gets one of three outcomes:
``holds``, ``fails`` or ``inconclusive``. The tests work on **paired per-seed values** (seed
``s`` of the method against seed ``s`` of the baseline), signed so that a positive difference
means "``a`` is better" (``higher_is_better=False`` flips the sign for losses, errors and
times). With ``n`` seeds, the paired differences ``d`` have mean ``m`` and standard error
``se = std(d, ddof=1) / sqrt(n)``; ``[lo, hi] = [m - 2 se, m + 2 se]``.

==================  ==========================================  ===========================
test                holds when                                  fails when
==================  ==========================================  ===========================
``superiority``     ``m > margin`` and ``m > 2 se``             ``hi <= margin``
``non_inferiority`` ``lo > -tolerance``                         ``hi < -tolerance``
``threshold``       ``lo > threshold`` (past it by > 2 SE)      ``hi <= threshold``
==================  ==========================================  ===========================

Anything else is ``inconclusive``: the seeds' noise cannot decide. A comparison (the first
two) with fewer than 2 seeds is ``inconclusive`` too; a threshold on a single value is judged
on that value (``se`` 0, said as "1 value").

**Controls.** A test may be given a degenerate ``control`` (an untrained model, a rule that
never fires, a policy that never learns) in place of ``a``: the same test is run on it, and if
the control passes too, the verdict is ``inconclusive`` ("control passes"): the criterion
cannot tell the method from something that does nothing.

Worked example (lower is better; three seeds)::

    >>> v = superiority([7.4, 7.9, 7.6], [8.1, 8.3, 8.2], margin=0.2, higher_is_better=False)
    >>> v.outcome, round(v.estimate, 3), round(v.se, 3)
    ('holds', 0.567, 0.088)

A **bound** is not a claim but a check (:func:`iclr24_common.bound_check`): it is reported
with its slack (bound / measured) and labelled ``vacuous`` past 100x.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

OUTCOMES = ("holds", "fails", "inconclusive")
COMPARISONS = ("superiority", "non-inferiority")
Values = Mapping[int, float] | Sequence[float] | np.ndarray


def _paired(a: Values, b: Values) -> np.ndarray:
    """``a - b`` per seed: dicts pair on their shared seeds, sequences by position."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        seeds = sorted(set(a) & set(b))
        if not seeds:
            raise ValueError("the two sides share no seed")
        return np.array([float(a[s]) - float(b[s]) for s in seeds])
    if isinstance(a, Mapping) or isinstance(b, Mapping):
        raise TypeError("pair a seed dict with a seed dict, or a sequence with a sequence")
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"paired values need equal lengths, got {a.size} and {b.size}")
    return a - b


def _values(x: Values) -> np.ndarray:
    if isinstance(x, Mapping):
        return np.array([float(x[s]) for s in sorted(x)])
    return np.asarray(x, dtype=float).ravel()


def _mean_se(d: np.ndarray) -> tuple[float, float]:
    if d.size == 0:
        raise ValueError("no values to judge")
    se = float(d.std(ddof=1) / math.sqrt(d.size)) if d.size > 1 else 0.0
    return float(d.mean()), se


@dataclass(frozen=True)
class Verdict:
    """The outcome of one test, with the numbers that decided it (all in "better" units:
    positive means the method is better, or the quantity is past the threshold)."""

    outcome: str
    """``holds``, ``fails`` or ``inconclusive``."""
    kind: str
    """``superiority``, ``non-inferiority`` or ``threshold``."""
    estimate: float
    """Mean paired difference (or, for a threshold, mean value minus the threshold)."""
    se: float
    """Standard error of that mean over the seeds (0 with one value)."""
    n: int
    """Number of paired seeds (or values)."""
    margin: float
    """The superiority margin, the non-inferiority tolerance, or the threshold."""
    higher_is_better: bool = True
    reason: str = ""
    """Why the outcome, in a few words (e.g. ``control passes``, ``1 seed``)."""
    control: dict[str, Any] | None = field(default=None, compare=False)
    """The control's own test (name, outcome, estimate, se), when one was run."""

    @property
    def lo(self) -> float:
        return self.estimate - 2 * self.se

    @property
    def hi(self) -> float:
        return self.estimate + 2 * self.se

    @property
    def holds(self) -> bool:
        return self.outcome == "holds"

    def rule(self) -> str:
        """The criterion as text, e.g. ``paired gap > 0.01 and > 2 SE (lower is better)``."""
        d = "higher" if self.higher_is_better else "lower"
        if self.kind == "superiority":
            return f"superiority: paired gap > {self.margin:.4g} and > 2 SE ({d} is better)"
        if self.kind == "non-inferiority":
            return (f"non-inferiority: paired gap - 2 SE > -{self.margin:.4g} ({d} is better)")  # fmt: skip
        word = "above" if self.higher_is_better else "below"
        return f"threshold: {word} {self.margin:.4g} by more than 2 SE"

    def summary(self) -> str:
        """The deciding numbers, e.g. ``+0.04 +/- 0.012 SE (3 seeds)``, and the reason."""
        s = describe(self.to_dict())
        return s + (f"; {self.reason}" if self.reason else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "estimate": self.estimate, "se": self.se, "n": self.n,
            "margin": self.margin, "higher_is_better": self.higher_is_better,
            "lo": self.lo, "hi": self.hi, "reason": self.reason, "control": self.control,
        }  # fmt: skip


def describe(test: dict[str, Any]) -> str:
    """A test's deciding numbers from its dict (``Verdict.to_dict`` or a results file):
    ``+0.04 +/- 0.012 SE (3 seeds)``; a threshold counts values, not seeds."""
    unit = "seed" if test["kind"] in COMPARISONS else "value"
    n = test["n"]

    def num(x: Any, fmt: str) -> str:  # a results file stores non-finite numbers as null
        return "n/a" if x is None or not np.isfinite(x) else format(x, fmt)

    return f"{num(test['estimate'], '+.3g')} +/- {num(test['se'], '.2g')} SE ({n} {unit}{'s' * (n != 1)})"


def _decide(kind: str, d: np.ndarray, margin: float, higher: bool) -> Verdict:
    m, se = _mean_se(d)
    lo, hi = m - 2 * se, m + 2 * se
    reason = ""
    if not np.isfinite(m):
        outcome, reason = "inconclusive", "non-finite values"
    elif kind in COMPARISONS and d.size < 2:
        outcome, reason = "inconclusive", "fewer than 2 seeds"
    elif kind == "superiority":
        outcome = "holds" if (m > margin and m > 2 * se) else "fails" if hi <= margin else ""
    elif kind == "non-inferiority":
        outcome = "holds" if lo > -margin else "fails" if hi < -margin else ""
    else:  # threshold: d already has the threshold subtracted
        outcome = "holds" if lo > 0 else "fails" if hi <= 0 else ""
    if not outcome:
        outcome, reason = "inconclusive", "within 2 SE"
    return Verdict(outcome, kind, m, se, int(d.size), margin, higher, reason)


def _with_control(v: Verdict, control: Verdict | None, name: str) -> Verdict:
    if control is None:
        return v
    info = {"name": name, "outcome": control.outcome, "estimate": control.estimate,
            "se": control.se, "n": control.n}  # fmt: skip
    if v.outcome == "holds" and control.outcome == "holds":
        return Verdict("inconclusive", v.kind, v.estimate, v.se, v.n, v.margin,
                       v.higher_is_better, f"control passes ({name})", info)  # fmt: skip
    return Verdict(v.outcome, v.kind, v.estimate, v.se, v.n, v.margin, v.higher_is_better,
                   v.reason, info)  # fmt: skip


def _judge(kind: str, diffs, subject: Values, control: Values | None, control_name: str,
           margin: float, higher: bool) -> Verdict:  # fmt: skip
    """Run ``kind`` on ``diffs(subject)`` and, when given, on ``diffs(control)`` (the same
    test with the control in the method's place), signed so that positive is better."""
    sign = 1.0 if higher else -1.0
    v = _decide(kind, sign * diffs(subject), margin, higher)
    c = None if control is None else _decide(kind, sign * diffs(control), margin, higher)
    return _with_control(v, c, control_name)


def superiority(a: Values, b: Values, *, margin: float = 0.0, higher_is_better: bool = True,
                control: Values | None = None, control_name: str = "control") -> Verdict:  # fmt: skip
    """``a`` beats ``b`` by more than ``margin`` (>= 0) and by more than 2 SE of the paired
    differences. ``control`` (values in place of ``a``) is run through the same test."""
    if margin < 0:
        raise ValueError("a superiority margin is >= 0")
    return _judge("superiority", lambda x: _paired(x, b), a, control, control_name, margin,
                  higher_is_better)  # fmt: skip


def non_inferiority(a: Values, b: Values, *, tolerance: float, higher_is_better: bool = True,
                    control: Values | None = None, control_name: str = "control") -> Verdict:  # fmt: skip
    """``a`` is not worse than ``b`` by more than ``tolerance`` (>= 0): the lower 2-SE bound of
    the paired gap (in "better" units) lies above ``-tolerance``."""
    if tolerance < 0:
        raise ValueError("a non-inferiority tolerance is >= 0")
    return _judge("non-inferiority", lambda x: _paired(x, b), a, control, control_name,
                  tolerance, higher_is_better)  # fmt: skip


def threshold(x: Values, *, threshold: float, higher_is_better: bool = True,
              control: Values | None = None, control_name: str = "control") -> Verdict:  # fmt: skip
    """A quantity (per seed) lies past ``threshold`` by more than 2 SE: above it when
    ``higher_is_better``, below it otherwise. ``estimate`` is the mean distance past it."""
    return _judge("threshold", lambda v: _values(v) - threshold, x, control, control_name,
                  threshold, higher_is_better)  # fmt: skip


def none_of(counts: Values) -> Verdict:
    """No event at all (no training hit its cap, no solve missed its test): an exact count,
    not a mean, so one event on one of ten seeds fails it. Judged as one value, the total count
    over the seeds, below 0.5: holds when every count is 0, fails otherwise."""
    total = float(np.sum(_values(counts)))
    return threshold([total], threshold=0.5, higher_is_better=False)


def all_of(*verdicts: Verdict) -> Verdict:
    """A claim that needs several tests at once (e.g. "flat cost and the peers' cost grows"):
    fails if any fails, holds if all hold, else inconclusive. Its numbers are the weakest
    part's (the first that does not hold, else the first)."""
    if not verdicts:
        raise ValueError("all_of needs at least one verdict")
    weakest = next((v for v in verdicts if v.outcome == "fails"), None) or next(
        (v for v in verdicts if v.outcome != "holds"), verdicts[0])  # fmt: skip
    parts = "; ".join(f"{v.kind} {v.outcome}" for v in verdicts)
    return Verdict(weakest.outcome, weakest.kind, weakest.estimate, weakest.se, weakest.n,
                   weakest.margin, weakest.higher_is_better,
                   f"all of {len(verdicts)}: {parts}" + (f" ({weakest.reason})" if weakest.reason else ""),
                   weakest.control)  # fmt: skip


VACUOUS_SLACK = 100.0
"""A bound looser than this many times the measured quantity is labelled vacuous."""


def slack_label(measured: float, bound: float) -> tuple[float, str]:
    """``bound / measured`` and its label: ``tight`` (<= 100x) or ``vacuous`` (past 100x)."""
    if measured == 0:
        slack = math.inf if bound > 0 else 1.0
    else:
        slack = abs(bound) / abs(measured)
    return slack, ("vacuous" if slack > VACUOUS_SLACK else "tight")

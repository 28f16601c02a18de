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

**Sources.** Every margin, tolerance and threshold says where it comes from (``source=``, a
:class:`Source`): the paper (``Source.paper(quote, where)``), a derivation
(``Source.derived(formula with its numbers)``) or our own choice
(``Source.ours(reason, commit)``: why this value, fixed before the run at that commit). The
results contract refuses a test without one.

**Test-set noise.** Where every seed is scored on the same fixed test set, the seeds' spread
misses the test items' sampling noise: pass the per-item scores (``items=``; for each seed an
array whose mean is that seed's value) and the SE becomes the larger of the seed-level SE and
the item-level SE (the SE over items of the seed-averaged per-item differences; for 0/1
scores that all agree, the rule of three's floor 1.5 / n). A test of ``>= 2`` seeds whose
values are all equal (SE 0) and that would hold is ``inconclusive`` ("SE 0"): a pass earned
only because every seed scored the same is not a pass. (A control is judged without that
rule: a degenerate arm equal to the reference on every seed passes.)

**Controls.** A test may be given a degenerate ``control`` (an untrained model, a rule that
never fires, the intervention switched off, random at the same budget) in place of ``a``: the
same test is run on it, and if the control passes too, the verdict is ``inconclusive``
("control passes"): the criterion cannot tell the method from something that does nothing.
The test records how far the method moved from the control (``moved``: the paired mean of
``a - control`` in "better" units, with its SE).

Worked example (lower is better; three seeds)::

    >>> v = superiority([7.4, 7.9, 7.6], [8.1, 8.3, 8.2], margin=0.2, higher_is_better=False,
    ...                 source=Source.ours("an MSE gap a user notices", commit="ba650b6"))
    >>> v.outcome, round(v.estimate, 3), round(v.se, 3), v.source.kind
    ('holds', 0.567, 0.088, 'ours')

Worked example (one shared test set of 4 items, two seeds that score the same)::

    >>> acc, per_item = {0: 0.75, 1: 0.75}, {0: [1, 1, 1, 0], 1: [1, 1, 1, 0]}
    >>> src = Source.paper("solves the task", "Sec. 4")
    >>> threshold(acc, threshold=0.5, source=src).reason
    'SE 0 over 2 seeds: every seed gave the same value (give items=)'
    >>> v = threshold(acc, threshold=0.5, items=per_item, source=src)
    >>> v.outcome, v.se_basis, round(v.se, 3)
    ('inconclusive', 'items', 0.25)

A **bound** is not a claim but a check (:func:`iclr24_common.bound_check`): it is reported
with its slack (bound / measured) and labelled ``vacuous`` past 100x.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

OUTCOMES = ("holds", "fails", "inconclusive")
COMPARISONS = ("superiority", "non-inferiority")
SOURCE_KINDS = ("paper", "derived", "ours")
Values = Mapping[int, float] | Sequence[float] | np.ndarray
Items = Mapping[int, Sequence[float]] | Sequence[Sequence[float]] | np.ndarray


@dataclass(frozen=True)
class Source:
    """Where a margin, tolerance or threshold comes from: ``kind`` is ``paper`` (a quote and
    its location), ``derived`` (the formula and the numbers it came from) or ``ours`` (why this
    value, and the commit at which it was fixed, before the run). Build it with
    :meth:`paper`, :meth:`derived` or :meth:`ours`."""

    kind: str
    text: str

    def __post_init__(self):
        if self.kind not in SOURCE_KINDS:
            raise ValueError(f"a source is one of {SOURCE_KINDS}, not {self.kind!r}")
        if not str(self.text).strip():
            raise ValueError(f"a {self.kind} source says where the value comes from (text)")

    @classmethod
    def paper(cls, quote: str, where: str) -> Source:
        """The paper's own wording or number, e.g. ``Source.paper("an order of magnitude
        faster", "abstract")``."""
        if not where.strip():
            raise ValueError("Source.paper needs the location (section, table, figure)")
        return cls("paper", f'"{quote}" ({where})')

    @classmethod
    def derived(cls, formula: str) -> Source:
        """A value computed from others, e.g. ``"ceiling (1 - r) * delta = 0.4375 at r 0.5,
        delta 0.875"``."""
        return cls("derived", formula)

    @classmethod
    def ours(cls, reason: str, commit: str) -> Source:
        """Our own choice: why this value, and the commit at which it was fixed (before the
        run whose verdict it decides)."""
        if not commit.strip():
            raise ValueError("Source.ours names the commit at which the value was fixed")
        return cls("ours", f"{reason} (ours, fixed at {commit})")

    def __str__(self) -> str:
        return f"{self.kind}: {self.text}"

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "text": self.text}


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


def _item_matrix(values: Values, items: Items, seeds: list[int] | None) -> np.ndarray:
    """The per-item scores as a (seeds, items) array, in the order of ``seeds`` (dicts) or of
    ``values`` (sequences); each row's mean must equal that seed's value (the same units)."""
    if isinstance(values, Mapping) != isinstance(items, Mapping):
        raise TypeError("give items= in the shape of the values: a seed dict, or a sequence")
    if isinstance(items, Mapping):
        seeds = seeds if seeds is not None else sorted(values)
        missing = [s for s in seeds if s not in items]
        if missing:
            raise ValueError(f"items= lacks seeds {missing}")
        rows = [np.asarray(items[s], dtype=float).ravel() for s in seeds]
        vals = [float(values[s]) for s in seeds]
    else:
        rows = [np.asarray(r, dtype=float).ravel() for r in items]
        vals = list(_values(values))
        if len(rows) != len(vals):
            raise ValueError(f"items= has {len(rows)} rows for {len(vals)} values")
    if len({r.size for r in rows}) != 1 or rows[0].size < 2:
        raise ValueError("items=: every seed is scored on the same >= 2 test items")
    m = np.vstack(rows)
    for v, r in zip(vals, m, strict=True):
        if not math.isclose(float(r.mean()), v, rel_tol=1e-6, abs_tol=1e-9):
            raise ValueError(f"items=: a seed's items average {r.mean():.6g}, its value is {v:.6g} "
                             "(pass per-item scores in the value's units)")  # fmt: skip
    return m


def item_se(per_item: np.ndarray, binary: bool = False) -> float:
    """SE over the test items of the seed-averaged per-item quantity ((seeds, items) in).
    Where the items are 0/1 scores and every item gave the same value (all solved, none
    solved, no item differing), the empirical SE is 0 but the rate is not known exactly: the
    rule of three (no event in n items puts the rate's 95 % upper bound at 3/n) gives the
    floor SE = 1.5 / n."""
    d = per_item.mean(axis=0)
    if np.ptp(d) == 0:  # every item the same (exactly: no rounding noise from the std)
        return 1.5 / d.size if binary else 0.0
    return float(d.std(ddof=1) / math.sqrt(d.size))


def _binary(*matrices: np.ndarray) -> bool:
    """Whether every per-item score is 0 or 1 (a correct / incorrect test item)."""
    return all(np.isin(m, (0.0, 1.0)).all() for m in matrices)


def _mean_se(d: np.ndarray) -> tuple[float, float]:
    if d.size == 0:
        raise ValueError("no values to judge")
    # equal values have SE exactly 0 (the std of their float mean need not be)
    se = float(d.std(ddof=1) / math.sqrt(d.size)) if d.size > 1 and np.ptp(d) > 0 else 0.0
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
    """Standard error of that mean: over the seeds, or the item-level SE where larger."""
    n: int
    """Number of paired seeds (or values)."""
    margin: float
    """The superiority margin, the non-inferiority tolerance, or the threshold."""
    higher_is_better: bool = True
    reason: str = ""
    """Why the outcome, in a few words (e.g. ``control passes``, ``1 seed``)."""
    control: dict[str, Any] | None = field(default=None, compare=False)
    """The control's own test (name, outcome, estimate, se) and how far the method moved
    from it (``moved``, ``moved_se``), when one was run."""
    source: Source | None = None
    """Where the margin / tolerance / threshold comes from."""
    seed_se: float | None = None
    """The SE over the seeds alone."""
    item_se: float | None = None
    """The SE over the shared test set's items, where per-item scores were given."""
    parts: tuple[dict[str, Any], ...] = ()
    """For :func:`all_of`: every part's test."""

    @property
    def lo(self) -> float:
        return self.estimate - 2 * self.se

    @property
    def hi(self) -> float:
        return self.estimate + 2 * self.se

    @property
    def holds(self) -> bool:
        return self.outcome == "holds"

    @property
    def se_basis(self) -> str:
        """``items`` when the item-level SE was computed (and taken where larger), else
        ``seeds``."""
        return "items" if self.item_se is not None else "seeds"

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

    def with_source(self, source: Source) -> Verdict:
        return replace(self, source=source)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "outcome": self.outcome, "estimate": self.estimate, "se": self.se,
            "n": self.n, "margin": self.margin, "higher_is_better": self.higher_is_better,
            "lo": self.lo, "hi": self.hi, "reason": self.reason, "control": self.control,
            "source": self.source.to_dict() if self.source else None,
            "se_basis": self.se_basis, "seed_se": self.seed_se, "item_se": self.item_se,
            "parts": list(self.parts),
        }  # fmt: skip


def describe(test: dict[str, Any]) -> str:
    """A test's deciding numbers from its dict (``Verdict.to_dict`` or a results file):
    ``+0.04 +/- 0.012 SE (3 seeds)``; a threshold counts values, not seeds; an item-level SE
    says so (``SE over items``)."""
    unit = "seed" if test["kind"] in COMPARISONS else "value"
    n = test["n"]

    def num(x: Any, fmt: str) -> str:  # a results file stores non-finite numbers as null
        return "n/a" if x is None or not np.isfinite(x) else format(x, fmt)

    basis = " over items" if test.get("se_basis") == "items" else ""
    return (f"{num(test['estimate'], '+.3g')} +/- {num(test['se'], '.2g')} SE{basis} "
            f"({n} {unit}{'s' * (n != 1)})")  # fmt: skip


def _decide(kind: str, d: np.ndarray, margin: float, higher: bool,
            item_se: float | None = None, zero_se_rule: bool = True) -> Verdict:  # fmt: skip
    m, seed_se = _mean_se(d)
    se = seed_se if item_se is None else max(seed_se, item_se)
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
    if zero_se_rule and outcome == "holds" and d.size >= 2 and se == 0:
        outcome = "inconclusive"
        reason = (f"SE 0 over {d.size} seeds: every seed gave the same value (give items=)"
                  if item_se is None else "SE 0 over seeds and items")  # fmt: skip
    return Verdict(outcome, kind, m, se, int(d.size), margin, higher, reason,
                   seed_se=seed_se, item_se=item_se)  # fmt: skip


def _with_control(v: Verdict, control: Verdict | None, name: str,
                  moved: tuple[float, float] | None) -> Verdict:  # fmt: skip
    if control is None:
        return v
    info = {"name": name, "outcome": control.outcome, "estimate": control.estimate,
            "se": control.se, "n": control.n, "moved": moved[0], "moved_se": moved[1]}  # fmt: skip
    if v.outcome == "holds" and control.outcome == "holds":
        return replace(v, outcome="inconclusive", reason=f"control passes ({name})", control=info)
    return replace(v, control=info)


def _judge(kind: str, d: np.ndarray, d_control: np.ndarray | None, moved: np.ndarray | None,
           margin: float, higher: bool, source: Source | None, control_name: str,
           items: np.ndarray | None = None, items_control: np.ndarray | None = None,
           binary: bool = False) -> Verdict:  # fmt: skip
    """Run ``kind`` on the differences ``d`` (the method's, "better" = positive after the
    sign) and, when given, on ``d_control`` (the same test with the control in the method's
    place); ``items`` are the (seeds, items) per-item differences where a shared test set's
    scores were given (``binary``: 0/1 scores)."""
    if source is not None and not isinstance(source, Source):
        raise TypeError("source= is a Source (Source.paper / .derived / .ours)")
    sign = 1.0 if higher else -1.0
    v = _decide(kind, sign * d, margin, higher,
                None if items is None else item_se(sign * items, binary))  # fmt: skip
    c = None
    if d_control is not None:
        c_se = None if items_control is None else item_se(sign * items_control, binary)
        # the control is judged without the SE-0 rule: a degenerate arm that equals the
        # reference on every seed passes (and so keeps the claim from holding)
        c = _decide(kind, sign * d_control, margin, higher, c_se, zero_se_rule=False)
        moved = _mean_se(sign * moved)
    return replace(_with_control(v, c, control_name, moved), source=source)


def _comparison_items(a, b, control, items) -> tuple[np.ndarray | None, np.ndarray | None, bool]:
    """The (seeds, items) per-item differences ``a - b`` (and ``control - b``) from
    ``items=(a_items, b_items[, control_items])``, and whether the scores are 0/1."""
    if items is None:
        return None, None, False
    if not isinstance(items, tuple) or len(items) not in (2, 3):
        raise TypeError("items= for a comparison is (a_items, b_items[, control_items])")
    if control is not None and len(items) < 3:
        raise ValueError("a control on a shared test set needs its items: (a, b, control)")
    seeds = sorted(set(a) & set(b)) if isinstance(a, Mapping) and isinstance(b, Mapping) else None
    a_m, b_m = _item_matrix(a, items[0], seeds), _item_matrix(b, items[1], seeds)
    c_m = None if control is None else _item_matrix(control, items[2], seeds)
    binary = _binary(a_m, b_m, *([] if c_m is None else [c_m]))
    return a_m - b_m, None if c_m is None else c_m - b_m, binary


def superiority(a: Values, b: Values, *, margin: float = 0.0, higher_is_better: bool = True,
                control: Values | None = None, control_name: str = "control",
                source: Source | None = None, items: tuple | None = None) -> Verdict:  # fmt: skip
    """``a`` beats ``b`` by more than ``margin`` (>= 0) and by more than 2 SE of the paired
    differences. ``control`` (values in place of ``a``) is run through the same test.
    ``items=(a_items, b_items[, control_items])``: per-item scores on a shared test set."""
    if margin < 0:
        raise ValueError("a superiority margin is >= 0")
    it, it_c, binary = _comparison_items(a, b, control, items)
    return _judge("superiority", _paired(a, b), None if control is None else _paired(control, b),
                  None if control is None else _paired(a, control), margin, higher_is_better,
                  source, control_name, it, it_c, binary)  # fmt: skip


def non_inferiority(a: Values, b: Values, *, tolerance: float, higher_is_better: bool = True,
                    control: Values | None = None, control_name: str = "control",
                    source: Source | None = None, items: tuple | None = None) -> Verdict:  # fmt: skip
    """``a`` is not worse than ``b`` by more than ``tolerance`` (>= 0): the lower 2-SE bound of
    the paired gap (in "better" units) lies above ``-tolerance``. Give the no-op arm (the
    intervention off, or random at the same budget) as ``control``."""
    if tolerance < 0:
        raise ValueError("a non-inferiority tolerance is >= 0")
    it, it_c, binary = _comparison_items(a, b, control, items)
    return _judge("non-inferiority", _paired(a, b),
                  None if control is None else _paired(control, b),
                  None if control is None else _paired(a, control), tolerance, higher_is_better,
                  source, control_name, it, it_c, binary)  # fmt: skip


def threshold(x: Values, *, threshold: float, higher_is_better: bool = True,
              control: Values | None = None, control_name: str = "control",
              source: Source | None = None, items: Items | tuple | None = None) -> Verdict:  # fmt: skip
    """A quantity (per seed) lies past ``threshold`` by more than 2 SE: above it when
    ``higher_is_better``, below it otherwise. ``estimate`` is the mean distance past it.
    ``items``: the per-item scores of ``x`` on a shared test set (``(x_items,
    control_items)`` with a control)."""
    it = it_c = None
    binary = False
    if items is not None:
        own, ctl = (items[0], items[1] if len(items) > 1 else None) if isinstance(items, tuple) \
            else (items, None)  # fmt: skip
        if control is not None and ctl is None:
            raise ValueError("a control on a shared test set needs its items: (x, control)")
        it = _item_matrix(x, own, None)
        it_c = None if control is None else _item_matrix(control, ctl, None)
        binary = _binary(it, *([] if it_c is None else [it_c]))
        it, it_c = it - threshold, None if it_c is None else it_c - threshold
    return _judge("threshold", _values(x) - threshold,
                  None if control is None else _values(control) - threshold,
                  None if control is None else _paired(x, control), threshold,
                  higher_is_better, source, control_name, it, it_c, binary)  # fmt: skip


NONE_SOURCE = Source.derived("'none' is an exact count: the total number of events over the "
                             "seeds must be 0 (below 0.5)")  # fmt: skip


def none_of(counts: Values) -> Verdict:
    """No event at all (no training hit its cap, no solve missed its test): an exact count,
    not a mean, so one event on one of ten seeds fails it. Judged as one value, the total count
    over the seeds, below 0.5: holds when every count is 0, fails otherwise."""
    total = float(np.sum(_values(counts)))
    return threshold([total], threshold=0.5, higher_is_better=False, source=NONE_SOURCE)


def all_of(*verdicts: Verdict) -> Verdict:
    """A claim that needs several tests at once (e.g. "flat cost and the peers' cost grows"):
    fails if any fails, holds if all hold, else inconclusive. Its numbers are the weakest
    part's (the first that does not hold, else the first); every part's test (with its
    source) is kept in ``parts``."""
    if not verdicts:
        raise ValueError("all_of needs at least one verdict")
    weakest = next((v for v in verdicts if v.outcome == "fails"), None) or next(
        (v for v in verdicts if v.outcome != "holds"), verdicts[0])  # fmt: skip
    summary = "; ".join(f"{v.kind} {v.outcome}" for v in verdicts)
    reason = f"all of {len(verdicts)}: {summary}" + (
        f" ({weakest.reason})" if weakest.reason else ""
    )
    parts = tuple(p for v in verdicts for p in (v.parts or (v.to_dict(),)))
    return replace(weakest, reason=reason, parts=parts)


def sources_of(test: dict[str, Any]) -> list[dict[str, str] | None]:
    """Every source a test dict carries (its parts' for :func:`all_of`), ``None`` for a part
    without one."""
    return [p.get("source") for p in test.get("parts") or [test]]


VACUOUS_SLACK = 100.0
"""A bound looser than this many times the measured quantity is labelled vacuous."""


def slack_label(measured: float, bound: float) -> tuple[float, str]:
    """``bound / measured`` and its label: ``tight`` (<= 100x) or ``vacuous`` (past 100x)."""
    if measured == 0:
        slack = math.inf if bound > 0 else 1.0
    else:
        slack = abs(bound) / abs(measured)
    return slack, ("vacuous" if slack > VACUOUS_SLACK else "tight")

"""Results: claims, metrics aggregated over seeds, and the results.json / results.md writer.

The shape of ``results.json`` is the reproduction contract of DESIGN.md. A claim's
``holds`` is always computed by code from measured numbers.
"""

from __future__ import annotations

import math
import platform
import re
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from .io import atomic_write_json, atomic_write_text, to_jsonable
from .verdicts import OUTCOMES, SOURCE_KINDS, Verdict, describe, slack_label, sources_of

REGIMES = ("paper", "below")
"""``paper``: our setting is one in which the paper states the effect; ``below``: it is not."""
TEST_SETS = ("per-seed", "shared", "none")


def _full_criterion(criterion: str, test: Verdict) -> str:
    """``criterion`` with the test's rule and its margin's source(s) appended (once)."""
    rule = test.rule()
    if rule not in criterion:
        criterion = f"{criterion}; {rule}" if criterion else rule
    srcs = [p.get("source") for p in test.parts] if test.parts else [
        test.source.to_dict() if test.source else None]  # fmt: skip
    for src in dict.fromkeys(f"{d['kind']}: {d['text']}" for d in srcs if d):
        if src not in criterion:
            criterion += f" [source, {src}]"
    return criterion


@dataclass(kw_only=True)
class Claim:
    """A statement of the paper, measured here against the strongest baseline the package has.

    Built with keywords only. Its outcome comes from ``test``, a :class:`Verdict` computed by
    :func:`superiority`, :func:`non_inferiority` or :func:`threshold` (or :func:`all_of`) on
    paired per-seed values: ``verdict`` is ``holds``, ``fails`` or ``inconclusive``, never
    typed in. ``criterion`` says what is compared; the test's rule and its margin's source
    are appended to it. What each verdict can tell about the paper (CONTRIBUTING.md, "What a
    verdict can tell"): ``regime`` (``paper``, or ``below`` with what the paper's effect
    ``needs``), ``test_set`` (whether the seeds share one test set, so the SE must include
    its items), ``rests_on`` (the premises it needs) and, for a non-inferiority, the no-op
    control in ``test`` and how far the method moved from it (``moved``).
    """

    id: str
    """Short name, e.g. ``lossless/digits``."""
    statement: str
    """What the paper claims, in one sentence, saying what the criterion tests."""
    paper: str
    """The paper's own figure for it, with its table or figure number (or where none was found)."""
    measured: str
    """Our figure, taken from the metrics (with the seeds' spread)."""
    test: Verdict
    """The test that decides the claim (see :mod:`iclr24_common.verdicts`)."""
    criterion: str = ""
    """What is compared, e.g. ``SMNN's test MSE vs the best monotone peer's``."""
    regime: str | None = None
    """``paper``: our setting is one in which the paper states the effect (its model size
    class, data, steps, hardware class); ``below``: it is not (then ``needs`` says what the
    paper's effect needs). A verdict below the regime reads "at our scale"."""
    needs: str = ""
    """For ``below``: what the paper's effect needs, in numbers, with the source, and ours,
    e.g. ``60M-1.3B params, 20k steps (paper Table 2); ours 0.9M, 240 steps``."""
    test_set: str | None = None
    """``per-seed`` (each seed draws or splits its own test data), ``shared`` (every seed is
    scored on one fixed test set: the test needs ``items=``) or ``none`` (not a score on test
    items: a time, a slope, a geometry)."""
    rests_on: tuple[str, ...] = ()
    """Ids of the premises (:class:`Premise`) this claim needs: a premise that does not hold
    makes the claim ``inconclusive``."""
    moved: str = ""
    """How far the method moved the model from the no-op control, in the method's own terms
    (e.g. ``relative weight displacement 1.2e-5``); the test records the metric's own gap."""
    verdict: str = field(init=False)
    """``holds``, ``fails`` or ``inconclusive`` (from ``test``, and the premises)."""
    holds: bool = field(init=False)
    """``verdict == "holds"``."""
    premise: str = field(init=False, default="")
    """Set when a premise it rests on did not hold: ``premise <id> <verdict>: <measured>``."""

    def __post_init__(self):
        if not isinstance(self.test, Verdict):
            raise TypeError(
                f"Claim {self.id!r}: test must be a Verdict from superiority / non_inferiority "
                "/ threshold / all_of (computed from metrics)"
            )
        if self.regime is not None and self.regime not in REGIMES:
            raise ValueError(f"Claim {self.id!r}: regime is one of {REGIMES}, not {self.regime!r}")
        if self.regime == "below" and not self.needs.strip():
            raise ValueError(f"Claim {self.id!r}: a claim below the paper's regime says what the "
                             "paper's effect needs (needs=...)")  # fmt: skip
        if self.test_set is not None and self.test_set not in TEST_SETS:
            raise ValueError(f"Claim {self.id!r}: test_set is one of {TEST_SETS}")
        if isinstance(self.rests_on, str):
            self.rests_on = (self.rests_on,)
        self.rests_on = tuple(self.rests_on)
        self.verdict = self.test.outcome
        self.holds = self.verdict == "holds"
        self.criterion = _full_criterion(self.criterion, self.test)

    def rest_on(self, premises: dict[str, Premise]) -> None:
        """Make the claim ``inconclusive`` where a premise it rests on does not hold."""
        for pid in self.rests_on:
            if pid not in premises:
                raise ValueError(f"Claim {self.id!r} rests on an unknown premise {pid!r}")
            p = premises[pid]
            if p.verdict != "holds" and not self.premise:
                self.premise = f"premise {pid} {p.verdict}: {p.measured}"
                self.verdict, self.holds = "inconclusive", False

    def to_dict(self) -> dict[str, Any]:
        d = {
            "id": self.id, "statement": self.statement, "paper": self.paper,
            "measured": self.measured, "criterion": self.criterion, "verdict": self.verdict,
            "holds": self.holds, "test": self.test.to_dict(), "regime": self.regime,
            "needs": self.needs, "test_set": self.test_set, "rests_on": list(self.rests_on),
            "moved": self.moved,
        }  # fmt: skip
        if self.premise:
            d["premise"] = self.premise
        return d


@dataclass(kw_only=True)
class Premise:
    """A precondition the claims rest on that is not a statement of the paper: the models are
    trained to convergence, the generated task is solvable, the oracle bounds every method,
    the budget rule was met. Measured, so it can fail (a :class:`Verdict` decides it); a
    premise that does not hold makes every claim that names it in ``rests_on``
    ``inconclusive``, and it is never counted as a claim of the paper. Listed apart in
    ``results.json`` (``premises``)."""

    id: str
    statement: str
    measured: str
    test: Verdict
    criterion: str = ""
    paper: str = ""
    """Where the paper or its code sets this precondition (or that it does not)."""
    verdict: str = field(init=False)
    holds: bool = field(init=False)

    def __post_init__(self):
        if not isinstance(self.test, Verdict):
            raise TypeError(f"Premise {self.id!r}: test must be a Verdict (computed from metrics)")
        self.verdict = self.test.outcome
        self.holds = self.verdict == "holds"
        self.criterion = _full_criterion(self.criterion, self.test)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "statement": self.statement, "paper": self.paper,
                "measured": self.measured, "criterion": self.criterion, "verdict": self.verdict,
                "holds": self.holds, "test": self.test.to_dict()}  # fmt: skip


def apply_premises(claims: list[Claim], premises: list[Premise]) -> None:
    """Every claim rests on its premises: one that does not hold makes it ``inconclusive``."""
    by_id = {p.id: p for p in premises}
    for c in claims:
        c.rest_on(by_id)


@dataclass(kw_only=True)
class Check:
    """An invariant of the code rather than a statement of the paper: counters agree, budgets
    are equal, a golden string matches, a guarantee or a bound that holds by construction.
    ``why`` names why it holds by construction (so a failing check is a bug, not a result).
    READMEs count claims only. A bound is made with :func:`bound_check`."""

    id: str
    statement: str
    measured: str
    criterion: str
    holds: bool
    """Whether the invariant is met (computed, never typed in)."""
    why: str
    """Why this holds by construction, e.g. ``Theorem 1: exp weights are positive``."""
    paper: str = ""
    kind: str = "invariant"
    """``invariant``, ``bound`` or ``bound (re-derived)``."""
    slack: float | None = None
    """For a bound: bound / measured."""
    label: str = ""
    """For a bound: ``tight`` (slack <= 100) or ``vacuous``."""

    def __post_init__(self):
        if isinstance(self.holds, np.bool_):
            self.holds = bool(self.holds)
        if not isinstance(self.holds, bool):
            raise TypeError(f"Check {self.id!r}: holds must be a bool computed from metrics")
        if not self.why.strip():
            raise ValueError(f"Check {self.id!r}: say why it holds by construction (why=...)")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def bound_check(*, id: str, statement: str, measured: float, bound: float, rederived: bool,
                why: str, paper: str = "", what: str = "measured") -> Check:  # fmt: skip
    """A bound as a check: ``measured <= bound``, shown with its slack (bound / measured) and
    labelled ``vacuous`` past 100x. ``rederived=True`` for a bound derived here rather than
    copied from the paper (the kind then reads ``bound (re-derived)``)."""
    slack, label = slack_label(measured, bound)
    return Check(
        id=id, statement=statement, paper=paper, why=why,
        measured=f"{what} {measured:.4g} vs bound {bound:.4g} (slack {slack:.3g}x, {label})",
        criterion=f"{what} <= bound", holds=bool(measured <= bound),
        kind="bound (re-derived)" if rederived else "bound", slack=slack, label=label,
    )  # fmt: skip


@dataclass(frozen=True)
class Gap:
    """``a - b`` over the seeds both metrics have: mean and standard error of the paired
    differences (ddof=1; 0 with one seed). ``str(gap)`` reads ``+0.040 +/- 0.012 SE (3 seeds)``."""

    mean: float
    se: float
    n: int

    def beyond_noise(self, k: float = 2.0) -> bool:
        """True when the gap is positive by more than ``k`` standard errors (needs >= 2 seeds)."""
        return self.n >= 2 and self.mean > k * self.se

    def __str__(self) -> str:
        return f"{self.mean:+.4g} +/- {self.se:.2g} SE ({self.n} seed{'s' * (self.n != 1)})"


TIMING_WORDS = ("seconds", "speedup", "time", "throughput", "per_s")


def is_timing_metric(name: str) -> bool:
    """Whether a metric measures time (its name contains seconds, speedup, time, throughput or
    per_s): such metrics vary between two runs of the same seed; every other metric must not."""
    return any(w in name for w in TIMING_WORDS)


def aggregate(values) -> dict[str, Any]:
    """Mean, sample std (ddof=1; 0 for one value) and the per-seed list of a metric."""
    vals = [float(v) for v in values]
    if not vals:
        return {"mean": float("nan"), "std": float("nan"), "per_seed": []}
    arr = np.asarray(vals, dtype=float)
    std = float(arr.std(ddof=1)) if len(arr) > 1 else 0.0
    return {"mean": float(arr.mean()), "std": std, "per_seed": vals}


class Metrics:
    """Collects ``name -> seed -> value`` and summarises over seeds.

    >>> m = Metrics(); m.add("smnn/mse", 0, 1.0); m.add("smnn/mse", 1, 3.0)
    >>> m.mean("smnn/mse")
    2.0
    """

    def __init__(self):
        self._values: dict[str, dict[int, float]] = defaultdict(dict)

    def add(self, name: str, seed: int, value: float) -> None:
        self._values[name][int(seed)] = float(value)

    def update(self, seed: int, values: dict[str, float], prefix: str = "") -> None:
        for k, v in values.items():
            self.add(prefix + k, seed, v)

    def names(self) -> list[str]:
        return list(self._values)

    def values(self, name: str) -> list[float]:
        if name not in self._values:
            raise KeyError(f"no metric {name!r}; have: {', '.join(self._values) or 'none'}")
        d = self._values[name]
        return [d[s] for s in sorted(d)]

    def by_seed(self, name: str) -> dict[int, float]:
        """``seed -> value``: what :func:`superiority` and friends pair on."""
        if name not in self._values:
            raise KeyError(f"no metric {name!r}; have: {', '.join(self._values) or 'none'}")
        return dict(self._values[name])

    def mean(self, name: str) -> float:
        return aggregate(self.values(name))["mean"]

    def std(self, name: str) -> float:
        return aggregate(self.values(name))["std"]

    def se(self, name: str) -> float:
        """Standard error of the mean over seeds (std / sqrt(n); 0 with one seed)."""
        vals = self.values(name)
        return self.std(name) / math.sqrt(len(vals)) if len(vals) > 1 else 0.0

    def gap(self, a: str, b: str) -> Gap:
        """Paired difference ``a - b`` over the seeds both metrics were measured on."""
        da, db = self._values[a] if a in self else None, self._values[b] if b in self else None
        if da is None or db is None:
            missing = a if da is None else b
            raise KeyError(f"no metric {missing!r}; have: {', '.join(self._values) or 'none'}")
        diffs = np.array([da[s] - db[s] for s in sorted(set(da) & set(db))], dtype=float)
        if diffs.size == 0:
            raise ValueError(f"{a!r} and {b!r} share no seed")
        se = float(diffs.std(ddof=1) / math.sqrt(diffs.size)) if diffs.size > 1 else 0.0
        return Gap(float(diffs.mean()), se, int(diffs.size))

    def fmt(self, name: str, digits: int = 4) -> str:
        """``mean +/- std`` as text, for a claim's ``measured`` field."""
        a = aggregate(self.values(name))
        return f"{a['mean']:.{digits}g} +/- {a['std']:.2g}"

    def summary(self) -> dict[str, dict[str, Any]]:
        out = {}
        for name, d in self._values.items():
            agg = aggregate([d[s] for s in sorted(d)])
            agg["seeds"] = sorted(d)
            out[name] = agg
        return out

    def __contains__(self, name: str) -> bool:
        return name in self._values

    def __len__(self) -> int:
        return len(self._values)


def git_commit(cwd: str | Path | None = None) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def environment_record(package: str | None = None, device: str | None = None) -> dict[str, Any]:
    """Versions and machine facts that a reader needs to compare two runs."""
    import os

    from . import threads

    env: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "numpy": np.__version__,
        "torch": _version("torch"),
        "iclr24-common": _version("iclr24-common"),
        "git_commit": git_commit(Path(__file__).parent),
        "argv": sys.argv,
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "wait_policy_before_torch": threads.POLICY_BEFORE_TORCH,
    }
    if package:
        env[package] = _version(package)
    if device:
        env["device"] = device
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        env["torch_threads"] = torch.get_num_threads()
        if torch.cuda.is_available():
            env["cuda"] = torch.version.cuda
            env["gpu"] = torch.cuda.get_device_name(0)
    return env


def _fmt_num(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    return f"{x:.4g}"


def below(c: dict) -> bool:
    """Whether a claim was measured below the paper's regime (its verdict reads "at our
    scale")."""
    return c.get("regime") == "below"


def verdict_word(c: dict) -> str:
    """A claim's verdict as a table cell: ``holds``, ``**fails**`` or ``inconclusive (why)``;
    below the paper's regime it reads ``... at our scale``."""
    v = c["verdict"]
    reason = c.get("premise") or (c.get("test") or {}).get("reason", "")
    word = "**fails**" if v == "fails" else v
    if v == "inconclusive" and reason:
        word = f"inconclusive ({reason})"
    return f"{word} at our scale" if below(c) else word


def test_summary(c: dict) -> str:
    """The deciding numbers of a claim's test: ``+0.04 +/- 0.012 SE (3 seeds)`` (and the
    control, with how far the method moved from it)."""
    t = c.get("test")
    if not t:
        return ""
    s = describe(t)
    ctl = t.get("control")
    if ctl:
        s += f"; control {ctl['name']}: {ctl['outcome']} ({_signed(ctl['estimate'])} +/- {_fmt_num(ctl['se'])})"
        if ctl.get("moved") is not None:
            s += f", moved {_signed(ctl['moved'])} +/- {_fmt_num(ctl.get('moved_se'))} from it"
    if c.get("moved"):
        s += f" ({c['moved']})"
    return s


def _signed(x: Any) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{x:+.3g}"


def count_verdicts(claims: list[dict], regime: str | None = None) -> dict[str, int]:
    """``{"holds": h, "fails": f, "inconclusive": i}`` over a results file's claims (those of
    one ``regime`` when given: ``paper`` or ``below``)."""
    out = dict.fromkeys(OUTCOMES, 0)
    for c in claims:
        if regime is None or (c.get("regime") or "paper") == regime:
            out[c["verdict"]] += 1
    return out


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def regime_cell(c: dict) -> str:
    """``paper``, or ``below: <what the paper's effect needs>``."""
    return f"below: {c.get('needs', '')}" if below(c) else (c.get("regime") or "?")


def claims_rows(claims: list[dict]) -> list[str]:
    """The claims as Markdown table rows (header included)."""
    rows = ["| claim | verdict | measured | paired test (2 SE) | criterion | paper | regime |",
            "|---|---|---|---|---|---|---|"]  # fmt: skip
    for c in claims:
        rows.append(f"| {c['id']} | {verdict_word(c)} | {_cell(c['measured'])} | "
                    f"{_cell(test_summary(c))} | {_cell(c['criterion'])} | {_cell(c['paper'])} | "
                    f"{_cell(regime_cell(c))} |")  # fmt: skip
    return rows


def premises_rows(premises: list[dict]) -> list[str]:
    """The premises as Markdown table rows: what the claims rest on, and whether it held."""
    rows = ["| premise | verdict | measured | test (2 SE) | criterion |", "|---|---|---|---|---|"]
    for p in premises:
        word = "**fails**" if p["verdict"] == "fails" else p["verdict"]
        rows.append(f"| {p['id']} | {word} | {_cell(p['measured'])} | "
                    f"{_cell(describe(p['test']))} | {_cell(p['criterion'])} |")  # fmt: skip
    return rows


def checks_rows(checks: list[dict]) -> list[str]:
    """The checks as Markdown table rows: a bound shows its kind, slack and label."""
    rows = ["| check | passes | measured | criterion | why it holds by construction |",
            "|---|---|---|---|---|"]  # fmt: skip
    for c in checks:
        kind = c.get("kind", "invariant")
        name = c["id"] if kind == "invariant" else f"{c['id']} ({kind}, {c.get('label', '')})"
        mark = "yes" if c["holds"] else "**no**"
        rows.append(f"| {name} | {mark} | {_cell(c['measured'])} | {_cell(c['criterion'])} | "
                    f"{_cell(c.get('why', ''))} |")  # fmt: skip
    return rows


def counts_line(claims: list[dict], regime: str | None = None) -> str:
    n = count_verdicts(claims, regime)
    return (f"{n['holds']} hold, {n['fails']} fail, {n['inconclusive']} inconclusive "
            f"(of {sum(n.values())})")  # fmt: skip


def regime_lines(claims: list[dict]) -> list[str]:
    """The two lines a package's results open with: the verdicts in the paper's regime, and
    those at our scale (below it: not failures of the paper)."""
    return [f"**In the paper's regime: {counts_line(claims, 'paper')}.**",
            f"**At our scale (below the paper's regime; not a verdict on the paper): "
            f"{counts_line(claims, 'below')}.**"]  # fmt: skip


def results_markdown(results: dict[str, Any]) -> str:
    """The results as a Markdown page: header, claims, premises, checks and metrics tables."""
    claims, checks = results["claims"], results.get("checks", [])
    premises = results.get("premises", [])
    lines = [
        f"# {results['package']} {results.get('version', '')}: {results['paper']['title']}",
        "",
        f"preset `{results['preset']}`, seeds {results['seeds']}, device `{results['device']}`, "
        f"{results.get('threads', '?')} threads, wall time {results['wall_seconds']:.1f} s, "
        f"{results.get('date', '')}",
        "",
        *(f"{ln}  " for ln in regime_lines(claims)),
        "",
        f"## Claims ({counts_line(claims)})",
        "",
        *claims_rows(claims),
    ]
    if premises:
        ok = sum(p["holds"] for p in premises)
        lines += ["", f"## Premises ({ok} of {len(premises)} hold; not claims of the paper)", "",
                  *premises_rows(premises)]  # fmt: skip
    if checks:
        ok = sum(c["holds"] for c in checks)
        lines += ["", f"## Checks ({ok} of {len(checks)} pass)", "", *checks_rows(checks)]
    lines += ["", "## Metrics", "", "| metric | mean | std | per seed |", "|---|---|---|---|"]
    for name, m in results["metrics"].items():
        per = ", ".join(_fmt_num(v) for v in m["per_seed"])
        lines.append(f"| {name} | {_fmt_num(m['mean'])} | {_fmt_num(m['std'])} | {per} |")
    return "\n".join(lines) + "\n"


def claims_table(claims: list[Claim] | list[Check] | list[Premise] | list[dict],
                 title: str = "claim") -> str:  # fmt: skip
    """A plain-text table of claims (or checks, or premises) for the terminal."""
    rows = [c.to_dict() if isinstance(c, Claim | Check | Premise) else c for c in claims]
    if not rows:
        return f"(no {title}s)"
    w = max(len(r["id"]) for r in rows + [{"id": title}])
    out = [
        f"{title:<{w}}  {'passes' if title == 'check' else 'verdict':<12}  measured  [criterion]"
    ]
    for r in rows:
        word = r.get("verdict") or ("yes" if r["holds"] else "NO")
        word = word.upper() if word == "fails" else word
        if below(r):
            word += " (at our scale)"
        test = f" ({test_summary(r)})" if r.get("test") else ""
        why = f" {{{r['premise']}}}" if r.get("premise") else ""
        out.append(f"{r['id']:<{w}}  {word:<12}  {r['measured']}{test}{why}  [{r['criterion']}]")
    return "\n".join(out)


def write_results(
    out_dir: str | Path,
    *,
    package: str,
    version: str,
    paper: dict[str, Any],
    preset: str,
    seeds: list[int],
    device: str,
    wall_seconds: float,
    metrics: Metrics | dict[str, Any],
    claims: list[Claim],
    checks: list[Check] = (),
    premises: list[Premise] = (),
    config: dict[str, Any] | None = None,
    threads: int | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write ``results.json`` and ``results.md`` atomically into ``out_dir``; return the dict.
    Claims first rest on their premises (:func:`apply_premises`)."""
    for c in claims:
        if not isinstance(c, Claim):
            raise TypeError(f"{getattr(c, 'id', c)!r} is not a Claim: checks go in checks")
    for c in checks:
        if not isinstance(c, Check):
            raise TypeError(f"{getattr(c, 'id', c)!r} is not a Check: claims go in claims")
    for p in premises:
        if not isinstance(p, Premise):
            raise TypeError(f"{getattr(p, 'id', p)!r} is not a Premise")
    apply_premises(list(claims), list(premises))
    summary = metrics.summary() if isinstance(metrics, Metrics) else metrics
    results: dict[str, Any] = {
        "package": package,
        "version": version,
        "paper": paper,
        "preset": preset,
        "seeds": list(seeds),
        "device": str(device),
        "threads": threads,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "wall_seconds": float(wall_seconds),
        "environment": environment_record(package, str(device)),
        "config": config or {},
        "metrics": summary,
        "claims": [c.to_dict() for c in claims],
        "premises": [p.to_dict() for p in premises],
        "checks": [c.to_dict() for c in checks],
        "verdicts_version": VERDICTS_VERSION if _declares_v4(claims) else 3,
    }
    if extra:
        results.update({k: v for k, v in extra.items() if k not in results})
    results = to_jsonable(results)
    problems = contract_problems(results)
    if problems:
        raise ValueError("results break the contract: " + "; ".join(problems))
    out = Path(out_dir)
    atomic_write_json(out / "results.json", results)
    atomic_write_text(out / "results.md", results_markdown(results))
    return results


VERDICTS_VERSION = 4
"""The claims layer a results file keeps: 4 adds regime, sources, premises, no-op controls
and test-set noise (CONTRIBUTING.md, "What a verdict can tell")."""


def _declares_v4(claims) -> bool:
    return any(c.regime is not None for c in claims)


REQUIRED_KEYS = (
    "package",
    "version",
    "paper",
    "preset",
    "seeds",
    "device",
    "threads",
    "wall_seconds",
    "environment",
    "config",
    "metrics",
    "claims",
    "checks",
)
CLAIM_KEYS = ("id", "statement", "paper", "measured", "criterion", "verdict", "holds", "test")
CHECK_KEYS = ("id", "statement", "measured", "criterion", "holds", "why")
TEST_KEYS = ("kind", "estimate", "se", "n", "margin")
V4_CLAIM_KEYS = ("regime", "needs", "test_set", "rests_on")
# a criterion that compares with nothing but an inequality: "mean >= 0", "a <= b" (no margin, no SE)
BARE_CRITERION = re.compile(r"(>=\s*0(\.0*)?\b|<=)")


def _source_problems(what: str, test: dict[str, Any]) -> list[str]:
    out = []
    for src in sources_of(test):
        if not isinstance(src, dict) or src.get("kind") not in SOURCE_KINDS or not str(
                src.get("text", "")).strip():  # fmt: skip
            out.append(f"{what}: a margin, tolerance or threshold without a source "
                       "(Source.paper / .derived / .ours)")  # fmt: skip
            break
    return out


def _v4_problems(res: dict[str, Any]) -> list[str]:
    """The rules of "What a verdict can tell": regime (and needs below it), a source for every
    criterion, premises that exist and decide, a no-op control on every non-inferiority, and
    item-level SE on a shared test set."""
    problems = []
    premises = {p.get("id"): p for p in res.get("premises", [])}
    for p in res.get("premises", []):
        if not isinstance(p.get("test"), dict) or p.get("verdict") not in OUTCOMES:
            problems.append(f"premise {p.get('id')!r}: no test or verdict")
        else:
            problems += _source_problems(f"premise {p.get('id')!r}", p["test"])
    for c in res.get("claims", []):
        cid, t = c.get("id"), c.get("test") if isinstance(c.get("test"), dict) else {}
        missing = [k for k in V4_CLAIM_KEYS if k not in c]
        if missing:
            problems.append(f"claim {cid!r}: missing {missing}")
            continue
        if c["regime"] not in REGIMES:
            problems.append(f"claim {cid!r}: regime {c['regime']!r} (paper or below)")
        elif c["regime"] == "below" and not str(c["needs"]).strip():
            problems.append(f"claim {cid!r}: below the paper's regime without what it needs")
        problems += _source_problems(f"claim {cid!r}", t)
        for part in t.get("parts") or [t]:
            if part.get("kind") == "non-inferiority" and not part.get("control"):
                problems.append(f"claim {cid!r}: a non-inferiority without a no-op control")
                break
        if c["test_set"] not in TEST_SETS:
            problems.append(f"claim {cid!r}: test_set {c['test_set']!r} (one of {TEST_SETS})")
        elif c["test_set"] == "shared" and any(
                p.get("se_basis") != "items" for p in t.get("parts") or [t]):  # fmt: skip
            problems.append(f"claim {cid!r}: scored on a shared test set without item-level SE "
                            "(items=)")  # fmt: skip
        for pid in c["rests_on"]:
            if pid not in premises:
                problems.append(f"claim {cid!r}: rests on an unknown premise {pid!r}")
            elif premises[pid].get("verdict") != "holds" and c["verdict"] != "inconclusive":
                problems.append(f"claim {cid!r}: premise {pid!r} did not hold, yet the claim "
                                f"{c['verdict']}")  # fmt: skip
    return problems


def contract_problems(res: dict[str, Any], v4: bool | None = None) -> list[str]:
    """What in a results dict breaks the contract (empty when it keeps it): every required
    key; metrics as mean/std/per_seed; every claim with a verdict from a test (paired SE on
    every comparison of >= 2 seeds, no bare ``>= 0`` / ``<=`` criterion without SE); every
    check naming why it holds by construction; at least one claim; unique ids. With ``v4``
    (default: what the file declares in ``verdicts_version``) also the rules of "What a
    verdict can tell" (:func:`_v4_problems`)."""
    problems = [f"missing key {k!r}" for k in REQUIRED_KEYS if k not in res]
    for name, m in res.get("metrics", {}).items():
        if not {"mean", "std", "per_seed"} <= set(m):
            problems.append(f"metric {name!r} lacks mean/std/per_seed")
    for c in res.get("claims", []):
        cid = c.get("id")
        missing = [k for k in CLAIM_KEYS if k not in c]
        if missing:
            problems.append(f"claim {cid!r}: missing {missing}")
            continue
        if c["verdict"] not in OUTCOMES or c["holds"] is not (c["verdict"] == "holds"):
            problems.append(f"claim {cid!r}: verdict {c['verdict']!r} / holds {c['holds']!r}")
        t = c["test"] if isinstance(c["test"], dict) else {}
        if any(k not in t for k in TEST_KEYS):
            problems.append(f"claim {cid!r}: test lacks {[k for k in TEST_KEYS if k not in t]}")
        elif t["kind"] in ("superiority", "non-inferiority") and t["n"] >= 2 and t["se"] is None:
            problems.append(f"claim {cid!r}: a comparison of {t['n']} seeds without a paired SE")
        if BARE_CRITERION.search(c["criterion"]) and "SE" not in c["criterion"]:
            problems.append(f"claim {cid!r}: criterion {c['criterion']!r} has no margin or SE")
    for c in res.get("checks", []):
        missing = [k for k in CHECK_KEYS if k not in c]
        if missing or not isinstance(c.get("holds"), bool) or not str(c.get("why", "")).strip():
            problems.append(f"check {c.get('id')!r}: missing {missing}, non-bool holds or no why")
    if not res.get("claims"):
        problems.append("no claims")
    ids = [
        c.get("id") for c in res.get("claims", []) + res.get("premises", []) + res.get("checks", [])
    ]
    if len(set(ids)) != len(ids):
        problems.append("duplicate claim/premise/check ids")
    if v4 is None:
        v4 = res.get("verdicts_version", 3) >= VERDICTS_VERSION
    if v4:
        problems += _v4_problems(res)
    return problems


def load_results(out_dir: str | Path) -> dict[str, Any]:
    """Read ``out_dir/results.json`` (or a results file itself) and check it keeps the
    reproduction contract (:func:`contract_problems`). Raises ``ValueError`` naming what is
    wrong (for tests and for tools that collect runs)."""
    import json

    path = Path(out_dir)
    path = path / "results.json" if path.is_dir() else path
    res = json.loads(path.read_text())
    problems = contract_problems(res)
    if problems:
        raise ValueError(f"{path} breaks the results contract: " + "; ".join(problems))
    return res

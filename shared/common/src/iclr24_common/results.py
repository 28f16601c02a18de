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
from .verdicts import OUTCOMES, Verdict, describe, slack_label


@dataclass(kw_only=True)
class Claim:
    """A statement of the paper, measured here against the strongest baseline the package has.

    Built with keywords only. Its outcome comes from ``test``, a :class:`Verdict` computed by
    :func:`superiority`, :func:`non_inferiority` or :func:`threshold` (or :func:`all_of`) on
    paired per-seed values: ``verdict`` is ``holds``, ``fails`` or ``inconclusive``, never
    typed in. ``criterion`` says what is compared; the test's rule is appended to it.
    """

    id: str
    """Short name, e.g. ``lossless/digits``."""
    statement: str
    """What the paper claims, in one sentence."""
    paper: str
    """The paper's own figure for it, with its table or figure number (or where none was found)."""
    measured: str
    """Our figure, taken from the metrics (with the seeds' spread)."""
    test: Verdict
    """The test that decides the claim (see :mod:`iclr24_common.verdicts`)."""
    criterion: str = ""
    """What is compared, e.g. ``SMNN's test MSE vs the best monotone peer's``."""
    verdict: str = field(init=False)
    """``holds``, ``fails`` or ``inconclusive`` (from ``test``)."""
    holds: bool = field(init=False)
    """``verdict == "holds"``."""

    def __post_init__(self):
        if not isinstance(self.test, Verdict):
            raise TypeError(
                f"Claim {self.id!r}: test must be a Verdict from superiority / non_inferiority "
                "/ threshold / all_of (computed from metrics)"
            )
        self.verdict = self.test.outcome
        self.holds = self.verdict == "holds"
        rule = self.test.rule()
        if rule not in self.criterion:
            self.criterion = f"{self.criterion}; {rule}" if self.criterion else rule

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "statement": self.statement, "paper": self.paper,
            "measured": self.measured, "criterion": self.criterion, "verdict": self.verdict,
            "holds": self.holds, "test": self.test.to_dict(),
        }  # fmt: skip


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


def verdict_word(c: dict) -> str:
    """A claim's verdict as a table cell: ``holds``, ``**fails**`` or ``inconclusive (why)``."""
    v = c["verdict"]
    reason = (c.get("test") or {}).get("reason", "")
    if v == "fails":
        return "**fails**"
    if v == "inconclusive":
        return f"inconclusive ({reason})" if reason else "inconclusive"
    return v


def test_summary(c: dict) -> str:
    """The deciding numbers of a claim's test: ``+0.04 +/- 0.012 SE (3 seeds)`` (and the control)."""
    t = c.get("test")
    if not t:
        return ""
    s = describe(t)
    ctl = t.get("control")
    if ctl:
        s += f"; control {ctl['name']}: {ctl['outcome']} ({ctl['estimate']:+.3g} +/- {ctl['se']:.2g})"
    return s


def count_verdicts(claims: list[dict]) -> dict[str, int]:
    """``{"holds": h, "fails": f, "inconclusive": i}`` over a results file's claims."""
    out = dict.fromkeys(OUTCOMES, 0)
    for c in claims:
        out[c["verdict"]] += 1
    return out


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def claims_rows(claims: list[dict]) -> list[str]:
    """The claims as Markdown table rows (header included)."""
    rows = ["| claim | verdict | measured | paired test (2 SE) | criterion | paper |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    for c in claims:
        rows.append(f"| {c['id']} | {verdict_word(c)} | {_cell(c['measured'])} | "
                    f"{_cell(test_summary(c))} | {_cell(c['criterion'])} | {_cell(c['paper'])} |")  # fmt: skip
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


def counts_line(claims: list[dict]) -> str:
    n = count_verdicts(claims)
    return (f"{n['holds']} hold, {n['fails']} fail, {n['inconclusive']} inconclusive "
            f"(of {len(claims)})")  # fmt: skip


def results_markdown(results: dict[str, Any]) -> str:
    """The results as a Markdown page: header, claims, checks and metrics tables."""
    claims, checks = results["claims"], results.get("checks", [])
    lines = [
        f"# {results['package']} {results.get('version', '')}: {results['paper']['title']}",
        "",
        f"preset `{results['preset']}`, seeds {results['seeds']}, device `{results['device']}`, "
        f"{results.get('threads', '?')} threads, wall time {results['wall_seconds']:.1f} s, "
        f"{results.get('date', '')}",
        "",
        f"## Claims ({counts_line(claims)})",
        "",
        *claims_rows(claims),
    ]
    if checks:
        ok = sum(c["holds"] for c in checks)
        lines += ["", f"## Checks ({ok} of {len(checks)} pass)", "", *checks_rows(checks)]
    lines += ["", "## Metrics", "", "| metric | mean | std | per seed |", "|---|---|---|---|"]
    for name, m in results["metrics"].items():
        per = ", ".join(_fmt_num(v) for v in m["per_seed"])
        lines.append(f"| {name} | {_fmt_num(m['mean'])} | {_fmt_num(m['std'])} | {per} |")
    return "\n".join(lines) + "\n"


def claims_table(claims: list[Claim] | list[Check] | list[dict], title: str = "claim") -> str:
    """A plain-text table of claims (or checks) for the terminal."""
    rows = [c.to_dict() if isinstance(c, Claim | Check) else c for c in claims]
    if not rows:
        return f"(no {title}s)"
    w = max(len(r["id"]) for r in rows + [{"id": title}])
    out = [
        f"{title:<{w}}  {'verdict' if title == 'claim' else 'passes':<12}  measured  [criterion]"
    ]
    for r in rows:
        word = r.get("verdict") or ("yes" if r["holds"] else "NO")
        word = word.upper() if word == "fails" else word
        test = f" ({test_summary(r)})" if r.get("test") else ""
        out.append(f"{r['id']:<{w}}  {word:<12}  {r['measured']}{test}  [{r['criterion']}]")
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
    config: dict[str, Any] | None = None,
    threads: int | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write ``results.json`` and ``results.md`` atomically into ``out_dir``; return the dict."""
    for c in claims:
        if not isinstance(c, Claim):
            raise TypeError(f"{getattr(c, 'id', c)!r} is not a Claim: checks go in checks")
    for c in checks:
        if not isinstance(c, Check):
            raise TypeError(f"{getattr(c, 'id', c)!r} is not a Check: claims go in claims")
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
        "checks": [c.to_dict() for c in checks],
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
# a criterion that compares with nothing but an inequality: "mean >= 0", "a <= b" (no margin, no SE)
BARE_CRITERION = re.compile(r"(>=\s*0(\.0*)?\b|<=)")


def contract_problems(res: dict[str, Any]) -> list[str]:
    """What in a results dict breaks the contract (empty when it keeps it): every required
    key; metrics as mean/std/per_seed; every claim with a verdict from a test (paired SE on
    every comparison of >= 2 seeds, no bare ``>= 0`` / ``<=`` criterion without SE); every
    check naming why it holds by construction; at least one claim; unique ids."""
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
    ids = [c.get("id") for c in res.get("claims", []) + res.get("checks", [])]
    if len(set(ids)) != len(ids):
        problems.append("duplicate claim/check ids")
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

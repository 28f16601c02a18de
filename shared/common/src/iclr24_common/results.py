"""Results: claims, metrics aggregated over seeds, and the results.json / results.md writer.

The shape of ``results.json`` is the reproduction contract of DESIGN.md. A claim's
``holds`` is always computed by code from measured numbers.
"""

from __future__ import annotations

import math
import platform
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from .io import atomic_write_json, atomic_write_text, to_jsonable


@dataclass(kw_only=True)
class Claim:
    """A statement of the paper, measured here against the strongest baseline the package has.

    Built with keywords only. ``holds`` is computed from the metrics, never typed in: a claim
    that fails at this scale is reported as failing.
    """

    id: str
    """Short name, e.g. ``lossless/digits``."""
    statement: str
    """What the paper claims, in one sentence."""
    paper: str
    """The paper's own figure for it, with its table or figure number (or where none was found)."""
    measured: str
    """Our figure, taken from the metrics (with the seeds' spread)."""
    criterion: str
    """The test applied, e.g. ``gap >= 2.0 points and > 2 SE, mean of 3 seeds``."""
    holds: bool
    """Whether ``criterion`` is met by ``measured`` (computed, never typed in)."""

    def __post_init__(self):
        if isinstance(self.holds, np.bool_):
            self.holds = bool(self.holds)
        if not isinstance(self.holds, bool):
            raise TypeError(
                f"{type(self).__name__} {self.id!r}: holds must be a bool computed from metrics"
            )


@dataclass(kw_only=True)
class Check(Claim):
    """An invariant of the code rather than a statement of the paper: counters agree, budgets
    are equal, a golden string matches, a guarantee holds by construction. Same shape as a
    :class:`Claim` (``paper`` may stay empty); READMEs count claims only."""

    paper: str = ""


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


def environment_record(package: str | None = None, device: str | None = None) -> dict[str, Any]:
    """Versions and machine facts that a reader needs to compare two runs."""
    import os

    env: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
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


def _verdict_rows(items: list[dict], with_paper: bool) -> list[str]:
    head = (
        "| claim | holds | measured | criterion | paper |"
        if with_paper
        else ("| check | holds | measured | criterion |")
    )
    rows = [head, "|---|---|---|---|---|" if with_paper else "|---|---|---|---|"]
    for c in items:
        mark = "yes" if c["holds"] else "**no**"
        row = f"| {c['id']} | {mark} | {c['measured']} | {c['criterion']} |"
        rows.append(row + (f" {c['paper']} |" if with_paper else ""))
    return rows


def results_markdown(results: dict[str, Any]) -> str:
    """The results as a Markdown page: header, claims, checks and metrics tables."""
    claims, checks = results["claims"], results.get("checks", [])
    held = sum(c["holds"] for c in claims)
    lines = [
        f"# {results['package']} {results.get('version', '')}: {results['paper']['title']}",
        "",
        f"preset `{results['preset']}`, seeds {results['seeds']}, device `{results['device']}`, "
        f"{results.get('threads', '?')} threads, wall time {results['wall_seconds']:.1f} s, "
        f"{results.get('date', '')}",
        "",
        f"## Claims ({held} of {len(claims)} hold)",
        "",
        *_verdict_rows(claims, with_paper=True),
    ]
    if checks:
        ok = sum(c["holds"] for c in checks)
        lines += ["", f"## Checks ({ok} of {len(checks)} pass)", "", *_verdict_rows(checks, False)]
    lines += ["", "## Metrics", "", "| metric | mean | std | per seed |", "|---|---|---|---|"]
    for name, m in results["metrics"].items():
        per = ", ".join(_fmt_num(v) for v in m["per_seed"])
        lines.append(f"| {name} | {_fmt_num(m['mean'])} | {_fmt_num(m['std'])} | {per} |")
    return "\n".join(lines) + "\n"


def claims_table(claims: list[Claim] | list[dict], title: str = "claim") -> str:
    """A plain-text table of claims (or checks) for the terminal."""
    rows = [asdict(c) if isinstance(c, Claim) else c for c in claims]
    if not rows:
        return f"(no {title}s)"
    w = max(len(r["id"]) for r in rows + [{"id": title}])
    out = [f"{title:<{w}}  holds  measured  [criterion]"]
    for r in rows:
        out.append(
            f"{r['id']:<{w}}  {'yes' if r['holds'] else 'NO ':<5}  {r['measured']}  [{r['criterion']}]"
        )
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
        if isinstance(c, Check):
            raise TypeError(f"{c.id!r} is a Check: pass it in checks, not claims")
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
        "claims": [asdict(c) for c in claims],
        "checks": [asdict(c) for c in checks],
    }
    if extra:
        results.update({k: v for k, v in extra.items() if k not in results})
    results = to_jsonable(results)
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
CLAIM_KEYS = ("id", "statement", "paper", "measured", "criterion", "holds")


def load_results(out_dir: str | Path) -> dict[str, Any]:
    """Read ``out_dir/results.json`` and check it keeps the reproduction contract: every
    required key, metrics as mean/std/per_seed, claims and checks complete with a bool
    ``holds``, at least one claim. Raises ``ValueError`` naming what is wrong (for tests and
    for tools that collect runs)."""
    import json

    path = Path(out_dir) / "results.json"
    res = json.loads(path.read_text())
    problems = [f"missing key {k!r}" for k in REQUIRED_KEYS if k not in res]
    for name, m in res.get("metrics", {}).items():
        if not {"mean", "std", "per_seed"} <= set(m):
            problems.append(f"metric {name!r} lacks mean/std/per_seed")
    for kind in ("claims", "checks"):
        for c in res.get(kind, []):
            missing = [k for k in CLAIM_KEYS if k not in c]
            if missing or not isinstance(c.get("holds"), bool):
                problems.append(f"{kind[:-1]} {c.get('id')!r}: missing {missing} or non-bool holds")
    if not res.get("claims"):
        problems.append("no claims")
    ids = [c.get("id") for c in res.get("claims", []) + res.get("checks", [])]
    if len(set(ids)) != len(ids):
        problems.append("duplicate claim/check ids")
    if problems:
        raise ValueError(f"{path} breaks the results contract: " + "; ".join(problems))
    return res

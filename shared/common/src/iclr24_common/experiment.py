"""The experiment protocol: one command line for every package, built from its
``experiment`` module.

A package's ``experiment.py`` defines

    PAPER    = Paper(title=..., authors=..., arxiv=..., code=...)
    PRESETS  = {"smoke": Preset(...), "default": Preset(...), "paper": Preset(...)}
               # frozen dataclasses; each has a ``seeds`` field
    def run(ctx: RunContext) -> Report: ...
    def add_arguments(parser): ...      # optional: options that change the preset
    DOWNLOAD = "what --download fetches" # optional: None refuses --download
    USES_TORCH = True                    # optional: False for NumPy/SciPy-only packages
    PAPER_NEEDS_DATA = True              # optional: False when the paper preset generates its data
    COMMANDS = {"name": Command(...)}    # optional: extra sub-commands

    app = ExperimentApp.from_module(__name__)
    main = app.main                      # the console script: iclr24-<slug> = "...experiment:main"

and gets ``iclr24-<slug> reproduce [--preset] [--seeds] [--device] [--threads] [--out]
[--data-dir] [--strict] [--download] [--resume] [--set FIELD=VALUE] [--print-config]``.

Every option that changes the preset is applied with ``dataclasses.replace`` before the run,
so the preset the claims read is the preset that ran; ``results.json`` records it under
``config``. Finished units of work (``ctx.cached``) are stored under ``--out/units`` and
reused by ``--resume``. Exit codes: 0 ok, 1 a claim does not hold under ``--strict``,
2 bad input (one line, no traceback), 130 interrupted (what finished stays on disk).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import pickle
import re
import sys
import time
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from .data import MissingDataError, data_dir
from .device import DeviceError, resolve_device
from .dist import is_main_process
from .figures import save_figure
from .io import atomic_write_bytes, atomic_write_json, to_jsonable
from .logs import get_logger, log_to_file, progress
from .results import Check, Claim, Metrics, claims_table, count_verdicts, git_commit, write_results
from .threads import available_cores, set_threads

T = TypeVar("T")
PRESET_DEST = "preset:"  # argparse dests that name a preset field
INTERRUPT_ENV = "ICLR24_INTERRUPT_AFTER_UNITS"  # testing aid: Ctrl-C after N computed units


class UsageError(ValueError):
    """Bad input from the user: reported as one line, exit code 2."""


class MissingDependencyError(UsageError):
    """An optional Python package or a system library is missing; the message names the
    one command that installs it."""


@dataclass(frozen=True, kw_only=True)
class Paper:
    """The paper a package reproduces."""

    title: str
    authors: str
    """Surnames as the paper lists them, e.g. ``"Lim, Zhu, Selfridge & Kasim"``."""
    venue: str = "ICLR 2024"
    arxiv: str | None = None
    """arXiv id, e.g. ``"2309.12252"``."""
    openreview: str | None = None
    """OpenReview forum id, where the paper has no arXiv version (or as well)."""
    code: str | None = None
    """The official code's URL, where there is one."""

    @property
    def url(self) -> str:
        if self.arxiv:
            return f"https://arxiv.org/abs/{self.arxiv}"
        if self.openreview:
            return f"https://openreview.net/forum?id={self.openreview}"
        return ""

    def reference(self) -> str:
        """``Title (Authors, ICLR 2024, arXiv 2309.12252)``."""
        where = f"arXiv {self.arxiv}" if self.arxiv else f"OpenReview {self.openreview}"
        return f"{self.title} ({self.authors}, {self.venue}, {where})"


@dataclass
class Report:
    """What a package's ``run`` returns."""

    metrics: Metrics
    claims: list[Claim]
    """Statements of the paper measured against the strongest baseline."""
    checks: list[Check] = field(default_factory=list)
    """Invariants of the code (counters, budgets, golden strings)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """More keys for ``results.json``."""


@dataclass
class RunContext:
    """What a package's ``run`` receives."""

    package: str
    preset_name: str
    preset: Any
    """The preset dataclass after every command-line override (what the claims must read)."""
    device: str
    threads: int
    out_dir: Path
    data_dir: Path
    download: bool
    resume: bool
    strict: bool
    args: argparse.Namespace
    log: logging.Logger
    units_reused: int = 0
    units_computed: int = 0

    @property
    def seeds(self) -> list[int]:
        return list(self.preset.seeds)

    @property
    def torch_device(self):
        import torch

        return torch.device(self.device)

    def path(self, name: str) -> Path:
        return self.out_dir / name

    def cached(self, key: str, fn: Callable[[], T]) -> T:
        """Run ``fn`` once per ``key`` (a seed, a measurement) and keep its result under
        ``--out/units``; with ``--resume``, a unit finished by an earlier run is read back
        instead of recomputed. Results are pickled: any Python value works."""
        path = self._unit_path(key)
        if self.resume and path.exists():
            self.units_reused += 1
            self.log.info("resume: reusing %s", key)
            return pickle.loads(path.read_bytes())
        value = fn()
        if is_main_process():
            atomic_write_bytes(path, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        self.units_computed += 1
        stop_after = os.environ.get(INTERRUPT_ENV)
        if stop_after and self.units_computed >= int(stop_after):
            raise KeyboardInterrupt(f"{INTERRUPT_ENV}={stop_after}")
        return value

    def cached_parallel(self, jobs: dict[str, Callable[[], T]], workers: int | None = None,
                        desc: str = "units") -> dict[str, T]:  # fmt: skip
        """:meth:`cached` for independent units run side by side. The units not finished
        (all of them without ``--resume``) run in ``workers`` processes (default: the run's
        threads), one thread each; each unit is stored the moment it ends, so an interruption
        keeps every finished one. Every ``fn`` must pickle (a module-level function or a
        ``functools.partial`` of one) and must seed itself: the results then equal a
        one-thread serial run's. With one worker (one core) the units run here, in order."""
        workers = min(workers or self.threads, len(jobs))
        if workers <= 1 or not is_main_process():
            return {key: self.cached(key, fn) for key, fn in jobs.items()}
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        done = {key: self.cached(key, fn) for key, fn in jobs.items()
                if self.resume and self._unit_path(key).exists()}  # fmt: skip
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=set_threads, initargs=(1,))  # fmt: skip
        bar = progress(total=len(jobs), desc=f"{desc} ({workers} processes)")
        bar.update(len(done))
        try:
            futures = {pool.submit(fn): key for key, fn in jobs.items() if key not in done}
            for future in as_completed(futures):
                done[futures[future]] = self.cached(futures[future], future.result)
                bar.update(1)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            bar.close()
        pool.shutdown()
        return {key: done[key] for key in jobs}

    def _unit_path(self, key: str) -> Path:
        return self.out_dir / "units" / (_escape(key) + ".pkl")

    def save_json(self, name: str, obj: Any) -> Path:
        """Atomic JSON write into the run directory (rank 0 only)."""
        if is_main_process():
            return atomic_write_json(self.path(name), obj)
        return self.path(name)

    def save_figure(self, fig, name: str) -> Path:
        """Save a matplotlib figure as PNG in the run directory (rank 0 only) and close it."""
        if is_main_process():
            return save_figure(fig, self.path(name))
        from .figures import pyplot

        pyplot().close(fig)
        return self.path(name)

    def save_partial(self, metrics: Metrics, **extra: Any) -> Path:
        """Write what has been measured so far to ``partial_results.json``."""
        return self.save_json(
            "partial_results.json",
            {
                "preset": self.preset_name,
                "seeds": self.seeds,
                "metrics": metrics.summary(),
                **extra,
            },
        )


@dataclass
class Command:
    """An extra sub-command: ``configure(parser)`` adds its options, ``handler(args) -> int``."""

    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], int]


def preset_option(parser: argparse.ArgumentParser, *flags: str, field: str, **kw: Any) -> None:
    """An option that overrides the preset field ``field`` (dotted for nested dataclasses,
    e.g. ``train.epochs``). Unset, it leaves the preset alone; set, the app applies it with
    ``dataclasses.replace`` and the preset's ``__post_init__`` validates it."""
    kw.setdefault("default", None)
    kw["help"] = f"{kw.get('help', '')} (preset field {field})".strip()
    parser.add_argument(*flags, dest=PRESET_DEST + field, **kw)


# ------------------------------------------------------------------ preset overrides
def replace_field(obj: Any, dotted: str, value: Any) -> Any:
    """``dataclasses.replace`` along a dotted path; unknown fields are a :class:`UsageError`."""
    head, _, rest = dotted.partition(".")
    names = {f.name for f in dataclasses.fields(obj)}
    if head not in names:
        raise UsageError(
            f"unknown preset field {dotted!r}; fields: {', '.join(sorted(names))} "
            "(see --print-config)"
        )
    if rest:
        value = replace_field(getattr(obj, head), rest, value)
    try:
        return dataclasses.replace(obj, **{head: value})
    except (ValueError, TypeError) as e:
        raise UsageError(f"{dotted}={value!r}: {e}") from None


def field_type(obj: Any, dotted: str) -> Any:
    """The annotated type of a (dotted) preset field."""
    head, _, rest = dotted.partition(".")
    if rest:
        return field_type(getattr(obj, head), rest)
    hints = typing.get_type_hints(type(obj))
    if head not in hints:
        replace_field(obj, head, None)  # raises the unknown-field error
    return hints[head]


def coerce(text: str, hint: Any) -> Any:
    """Parse ``text`` as a value of the type ``hint`` (int, float, bool, str, Optional,
    Literal, tuple/list of those)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if text.strip().lower() in ("none", "null") and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return coerce(text, a)
            except (ValueError, TypeError) as e:
                errors.append(str(e))
        raise ValueError("; ".join(errors))
    if origin is typing.Literal:
        for a in args:
            if str(a) == text:
                return a
        raise ValueError(f"must be one of {', '.join(map(str, args))}")
    if origin in (tuple, list):
        parts = [t for t in text.replace(" ", ",").split(",") if t]
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(parts) != len(args):
                raise ValueError(f"needs {len(args)} comma-separated values")
            return tuple(coerce(t, a) for t, a in zip(parts, args))
        vals = [coerce(t, args[0]) if args else t for t in parts]
        return tuple(vals) if origin is tuple else vals
    if hint is bool:
        low = text.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"not a boolean: {text!r}")
    if hint in (int, float, str):
        try:
            return hint(text)
        except ValueError:
            raise ValueError(f"not a {hint.__name__}: {text!r}") from None
    if dataclasses.is_dataclass(hint):
        raise ValueError("is a group of fields: set them one by one with dots (field.sub=value)")
    raise ValueError(f"cannot be set from the command line (type {hint})")


def _escape(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=+-]", lambda m: f"%{ord(m.group()):02x}", key)


def _seed_list(text: str) -> list[int]:
    try:
        seeds = [int(t) for t in text.replace(",", " ").split()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"seeds must be non-negative integers, got {text!r}"
        ) from None
    if not seeds or any(s < 0 for s in seeds):
        raise argparse.ArgumentTypeError(f"seeds must be non-negative integers, got {text!r}")
    return seeds


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return n


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


# ------------------------------------------------------------------ the app
class ExperimentApp:
    """A package's command line, built around its ``run(ctx) -> Report``."""

    def __init__(
        self,
        *,
        package: str,
        version: str,
        paper: Paper,
        presets: dict[str, Any],
        run: Callable[[RunContext], Report],
        add_arguments: Callable[[argparse.ArgumentParser], None] | None = None,
        commands: dict[str, Command] | None = None,
        download: str | None = None,
        uses_torch: bool = True,
        paper_needs_data: bool = True,
    ):
        for name, p in presets.items():
            if not dataclasses.is_dataclass(p) or not hasattr(p, "seeds"):
                raise TypeError(
                    f"{package}: preset {name!r} must be a dataclass with a seeds field"
                )
        self.package, self.version, self.paper = package, version, paper
        self.slug = package.removeprefix("iclr24-")
        self.presets, self.run, self.add_arguments = presets, run, add_arguments
        self.commands = commands or {}
        self.download, self.uses_torch = download, uses_torch
        self.paper_needs_data = paper_needs_data

    @classmethod
    def from_module(cls, module: str | types.ModuleType) -> ExperimentApp:
        """Build the app from an ``experiment`` module's ``PAPER``, ``PRESETS``, ``run`` and
        optional ``add_arguments``, ``COMMANDS``, ``DOWNLOAD``, ``USES_TORCH``,
        ``PAPER_NEEDS_DATA``."""
        mod = sys.modules[module] if isinstance(module, str) else module
        spec = getattr(mod, "__spec__", None)
        top = (spec.name if spec else mod.__name__).split(".")[0]  # iclr24_svd_update
        package = top.replace("_", "-")
        try:
            version = metadata.version(package)
        except metadata.PackageNotFoundError:
            version = "0+unknown"
        return cls(
            package=package,
            version=version,
            paper=mod.PAPER,
            presets=mod.PRESETS,
            run=mod.run,
            add_arguments=getattr(mod, "add_arguments", None),
            commands=getattr(mod, "COMMANDS", None),
            download=getattr(mod, "DOWNLOAD", None),
            uses_torch=getattr(mod, "USES_TORCH", True),
            paper_needs_data=getattr(mod, "PAPER_NEEDS_DATA", True),
        )

    # -------------------------------------------------------------- parsing
    def build_parser(self) -> argparse.ArgumentParser:
        p = _Parser(prog=self.package, description=self.paper.reference())
        p.add_argument("--version", action="version", version=f"{self.package} {self.version}")
        sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
        sub.required = True
        r = sub.add_parser(
            "reproduce",
            help="run the paper's reproduction and check its claims",
            description=f"Reproduce {self.paper.reference()}. {self.paper.url}",
        )
        r.add_argument("--preset", default="default", choices=list(self.presets),
                       help="smoke: < 60 s check; default: the README's run (< 10 min on 2 CPU "
                            "cores); paper: the paper's scale and data")  # fmt: skip
        r.add_argument("--seeds", nargs="+", type=_seed_list, default=None,
                       help="random seeds, e.g. --seeds 0 1 2 (default: the preset's)")  # fmt: skip
        r.add_argument("--device", default="auto",
                       help="auto (cuda, then mps, then cpu), cpu, cuda, cuda:N, mps")  # fmt: skip
        r.add_argument("--threads", type=_positive_int, default=None,
                       help=f"CPU threads for torch and BLAS (default: the preset's threads if it "
                            f"sets them, else the cores available, {available_cores()} here)")  # fmt: skip
        r.add_argument("--out", type=Path, default=None,
                       help=f"run directory (default runs/{self.slug}/<preset>)")  # fmt: skip
        r.add_argument("--data-dir", type=Path, default=None,
                       help="data root (default $ICLR24_DATA, else ~/.cache/iclr24)")  # fmt: skip
        r.add_argument("--strict", action="store_true", help="exit 1 when any claim does not hold")
        r.add_argument("--download", action="store_true",
                       help=f"paper preset: fetch the data ({self.download})" if self.download
                       else "refused: the paper's data has no public source a standard library "
                            "fetches (the paper preset's error says where to get it)")  # fmt: skip
        r.add_argument("--resume", action="store_true",
                       help="reuse the finished units of an interrupted run in --out")  # fmt: skip
        r.add_argument("--set", dest="overrides", action="append", default=[],
                       metavar="FIELD=VALUE",
                       help="override any preset field, e.g. --set epochs=5 (dotted for nested "
                            "fields; see --print-config)")  # fmt: skip
        r.add_argument("--print-config", action="store_true",
                       help="print the preset after all overrides as JSON and exit")  # fmt: skip
        if self.add_arguments:
            self.add_arguments(r)
        for name, cmd in self.commands.items():
            cmd.configure(sub.add_parser(name, help=cmd.help))
        return p

    def resolve_preset(self, args: argparse.Namespace) -> Any:
        """The preset named by ``--preset`` with ``--seeds``, the package's preset options and
        ``--set`` applied (in that order)."""
        preset = self.presets[args.preset]
        if args.seeds:
            seeds = [s for group in args.seeds for s in group]
            if len(set(seeds)) != len(seeds):
                raise UsageError(f"--seeds has duplicates: {seeds}")
            preset = replace_field(preset, "seeds", tuple(seeds))
        for dest, value in vars(args).items():
            if dest.startswith(PRESET_DEST) and value is not None:
                preset = replace_field(preset, dest.removeprefix(PRESET_DEST), value)
        for item in args.overrides:
            name, eq, text = item.partition("=")
            if not eq or not name:
                raise UsageError(f"--set takes FIELD=VALUE, got {item!r}")
            try:
                value = coerce(text, field_type(preset, name.strip()))
            except ValueError as e:
                raise UsageError(f"--set {item}: {e}") from None
            preset = replace_field(preset, name.strip(), value)
        return preset

    def main(self, argv: Sequence[str] | None = None) -> int:
        args = self.build_parser().parse_args(argv)
        log = get_logger(self.slug)
        try:
            if args.command in self.commands:
                return int(self.commands[args.command].handler(args) or 0)
            return self._reproduce(args, log)
        except (UsageError, DeviceError, MissingDataError) as e:
            print(f"{self.package}: error: {e}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(f"{self.package}: interrupted; finished units are kept in the run directory "
                  "(continue with --resume)", file=sys.stderr)  # fmt: skip
            return 130

    # -------------------------------------------------------------- the run
    def _device(self, spec: str) -> str:
        if self.uses_torch:
            return str(resolve_device(spec, quiet=True))
        if spec not in ("auto", "cpu"):
            raise UsageError(f"{self.package} runs on the CPU only; use --device cpu (or auto)")
        return "cpu"

    def _reproduce(self, args: argparse.Namespace, log: logging.Logger) -> int:
        preset = self.resolve_preset(args)
        config = to_jsonable(dataclasses.asdict(preset))
        if args.print_config:
            print(json.dumps({"preset": args.preset, **config}, indent=2))
            return 0
        if args.download and not self.download:
            raise UsageError(
                "--download: the paper's data has no public source that a standard library "
                "fetches; run --preset paper without it to see which files to get and where"
            )
        if args.download and args.preset != "paper":
            raise UsageError(
                "--download fetches the paper preset's data: use it with --preset paper"
            )
        device = self._device(args.device)
        # --threads, else the preset's own cap (tiny models measured faster on fewer threads)
        threads = set_threads(args.threads or getattr(preset, "threads", None))
        out = args.out or Path("runs") / self.slug / args.preset
        _check_writable(out)
        fingerprint = {"package": self.package, "preset": args.preset, "device": device,
                       "config": {k: v for k, v in config.items() if k != "seeds"}}  # fmt: skip
        self._prepare_units(out, fingerprint, args.resume)
        with log_to_file(out):
            ctx = RunContext(
                package=self.package, preset_name=args.preset, preset=preset, device=device,
                threads=threads, out_dir=out, data_dir=data_dir(args.data_dir),
                download=args.download, resume=args.resume, strict=args.strict, args=args,
                log=log,
            )  # fmt: skip
            log.info("%s %s: reproduce preset=%s seeds=%s device=%s threads=%d out=%s%s",
                     self.package, self.version, args.preset, ctx.seeds, device, threads, out,
                     " (resume)" if args.resume else "")  # fmt: skip
            t0 = time.perf_counter()
            try:
                report = self.run(ctx)
            except BaseException:
                _record_run(out, time.perf_counter() - t0, ctx, finished=False)
                raise
            wall = time.perf_counter() - t0
            history = _record_run(out, wall, ctx, finished=True)
            if args.resume:
                log.info("resume: %d units reused, %d computed", ctx.units_reused,
                         ctx.units_computed)  # fmt: skip
            if is_main_process():
                total = sum(r["wall_seconds"] for r in history)
                write_results(
                    out, package=self.package, version=self.version,
                    paper=dataclasses.asdict(self.paper), preset=args.preset, seeds=ctx.seeds,
                    device=device, threads=threads, wall_seconds=total, metrics=report.metrics,
                    claims=report.claims, checks=report.checks, config=config,
                    extra={**report.extra, "units": {"reused": ctx.units_reused,
                                                     "computed": ctx.units_computed},
                           "wall_seconds_this_run": wall, "runs": history},
                )  # fmt: skip
                log.info("wrote %s and results.md (%.1f s; %.1f s over %d run(s) of these "
                         "units)", out / "results.json", wall, total, len(history))  # fmt: skip
                n = count_verdicts([c.to_dict() for c in report.claims])
                print(f"\nclaims: {n['holds']} hold, {n['fails']} fail, "
                      f"{n['inconclusive']} inconclusive (of {len(report.claims)})")  # fmt: skip
                print(claims_table(report.claims))
                if report.checks:
                    ok = sum(c.holds for c in report.checks)
                    print(f"\n{ok} of {len(report.checks)} checks pass")
                    print(claims_table(report.checks, title="check"))
        failed = [f"{c.id} ({c.verdict})" for c in report.claims if not c.holds]
        if failed and args.strict:
            print(f"{self.package}: --strict: claims not holding: {', '.join(failed)}",
                  file=sys.stderr)  # fmt: skip
            return 1
        return 0

    def _prepare_units(self, out: Path, fingerprint: dict, resume: bool) -> None:
        """A fresh run forgets old units; ``--resume`` only reuses units made by the same
        package, preset configuration and device (seeds may differ: units are per seed)."""
        stamp, units = out / "run_config.json", out / "units"
        if resume and stamp.exists():
            before = json.loads(stamp.read_text())
            if before != to_jsonable(fingerprint):
                diff = sorted(k for k in set(before["config"]) | set(fingerprint["config"])
                              if before["config"].get(k) != to_jsonable(fingerprint)["config"].get(k))  # fmt: skip
                what = ", ".join(diff) or ", ".join(
                    k for k in ("package", "preset", "device") if before.get(k) != fingerprint[k]
                )
                raise UsageError(
                    f"--resume: the run in {out} used another configuration ({what} differ); "
                    "drop --resume or choose another --out"
                )
        if not resume and units.exists() and is_main_process():
            for f in units.glob("*.pkl"):
                f.unlink()
            (units / RUNS_FILE).unlink(missing_ok=True)
        if is_main_process():
            atomic_write_json(stamp, fingerprint)


RUNS_FILE = "runs.json"


def _record_run(out: Path, wall: float, ctx: RunContext, finished: bool) -> list[dict]:
    """Append this invocation to ``units/runs.json`` (the runs that made these units: a run
    resumed after an interruption reports the time of all its parts) and return the list.
    A run directory from before this record existed contributes its results.json's time."""
    path = out / "units" / RUNS_FILE
    if path.exists():
        history = json.loads(path.read_text())
    else:
        history = []
        old = out / "results.json"
        if ctx.resume and old.exists():
            prev = json.loads(old.read_text())
            history.append({"date": prev.get("date"), "wall_seconds": prev.get("wall_seconds", 0.0),
                            "units_computed": (prev.get("units") or {}).get("computed"),
                            "git_commit": (prev.get("environment") or {}).get("git_commit"),
                            "finished": True, "from": "results.json"})  # fmt: skip
    history.append({"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "wall_seconds": wall,
                    "units_computed": ctx.units_computed, "units_reused": ctx.units_reused,
                    "git_commit": git_commit(Path(__file__).parent), "finished": finished})  # fmt: skip
    if is_main_process():
        atomic_write_json(path, history)
    return history


def _check_writable(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".write-test-{os.getpid()}"  # per process: torchrun ranks share --out
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise UsageError(f"cannot write to --out {out}: {e.strerror or e}") from None

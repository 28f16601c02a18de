"""The CLI skeleton every package reuses.

    iclr24-<slug> reproduce [--preset smoke|default|paper] [--seeds 0 1 2] [--device auto]
                            [--out runs/<slug>/<preset>] [--data-dir DIR] [--strict]
                            [--download] [--resume]

A package supplies ``run(ctx) -> Report`` and, optionally, its own options. The skeleton
resolves the device, sets up ``log.txt``, times the run, writes ``results.json`` and
``results.md``, prints the claims table, and maps errors to exit codes:
0 ok, 1 a claim does not hold under ``--strict``, 2 bad input (one line, no traceback),
130 interrupted (what was finished stays on disk).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .data import MissingDataError, data_dir
from .device import DeviceError, resolve_device
from .dist import is_main_process
from .io import atomic_write_json, save_figure
from .logs import get_logger, log_to_file
from .results import Claim, Metrics, claims_table, write_results


class UsageError(ValueError):
    """Bad input from the user: reported as one line, exit code 2."""


@dataclass
class RunContext:
    """What a package's ``run`` receives."""

    package: str
    preset: str
    seeds: list[int]
    device: str
    out_dir: Path
    data_dir: Path
    download: bool
    resume: bool
    strict: bool
    args: argparse.Namespace
    log: logging.Logger

    @property
    def torch_device(self):
        import torch

        return torch.device(self.device)

    def path(self, name: str) -> Path:
        return self.out_dir / name

    def save_json(self, name: str, obj: Any) -> Path:
        """Atomic JSON write into the run directory (rank 0 only)."""
        if is_main_process():
            return atomic_write_json(self.path(name), obj)
        return self.path(name)

    def save_figure(self, fig, name: str) -> Path:
        if is_main_process():
            return save_figure(fig, self.path(name))
        return self.path(name)

    def save_partial(self, metrics: Metrics, **extra: Any) -> Path:
        """Write what has been measured so far to ``partial_results.json``; a run cut
        short leaves this behind."""
        return self.save_json(
            "partial_results.json",
            {"preset": self.preset, "seeds": self.seeds, "metrics": metrics.summary(), **extra},
        )


@dataclass
class Report:
    """What a package's ``run`` returns."""

    metrics: Metrics
    claims: list[Claim]
    extra: dict[str, Any] = field(default_factory=dict)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _seed(text: str) -> list[int]:
    try:
        seeds = [int(t) for t in text.replace(",", " ").split()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"seeds must be non-negative integers, got {text!r}"
        ) from None
    if not seeds or any(s < 0 for s in seeds):
        raise argparse.ArgumentTypeError(f"seeds must be non-negative integers, got {text!r}")
    return seeds


@dataclass
class Command:
    """An extra sub-command: ``configure(parser)`` adds its options, ``handler(args) -> int``."""

    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], int]


class ReproduceApp:
    """A package's command line, built around its ``run(ctx) -> Report``."""

    def __init__(
        self,
        *,
        package: str,
        version: str,
        paper: dict[str, str],
        presets: Sequence[str],
        run: Callable[[RunContext], Report],
        add_arguments: Callable[[argparse.ArgumentParser], None] | None = None,
        default_seeds: Sequence[int] | dict[str, Sequence[int]] = (0, 1, 2),
        uses_torch: bool = True,
        description: str = "",
        commands: dict[str, Command] | None = None,
    ):
        self.package, self.version, self.paper = package, version, paper
        self.slug = package.removeprefix("iclr24-")
        self.presets = list(presets)
        self.run, self.add_arguments = run, add_arguments
        self.default_seeds = default_seeds
        self.uses_torch = uses_torch
        self.description = description or f"{paper['title']} (arXiv {paper.get('arxiv', '?')})"
        self.commands = commands or {}

    def seeds_for(self, preset: str) -> list[int]:
        d = self.default_seeds
        return list(d.get(preset, d.get("default", (0, 1, 2))) if isinstance(d, dict) else d)

    def build_parser(self) -> argparse.ArgumentParser:
        p = _Parser(prog=self.package, description=self.description)
        p.add_argument("--version", action="version", version=f"{self.package} {self.version}")
        sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
        sub.required = True
        r = sub.add_parser("reproduce", help="run the paper's reproduction and check its claims")
        r.add_argument(
            "--preset",
            default="default",
            choices=self.presets,
            help="smoke: <60 s test run; default: the README's run (<10 min on 2 CPU cores); paper: the paper's scale",
        )
        r.add_argument(
            "--seeds",
            nargs="+",
            type=_seed,
            default=None,
            help="random seeds, e.g. --seeds 0 1 2 (default depends on the preset)",
        )
        r.add_argument(
            "--device",
            default="auto",
            help="auto (cuda, then mps, then cpu), cpu, cuda, cuda:N, mps",
        )
        r.add_argument(
            "--out",
            type=Path,
            default=None,
            help=f"run directory (default runs/{self.slug}/<preset>)",
        )
        r.add_argument(
            "--data-dir",
            type=Path,
            default=None,
            help="data root (default $ICLR24_DATA, else ~/.cache/iclr24)",
        )
        r.add_argument("--strict", action="store_true", help="exit 1 when any claim does not hold")
        r.add_argument(
            "--download",
            action="store_true",
            help="allow dataset libraries to download the paper preset's data (off by default)",
        )
        r.add_argument(
            "--resume", action="store_true", help="continue from the checkpoints in --out"
        )
        if self.add_arguments:
            self.add_arguments(r)
        for name, cmd in self.commands.items():
            cp = sub.add_parser(name, help=cmd.help)
            cmd.configure(cp)
        return p

    def main(self, argv: Sequence[str] | None = None) -> int:
        parser = self.build_parser()
        args = parser.parse_args(argv)
        log = get_logger(self.slug)
        try:
            if args.command in self.commands:
                return int(self.commands[args.command].handler(args) or 0)
            return self._reproduce(args, log)
        except (UsageError, DeviceError, MissingDataError) as e:
            print(f"{self.package}: error: {e}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(
                f"{self.package}: interrupted; finished parts are in the run directory",
                file=sys.stderr,
            )
            return 130

    def _device(self, spec: str) -> str:
        if self.uses_torch:
            return str(resolve_device(spec))
        if spec not in ("auto", "cpu"):
            raise UsageError(f"{self.package} runs on the CPU only; use --device cpu (or auto)")
        return "cpu"

    def _reproduce(self, args: argparse.Namespace, log: logging.Logger) -> int:
        seeds = (
            [s for group in args.seeds for s in group]
            if args.seeds
            else self.seeds_for(args.preset)
        )
        if len(set(seeds)) != len(seeds):
            raise UsageError(f"--seeds has duplicates: {seeds}")
        out = args.out or Path("runs") / self.slug / args.preset
        _check_writable(out)
        ddir = data_dir(args.data_dir)
        with log_to_file(out):
            device = self._device(args.device)
            ctx = RunContext(
                package=self.package,
                preset=args.preset,
                seeds=seeds,
                device=device,
                out_dir=out,
                data_dir=ddir,
                download=args.download,
                resume=args.resume,
                strict=args.strict,
                args=args,
                log=log,
            )
            log.info(
                "%s %s: reproduce preset=%s seeds=%s device=%s out=%s",
                self.package,
                self.version,
                args.preset,
                seeds,
                device,
                out,
            )
            t0 = time.perf_counter()
            report = self.run(ctx)
            wall = time.perf_counter() - t0
            if is_main_process():
                write_results(
                    out,
                    package=self.package,
                    version=self.version,
                    paper=self.paper,
                    preset=args.preset,
                    seeds=seeds,
                    device=device,
                    wall_seconds=wall,
                    metrics=report.metrics,
                    claims=report.claims,
                    extra=report.extra,
                )
                log.info("wrote %s and results.md (%.1f s)", out / "results.json", wall)
                print(claims_table(report.claims))
        failed = [c.id for c in report.claims if not c.holds]
        if failed and args.strict:
            print(
                f"{self.package}: --strict: claims not holding: {', '.join(failed)}",
                file=sys.stderr,
            )
            return 1
        return 0


def _check_writable(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".write-test-{os.getpid()}"  # per process: torchrun ranks share --out
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise UsageError(f"cannot write to --out {out}: {e.strerror or e}") from None

"""A small paper package for the executor tests: independent (seed, width) units through
``ctx.cached_parallel``. A module of its own (not a test file), so that spawned processes and
Ray workers import its unit function by name (the tests put this folder on PYTHONPATH)."""

import os
from dataclasses import dataclass
from functools import partial

import numpy as np

from iclr24_common import (
    Check,
    Claim,
    ExperimentApp,
    Metrics,
    Paper,
    Report,
    superiority,
)

WIDTHS = (4, 16)


def measure(seed: int, width: int, fail: bool = False) -> dict:
    """One unit: seeds itself, so that where it runs cannot change its value."""
    if fail:
        raise ZeroDivisionError(f"unit {seed}/{width} divided by zero")
    rng = np.random.default_rng([seed, width])
    x = rng.normal(size=(256, width))
    return {"spread": float(np.linalg.norm(x.mean(axis=0))), "pid": os.getpid(),
            "threads": int(os.environ["OMP_NUM_THREADS"])}  # fmt: skip


@dataclass(frozen=True)
class Preset:
    seeds: tuple[int, ...] = (0, 1, 2)
    fail_unit: str = ""
    """The key of a unit that raises (for the tests of a failing unit)."""


def run(ctx):
    jobs = {f"seed{s}/w{w}": partial(measure, s, w, f"seed{s}/w{w}" == ctx.preset.fail_unit)
            for s in ctx.seeds for w in WIDTHS}  # fmt: skip
    units = ctx.cached_parallel(jobs, desc="demo units")
    m = Metrics()
    for key, value in units.items():
        seed, width = key.removeprefix("seed").split("/w")
        m.add(f"demo/w{width}/spread", int(seed), value["spread"])
    claim = Claim(id="wider-spreads", statement="a wider mean vector has a larger norm",
                  paper="n/a", measured=m.fmt("demo/w16/spread"),
                  test=superiority(m.by_seed("demo/w16/spread"), m.by_seed("demo/w4/spread"),
                                   margin=0.01))  # fmt: skip
    check = Check(id="units", statement="every unit ran", measured=str(len(units)),
                  criterion="one unit per seed and width", holds=len(units) == len(jobs),
                  why="cached_parallel returns one value per job")  # fmt: skip
    pids = sorted({v["pid"] for v in units.values()})
    return Report(m, [claim], [check], extra={"unit_pids": pids, "driver_pid": os.getpid(),
                                              "unit_thread_counts": sorted({v["threads"] for v in units.values()})})  # fmt: skip


app = ExperimentApp(package="iclr24-raydemo", version="0.1.0",
                    paper=Paper(title="Demo", authors="A & B", arxiv="0000.00000"),
                    presets={"smoke": Preset(seeds=(0,)), "default": Preset(), "paper": Preset()},
                    run=run, uses_torch=False)  # fmt: skip

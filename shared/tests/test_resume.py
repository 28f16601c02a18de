"""--resume after a real interruption: a package run stopped after its first finished unit
(as Ctrl-C would stop it) and resumed skips that unit and ends with the same numbers as a run
straight through (timings aside).

The interruption is injected with ``ICLR24_INTERRUPT_AFTER_UNITS=1``, which raises
KeyboardInterrupt right after the first unit is stored: the same path as Ctrl-C.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from iclr24_common import is_timing_metric, load_results


def reproduce(slug: str, out: Path, *extra: str, env: dict | None = None):
    exe = Path(sys.executable).parent / f"iclr24-{slug}"
    return subprocess.run([str(exe), "reproduce", "--preset", "smoke", "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})  # fmt: skip


def test_interrupted_run_resumes_to_the_same_numbers(resume_slug, tmp_path):
    slug = resume_slug  # conftest.RESUME_PACKAGES present in this leg
    straight = reproduce(slug, tmp_path / "straight")
    assert straight.returncode == 0, straight.stderr[-2000:]

    cut = reproduce(slug, tmp_path / "cut", env={"ICLR24_INTERRUPT_AFTER_UNITS": "1"})
    assert cut.returncode == 130 and "--resume" in cut.stderr
    assert not (tmp_path / "cut" / "results.json").exists()
    assert len(list((tmp_path / "cut" / "units").glob("*.pkl"))) == 1

    resumed = reproduce(slug, tmp_path / "cut", "--resume")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    a, b = load_results(tmp_path / "straight"), load_results(tmp_path / "cut")
    assert b["units"]["reused"] == 1 and b["units"]["computed"] == a["units"]["computed"] - 1
    # the resumed run reports the time of both parts, the interrupted one included
    assert [r["finished"] for r in b["runs"]] == [False, True]
    assert (
        b["wall_seconds"] == sum(r["wall_seconds"] for r in b["runs"]) > b["wall_seconds_this_run"]
    )
    for name, m in a["metrics"].items():
        if not is_timing_metric(name):
            assert b["metrics"][name]["per_seed"] == m["per_seed"], name


def test_resume_refuses_another_configuration(resume_slug, tmp_path):
    slug = resume_slug
    cut = reproduce(slug, tmp_path, env={"ICLR24_INTERRUPT_AFTER_UNITS": "1"})
    assert cut.returncode == 130
    other = reproduce(slug, tmp_path, "--resume", "--set", "seeds=0")  # seeds may change
    assert other.returncode == 0
    bad = reproduce(slug, tmp_path, "--resume", "--preset", "default")
    assert bad.returncode == 2 and "another configuration" in bad.stderr

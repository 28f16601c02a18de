"""Importing a package sets the OpenMP wait policy before torch loads (CONTRIBUTING, Threads).

OpenMP reads ``OMP_WAIT_POLICY`` once, when torch loads it; ``iclr24_common`` sets it to
PASSIVE (sleeping, not spinning, waiters) unless the user set it, so every package's
``__init__`` imports ``iclr24_common`` before anything that imports torch. Parametrised over
the same packages as the contract test (``ICLR24_PACKAGES``)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ALL = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists())
SELECTED = os.environ.get("ICLR24_PACKAGES", "").replace(",", " ").split() or ALL

CODE = ("import os, sys; import iclr24_{m}; mods = list(sys.modules); "
        "print(os.environ.get('OMP_WAIT_POLICY'), "
        "'torch' not in mods or mods.index('iclr24_common') < mods.index('torch'))")  # fmt: skip


@pytest.mark.parametrize("slug", SELECTED)
def test_importing_the_package_sets_the_wait_policy_before_torch(slug):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", CODE.format(m=slug.replace("-", "_"))],
                         capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    # sys.modules keeps import order: iclr24_common must come before torch
    assert out.stdout.split() == ["PASSIVE", "True"], out.stdout

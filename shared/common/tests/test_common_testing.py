"""run_paper_preset: the paper preset run through the real CLI, its results checked."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from ray_demo import app  # noqa: E402

from iclr24_common.testing import run_paper_preset  # noqa: E402


def test_runs_the_paper_preset_with_size_caps(tmp_path):
    res = run_paper_preset(app, tmp_path / "data", tmp_path / "run", sets={"seeds": (0, 1)})
    assert res["preset"] == "paper"
    assert res["config"]["seeds"] == [0, 1]
    assert [c["verdict"] for c in res["claims"]] != []


def test_a_failing_run_names_its_command(tmp_path):
    with pytest.raises(AssertionError, match="paper preset exited 2"):
        run_paper_preset(app, tmp_path / "data", tmp_path / "run", sets={"no_such_field": 1})

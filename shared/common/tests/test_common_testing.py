"""run_paper_preset: the paper preset run through the real CLI, its results checked."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from ray_demo import app  # noqa: E402

from iclr24_common.testing import run_paper_preset, write_cifar10, write_cifar100  # noqa: E402


def test_runs_the_paper_preset_with_size_caps(tmp_path):
    res = run_paper_preset(app, tmp_path / "data", tmp_path / "run", sets={"seeds": (0, 1)})
    assert res["preset"] == "paper"
    assert res["config"]["seeds"] == [0, 1]
    assert [c["verdict"] for c in res["claims"]] != []


def test_a_failing_run_names_its_command(tmp_path):
    with pytest.raises(AssertionError, match="paper preset exited 2"):
        run_paper_preset(app, tmp_path / "data", tmp_path / "run", sets={"no_such_field": 1})


def test_cifar_miniatures_have_the_real_pickle_format(tmp_path):
    write_cifar10(tmp_path / "cifar-10-batches-py", n_per_batch=2, n_test=10)
    write_cifar100(tmp_path / "cifar-100-python", n_train=100, n_test=20)
    raw = (tmp_path / "cifar-10-batches-py" / "data_batch_1").read_bytes()
    assert raw[:4] == b"\x80\x02}q"  # protocol 2, a dict: as the real files begin
    # what the two readers in use see: bytes keys (encoding="bytes"), str keys ("latin1")
    with open(tmp_path / "cifar-10-batches-py" / "data_batch_3", "rb") as f:
        d = pickle.load(f, encoding="bytes")
    assert d[b"labels"] == [4, 5] and d[b"data"].shape == (2, 3072)
    with open(tmp_path / "cifar-100-python" / "train", "rb") as f:
        d = pickle.load(f, encoding="latin1")
    assert d["fine_labels"] == list(range(100)) and d["coarse_labels"][99] == 19
    with open(tmp_path / "cifar-10-batches-py" / "batches.meta", "rb") as f:
        assert pickle.load(f, encoding="latin1")["label_names"][0] == "airplane"

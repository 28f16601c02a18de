"""Package-specific command-line behaviour (the common contract is tested in shared/tests):
the paper preset's whole path on small files in the real formats, and its option errors."""

import json

import numpy as np
import pytest
from iclr24_svd_update.experiment import main


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["reproduce", "--device", "cuda"], "CPU only"),
        (["reproduce", "--preset", "paper"], "missing data"),
        (["reproduce", "--preset", "paper", "--dataset", "med"], "MED"),
        (["reproduce", "--preset", "smoke", "--n-batches", "0"], "n_batches must be >= 1"),
        (["reproduce", "--preset", "smoke", "--set", "batch_sizes=0"], "batch_sizes"),
    ],
)
def test_bad_input_exits_2(argv, msg, tmp_path, capsys):
    code = main([*argv, "--out", str(tmp_path / "run"), "--data-dir", str(tmp_path / "data")])
    assert code == 2
    assert msg in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["movielens", "slashdot"])
def test_paper_preset_on_small_files(dataset, tmp_path):
    """The paper preset's whole path (official 50% split) on small files in the real formats."""
    rng = np.random.default_rng(0)
    folder = tmp_path / "data" / "svd-update" / dataset
    folder.mkdir(parents=True)
    if dataset == "movielens":
        users, items = rng.integers(1, 400, 6000), rng.integers(1, 150, 6000)
        lines = [f"{u}::{i}::{rng.integers(1, 6)}::0" for u, i in zip(users, items)]
        (folder / "ratings.dat").write_text("\n".join(lines) + "\n")
    else:
        src, dst = rng.integers(0, 300, 3000), rng.integers(0, 300, 3000)
        body = "\n".join(f"{a}\t{b}" for a, b in zip(src, dst))
        (folder / "soc-Slashdot0902.txt").write_text("# FromNodeId\tToNodeId\n" + body + "\n")
    out = tmp_path / "run"
    argv = ["reproduce", "--preset", "paper", "--dataset", dataset, "--n-batches", "4",
            "--set", "sbm_batches=4"]  # fmt: skip
    assert main([*argv, "--data-dir", str(tmp_path / "data"), "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    assert res["dataset"] == dataset and res["claims"] and res["config"]["dataset"] == dataset
    same = [c for c in res["checks"] if c["id"] == "same-as-baseline"]
    assert same and "gap" in same[0]["measured"] and same[0]["holds"]

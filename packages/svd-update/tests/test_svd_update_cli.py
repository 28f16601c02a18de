"""The command line: bad input exits 2 with one line; the smoke reproduction is complete."""

import json

import numpy as np
import pytest
from iclr24_svd_update.cli import main


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["reproduce", "--device", "cuda"], "CPU only"),
        (["reproduce", "--preset", "paper"], "needs --dataset"),
        (["reproduce", "--preset", "smoke", "--dataset", "cisi"], "only used with --preset paper"),
        (["reproduce", "--preset", "paper", "--dataset", "med"], "missing data"),
        (["reproduce", "--preset", "smoke", "--n-batches", "0"], "--n-batches"),
    ],
)
def test_bad_input_exits_2(argv, msg, tmp_path, capsys):
    code = main([*argv, "--out", str(tmp_path / "run"), "--data-dir", str(tmp_path / "data")])
    assert code == 2
    assert msg in capsys.readouterr().err


def test_bad_preset_exits_2(tmp_path):
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "--preset", "huge", "--out", str(tmp_path)])
    assert e.value.code == 2


@pytest.mark.slow
def test_smoke_reproduction(tmp_path):
    out = tmp_path / "smoke"
    assert main(["reproduce", "--preset", "smoke", "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    assert res["package"] == "iclr24-svd-update" and res["preset"] == "smoke"
    assert res["device"] == "cpu" and res["blas_threads"] == 1
    ids = {c["id"] for c in res["claims"]}
    assert {
        "speedup-s10",
        "speedup-s100",
        "same-as-baseline",
        "close-to-svds",
        "downstream-hr10",
        "recompute-costlier-s10",
        "network-speedup",
    } <= ids
    assert all(isinstance(c["holds"], bool) for c in res["claims"])
    for name in (
        "rows/s10/ours-qr/update_seconds",
        "rows/s100/zha-simon/sv_rel_error_vs_svds",
        "rows/s10/recompute/hr10",
        "network/ours-qr/time_ratio_vs_zha-simon",
    ):
        assert len(res["metrics"][name]["per_seed"]) == 1
    # the sparse method and its baseline compute the same thing, even at smoke scale
    same = next(c for c in res["claims"] if c["id"] == "same-as-baseline")
    assert same["holds"]
    assert (out / "results.md").exists() and (out / "log.txt").exists()
    assert (out / "cumulative_time.png").stat().st_size > 1000


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
    argv = ["reproduce", "--preset", "paper", "--dataset", dataset, "--n-batches", "4"]
    assert main([*argv, "--data-dir", str(tmp_path / "data"), "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    assert res["dataset"] == dataset and res["claims"]
    same = [c for c in res["claims"] if c["id"] in ("same-as-baseline", "network-speedup")]
    assert same and all("gap" in c["measured"] for c in same)

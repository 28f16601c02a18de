"""The command line: bad input exits 2 with one line; the smoke reproduction is complete."""

import json

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

"""The command line: bad input exits 2 with one line; the smoke reproduction is complete."""

import pytest
from iclr24_smnn.cli import main

from iclr24_common import load_results


@pytest.mark.parametrize(
    "argv, message",
    [
        (["reproduce", "--preset", "huge"], "invalid choice"),
        (["reproduce", "--epochs", "0"], "--epochs must be >= 1"),
        (["reproduce", "--threads", "0"], "--threads must be >= 1"),
        (["reproduce", "--seeds", "1", "1"], "duplicates"),
        (["reproduce", "--device", "tpu"], "device"),
    ],
)
def test_bad_input_exits_2(argv, message, tmp_path, capsys):
    code = main([*argv, "--out", str(tmp_path / "run")]) if argv[1] != "--preset" else None
    if code is None:
        with pytest.raises(SystemExit) as e:
            main(argv)
        code = e.value.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_paper_preset_without_data_stops_at_once(tmp_path, capsys):
    code = main(
        [
            "reproduce",
            "--preset",
            "paper",
            "--data-dir",
            str(tmp_path / "none"),
            "--out",
            str(tmp_path / "run"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "missing data" in err and "compas" in err
    assert not (tmp_path / "run" / "results.json").exists()


@pytest.mark.slow
def test_smoke_reproduction(tmp_path):
    out = tmp_path / "smoke"
    assert main(["reproduce", "--preset", "smoke", "--out", str(out)]) == 0
    res = load_results(out)  # the results contract: keys, metrics, complete claims
    assert res["preset"] == "smoke" and res["seeds"] == [0]
    ids = {c["id"] for c in res["claims"]}
    assert ids == {
        "monotonicity-guarantee",
        "autompg-accuracy",
        "friedman-noise-robust",
        "scalability",
    }
    assert all(isinstance(c["holds"], bool) for c in res["claims"])
    guarantee = next(c for c in res["claims"] if c["id"] == "monotonicity-guarantee")
    assert guarantee["holds"]  # structural: must hold even at smoke scale
    m = res["metrics"]
    for name in (
        "friedman_noise20/smnn/test_mse",
        "friedman_noise20/mlp/test_mse",
        "autompg/smnn/test_mse",
        "synthetic2d/same/test_mse",
        "autompg/smnn/violation_rate_init",
        "scalability/smnn/epoch_seconds_m20",
    ):
        assert name in m and m[name]["per_seed"]
    assert (out / "results.md").exists() and (out / "log.txt").exists()
    assert (out / "scalability.png").stat().st_size > 1000
    assert (out / "contour_2d.png").stat().st_size > 1000
    assert (out / "partial_results.json").exists()

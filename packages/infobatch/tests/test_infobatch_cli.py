"""Package-specific command-line behaviour (the common contract is tested in shared/tests):
the preset's own validation, an interrupted run resumed to the same numbers (tuning, seeds
and the r x delta sweep are units); the paper preset's whole path is
test_infobatch_paper_path.py."""

import json

import pytest
from iclr24_infobatch.experiment import main

from iclr24_common import is_timing_metric

TINY = ["--set", "n_train=400", "--set", "n_test=200", "--epochs", "3", "--set", "lr_grid=0.05,0.1",
        "--set", "sweep_ratios=0.5", "--set", "sweep_deltas=0.5,1.0"]  # fmt: skip


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["--epochs", "0"], "epochs must be >= 1"),
        (["--methods", "infobatch_r0.5"], "must include full"),
        (["--methods", "full", "random_r0.7"], "takes its budget from infobatch_r0.7"),
        (["--set", "datasets=svhn"], "datasets must be"),
        (["--set", "lr_grid=0.1,-1"], "lr_grid must be positive"),
        (["--set", "sweep_ratios=1.0"], "sweep_ratios"),
        (["--set", "delta=1.5"], "delta"),
    ],
)
def test_bad_preset_values_exit_2(argv, msg, tmp_path, capsys):
    try:
        code = main(["reproduce", "--preset", "smoke", *argv, "--out", str(tmp_path / "run")])
    except SystemExit as e:  # argparse
        code = e.code
    assert code == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("iclr24-infobatch")]
    assert len(err) == 1 and msg in err[0]


@pytest.mark.slow
def test_interrupted_run_resumes_to_the_same_numbers(tmp_path, monkeypatch):
    straight, cut = tmp_path / "straight", tmp_path / "cut"
    argv = ["reproduce", "--preset", "smoke", "--device", "cpu", *TINY]
    assert main([*argv, "--out", str(straight)]) == 0
    monkeypatch.setenv("ICLR24_INTERRUPT_AFTER_UNITS", "4")  # inside the tuning grid
    assert main([*argv, "--out", str(cut)]) == 130
    assert len(list((cut / "units").glob("*.pkl"))) == 4
    monkeypatch.delenv("ICLR24_INTERRUPT_AFTER_UNITS")
    assert main([*argv, "--out", str(cut), "--resume"]) == 0
    a, b = (json.loads((d / "results.json").read_text()) for d in (straight, cut))
    assert b["units"]["reused"] == 4 and b["units"]["computed"] == a["units"]["computed"] - 4
    for name, m in a["metrics"].items():
        if not is_timing_metric(name):
            assert b["metrics"][name]["per_seed"] == m["per_seed"], name
    # the sweep and its figure, the tuning table and every method's chosen lr are there
    assert {"mixture/sweep-r0.5-d0.5/saved_fraction", "mixture/sweep-r0.5-d1/saved_fraction",
            "mixture/random_r0.7/max_lr"} <= set(a["metrics"])  # fmt: skip
    assert set(a["tuning"]["mixture"]["full"]) == {"0.05", "0.1"}
    assert (straight / "saved_fraction_mixture.png").exists()
    assert (straight / "epoch_sizes.png").exists()
    # a larger delta anneals less, so it saves more
    m = a["metrics"]
    assert (
        m["mixture/sweep-r0.5-d1/saved_fraction"]["mean"]
        > m["mixture/sweep-r0.5-d0.5/saved_fraction"]["mean"]
    )
    ids = {c["id"] for c in a["claims"]}
    assert {"lossless/mixture", "saves-cost/mixture", "beats-random/mixture"} <= ids
    assert {c["id"] for c in a["checks"]} >= {"counters/mixture", "annealing/mixture",
                                               "equal-budget/mixture"}  # fmt: skip


def test_paper_preset_names_both_cifar_places(tmp_path, capsys):
    code = main(["reproduce", "--preset", "paper", "--data-dir", str(tmp_path),
                 "--out", str(tmp_path / "run"), "--device", "cpu"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and str(tmp_path / "infobatch" / "cifar-10-batches-py") in err
    assert not (tmp_path / "run" / "results.json").exists()

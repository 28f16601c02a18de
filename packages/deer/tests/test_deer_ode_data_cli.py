"""The ODE variant, the data loaders, the CLI and the smoke reproduction."""

import json
import pickle

import numpy as np
import pytest
import torch
from iclr24_deer import deer_ode
from iclr24_deer.cli import main
from iclr24_deer.data import (
    load_eigenworms,
    make_lowfreq_classification,
    read_ts,
    two_body_initial,
    two_body_reference,
    two_body_rhs,
)

from iclr24_common import MissingDataError, load_results

torch.set_num_threads(1)


def test_ode_linear_system_is_exact():
    """For dy/dt = A y the linearisation is exact: one Newton step gives expm(A t) y0."""
    A = torch.tensor([[0.0, 1.0], [-4.0, -0.1]], dtype=torch.float64)
    ts = torch.linspace(0, 3, 61, dtype=torch.float64)
    y0 = torch.tensor([1.0, 0.0], dtype=torch.float64)
    res = deer_ode(lambda y: A @ y, y0, ts)
    ref = torch.stack([torch.linalg.matrix_exp(A * t) @ y0 for t in ts])
    torch.testing.assert_close(res.y, ref, rtol=1e-10, atol=1e-10)
    assert res.converged and res.iterations == 2


def test_ode_two_body_matches_solve_ivp():
    y0 = two_body_initial(2, seed=1)
    ts = np.linspace(0, 3, 1201)
    res = deer_ode(two_body_rhs, torch.tensor(y0), torch.tensor(ts))
    ref = two_body_reference(y0, ts)
    assert res.converged
    assert np.abs(res.y.numpy() - ref).max() < 1e-4 * np.abs(ref).max() * 10
    # refining the grid reduces the error (second-order scheme)
    coarse = deer_ode(two_body_rhs, torch.tensor(y0), torch.tensor(ts[::4])).y.numpy()
    assert np.abs(coarse - ref[:, ::4]).max() > np.abs(res.y.numpy() - ref).max()


def test_lowfreq_task_shapes_and_classes():
    x, y = make_lowfreq_classification(20, 500, seed=3)
    assert x.shape == (20, 500, 6) and x.dtype == torch.float32
    assert y.min() >= 0 and y.max() < 5
    x2, y2 = make_lowfreq_classification(20, 500, seed=3)
    assert torch.equal(x, x2) and torch.equal(y, y2)


def _write_ts(path, x, labels):
    lines = [
        "# test file",
        "@problemName EigenWorms",
        "@univariate false",
        "@dimensions 2",
        "@equalLength true",
        f"@seriesLength {x.shape[1]}",
        "@classLabel true 1 2 3",
        "@data",
    ]
    for xi, lab in zip(x, labels):
        dims = [",".join(f"{v:.6f}" for v in xi[:, d]) for d in range(x.shape[2])]
        lines.append(":".join(dims) + f":{lab}")
    path.write_text("\n".join(lines) + "\n")


def test_read_ts_and_load_eigenworms_from_ts(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 7, 2)).astype(np.float32)
    labels = np.array(["1", "2", "3"] * 4)
    folder = tmp_path / "eigenworms"
    folder.mkdir()
    _write_ts(folder / "EigenWorms_TRAIN.ts", x[:8], labels[:8])
    _write_ts(folder / "EigenWorms_TEST.ts", x[8:], labels[8:])
    xr, lr = read_ts(folder / "EigenWorms_TRAIN.ts")
    np.testing.assert_allclose(xr, x[:8], atol=1e-6)
    assert list(lr) == list(labels[:8])
    splits = load_eigenworms(tmp_path)
    sizes = [len(splits[k][1]) for k in ("train", "val", "test")]
    assert sum(sizes) == 12 and sizes[0] == 8
    assert splits["train"][0].shape[1:] == (7, 2) and splits["train"][1].dtype == torch.int64


def test_load_eigenworms_official_pickles(tmp_path):
    folder = tmp_path / "eigenworms"
    folder.mkdir()
    for s, n in (("train", 5), ("val", 2), ("test", 2)):
        with open(folder / f"eigenworms_{s}.pkl", "wb") as fh:
            pickle.dump((torch.randn(n, 9, 6), torch.randint(0, 5, (n,))), fh)
    splits = load_eigenworms(tmp_path)
    assert splits["train"][0].shape == (5, 9, 6) and len(splits["test"][1]) == 2


def test_missing_eigenworms(tmp_path):
    with pytest.raises(MissingDataError, match="EigenWorms"):
        load_eigenworms(tmp_path)


def test_cli_paper_preset_without_data_exits_2(tmp_path, capsys):
    rc = main(
        [
            "reproduce",
            "--preset",
            "paper",
            "--data-dir",
            str(tmp_path / "d"),
            "--out",
            str(tmp_path / "o"),
            "--device",
            "cpu",
        ]
    )
    assert rc == 2
    assert "EigenWorms" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["reproduce", "--preset", "huge"],
        ["reproduce", "--seeds", "-1"],
        ["reproduce", "--threads", "0", "--preset", "smoke"],
        ["reproduce", "--device", "tpu"],
    ],
)
def test_cli_bad_input_exits_2(argv, tmp_path):
    try:
        rc = main([*argv, "--out", str(tmp_path)])
    except SystemExit as e:
        rc = e.code
    assert rc == 2


@pytest.mark.slow
def test_smoke_reproduction(tmp_path):
    out = tmp_path / "smoke"
    assert (
        main(
            [
                "reproduce",
                "--preset",
                "smoke",
                "--out",
                str(out),
                "--device",
                "cpu",
                "--threads",
                "1",
            ]
        )
        == 0
    )
    res = load_results(out)  # the results contract: keys, metrics, complete claims
    ids = {c["id"] for c in res["claims"]}
    assert ids == {
        "no-accuracy-loss",
        "exact-gradients",
        "training-unchanged",
        "training-faster",
        "ode-matches-solver",
        "speedup",
    }
    assert all(isinstance(c["holds"], bool) for c in res["claims"])
    for name in ("equiv/err_fp32", "train/loss_rel_gap", "ode/ode_relerr"):
        assert np.isfinite(res["metrics"][name]["mean"])
    assert (out / "results.md").exists() and (out / "log.txt").exists()
    assert (out / "speedup_cpu.png").exists() and (out / "speed_grid.json").exists()
    assert (out / "training_curves.png").exists()


def test_paper_preset_runs_on_a_tiny_eigenworms(tmp_path):
    """The paper preset's code path (official model, Adam 3e-5, best-val test accuracy) on a
    tiny stand-in dataset written in the official pickle format."""
    folder = tmp_path / "data" / "eigenworms"
    folder.mkdir(parents=True)
    g = torch.Generator().manual_seed(0)
    for s, n in (("train", 8), ("val", 4), ("test", 4)):
        with open(folder / f"eigenworms_{s}.pkl", "wb") as fh:
            pickle.dump((torch.randn(n, 40, 6, generator=g), torch.arange(n) % 5), fh)
    out = tmp_path / "paper"
    rc = main(
        [
            "reproduce",
            "--preset",
            "paper",
            "--data-dir",
            str(tmp_path / "data"),
            "--out",
            str(out),
            "--device",
            "cpu",
            "--epochs",
            "1",
            "--seeds",
            "0",
            "--skip-speed",
            "--threads",
            "1",
        ]
    )
    assert rc == 0
    res = json.loads((out / "results.json").read_text())
    assert {c["id"] for c in res["claims"]} == {
        "no-accuracy-loss-eigenworms",
        "eigenworms-accuracy",
    }
    assert res["metrics"]["eigenworms/init_logit_gap"]["mean"] < 1e-4
    assert 0.0 <= res["metrics"]["eigenworms/test_acc"]["mean"] <= 1.0

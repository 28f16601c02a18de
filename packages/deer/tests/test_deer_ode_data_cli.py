"""The ODE variant, the data loaders and the paper preset's path (the common CLI contract is
tested in shared/tests)."""

import pickle
import sys
import types

import numpy as np
import pytest
import torch
from iclr24_deer import deer_ode
from iclr24_deer.data import (
    load_eigenworms,
    make_lowfreq_classification,
    read_ts,
    two_body_initial,
    two_body_reference,
    two_body_rhs,
)
from iclr24_deer.experiment import main

from iclr24_common import MissingDataError, MissingDependencyError, load_results

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
    folder = tmp_path / "deer" / "EigenWorms"
    folder.mkdir(parents=True)
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
    folder = tmp_path / "deer" / "EigenWorms"
    folder.mkdir(parents=True)
    for s, n in (("train", 5), ("val", 2), ("test", 2)):
        with open(folder / f"eigenworms_{s}.pkl", "wb") as fh:
            pickle.dump((torch.randn(n, 9, 6), torch.randint(0, 5, (n,))), fh)
    splits = load_eigenworms(tmp_path)
    assert splits["train"][0].shape == (5, 9, 6) and len(splits["test"][1]) == 2


def test_missing_eigenworms(tmp_path):
    with pytest.raises(MissingDataError, match="EigenWorms"):
        load_eigenworms(tmp_path)


def test_download_fetches_through_aeon(tmp_path, monkeypatch):
    """--download calls aeon's load_classification with the extract layout we read from."""
    calls = []

    def load_classification(name, extract_path):
        calls.append((name, extract_path))
        folder = tmp_path / "deer" / "EigenWorms"
        folder.mkdir(parents=True)
        x = np.random.default_rng(0).standard_normal((10, 5, 2)).astype(np.float32)
        _write_ts(folder / "EigenWorms_TRAIN.ts", x[:6], ["1", "2"] * 3)
        _write_ts(folder / "EigenWorms_TEST.ts", x[6:], ["1", "2"] * 2)

    fake = types.ModuleType("aeon.datasets")
    fake.load_classification = load_classification
    monkeypatch.setitem(sys.modules, "aeon", types.ModuleType("aeon"))
    monkeypatch.setitem(sys.modules, "aeon.datasets", fake)
    with pytest.raises(MissingDataError):
        load_eigenworms(tmp_path)  # no fetching without download
    splits = load_eigenworms(tmp_path, download=True)
    assert calls == [("EigenWorms", str(tmp_path / "deer"))]
    assert sum(len(splits[k][1]) for k in splits) == 10
    load_eigenworms(tmp_path, download=True)  # files present: no second fetch
    assert len(calls) == 1


def test_download_without_aeon_names_the_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "aeon", None)
    monkeypatch.setitem(sys.modules, "aeon.datasets", None)
    with pytest.raises(MissingDependencyError, match="pip install aeon"):
        load_eigenworms(tmp_path, download=True)


def _tiny_eigenworms(root):
    folder = root / "deer" / "EigenWorms"
    folder.mkdir(parents=True)
    g = torch.Generator().manual_seed(0)
    for s, n in (("train", 8), ("val", 4), ("test", 4)):
        with open(folder / f"eigenworms_{s}.pkl", "wb") as fh:
            pickle.dump((torch.randn(n, 40, 6, generator=g), torch.arange(n) % 5), fh)


def test_paper_preset_runs_on_a_tiny_eigenworms(tmp_path):
    """The paper preset's code path (official model, Adam 3e-5, best-val test accuracy, the
    DEER-vs-sequential training comparison) on a tiny stand-in in the official pickle format,
    then --resume of the finished run (every unit reused, results unchanged)."""
    _tiny_eigenworms(tmp_path / "data")
    out = tmp_path / "paper"
    argv = ["reproduce", "--preset", "paper", "--data-dir", str(tmp_path / "data"),
            "--out", str(out), "--device", "cpu", "--threads", "1", "--epochs", "2", "--seeds", "0",
            "--skip-speed", "--set", "train_steps=3", "--set", "eq_hidden=2",
            "--set", "eq_lengths=50", "--set", "grad_hidden=2", "--set", "grad_length=50"]  # fmt: skip
    assert main(argv) == 0
    res = load_results(out)
    ids = {c["id"] for c in res["claims"]}
    assert {"eigenworms-accuracy", "training-faster"} <= ids
    assert "no-accuracy-loss-eigenworms" in {c["id"] for c in res["checks"]}
    assert res["config"]["epochs"] == 2 and res["config"]["speed_hidden"] == []
    assert res["metrics"]["eigenworms/init_logit_gap"]["mean"] < 1e-4
    assert 0.0 <= res["metrics"]["eigenworms/test_acc"]["mean"] <= 1.0
    assert (out / "checkpoints" / "eigenworms-seed0.pt").exists()
    assert main([*argv, "--resume"]) == 0
    again = load_results(out)
    assert again["units"]["computed"] == 0 and again["metrics"] == res["metrics"]


def test_eigenworms_fit_resumes_from_its_checkpoint(tmp_path):
    """An interrupted EigenWorms run continues from the last epoch's checkpoint and ends where
    an uninterrupted run ends."""
    from iclr24_deer.classifier import ClassifierConfig, ResidualGRUClassifier
    from iclr24_deer.train import fit

    _tiny_eigenworms(tmp_path)
    splits = load_eigenworms(tmp_path)
    cfg = ClassifierConfig(nstate=4, nlayer=1)

    def model():
        torch.manual_seed(0)
        return ResidualGRUClassifier(cfg)

    kw = {"batch": 4, "lr": 1e-2, "seed": 0}
    straight = model()
    fit(straight, splits, epochs=3, **kw)
    ck = tmp_path / "ck.pt"
    fit(model(), splits, epochs=1, checkpoint=ck, **kw)  # "interrupted" after one epoch
    resumed = model()
    fit(resumed, splits, epochs=3, checkpoint=ck, resume=True, **kw)
    for a, b in zip(straight.state_dict().values(), resumed.state_dict().values()):
        torch.testing.assert_close(a, b)

"""Loaders on small files written here, and the generated datasets' protocols."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from iclr24_smnn import data as D

from iclr24_common import MissingDataError


def _write(path, X, y):
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(np.column_stack([X, y])).to_csv(path, header=False, index=False)


def test_paper_loader_reads_official_layout(tmp_path):
    rng = np.random.default_rng(0)
    X, y = rng.random((20, 13)), rng.integers(0, 2, 20)
    _write(tmp_path / "smnn" / "heart" / "train.csv", X, y)
    Xte = rng.random((5, 13))
    Xte[0, 3] = np.nan  # official loaders drop incomplete rows
    _write(tmp_path / "smnn" / "heart" / "test.csv", Xte, np.ones(5))
    Xtr, ytr, Xt, yt = D.load_paper_dataset(tmp_path, "heart")
    assert Xtr.shape == (20, 13) and np.allclose(Xtr, X) and np.array_equal(ytr, y)
    assert Xt.shape == (4, 13) and yt.shape == (4,)


def test_paper_loader_errors(tmp_path):
    with pytest.raises(MissingDataError, match="compas") as e:
        D.load_paper_dataset(tmp_path, "compas")
    assert "github.com/retna319/SMNN" in str(e.value)
    with pytest.raises(MissingDataError):
        D.require_paper_data(tmp_path)
    _write(tmp_path / "smnn" / "loan" / "train.csv", np.zeros((3, 5)), np.zeros(3))
    _write(tmp_path / "smnn" / "loan" / "test.csv", np.zeros((3, 5)), np.zeros(3))
    with pytest.raises(ValueError, match="expected 29 columns"):
        D.load_paper_dataset(tmp_path, "loan")
    with pytest.raises(ValueError, match="unknown dataset"):
        D.load_paper_dataset(tmp_path, "mnist")


def test_autompg_from_vega_and_from_frame():
    X, y = D.autompg_frame()
    assert X.shape == (392, 7) and y.shape == (392,)  # the 392 complete rows
    assert np.isfinite(X).all() and 9 <= y.min() and y.max() <= 47
    # heavier cars use less fuel on average: the declared direction is right
    w = X[:, 3]
    assert y[w > np.median(w)].mean() < y[w <= np.median(w)].mean()
    df = pd.DataFrame(
        {
            "Miles_per_Gallon": [18.0, None, 30.0],
            "Cylinders": [8, 4, 4],
            "Displacement": [300.0, 100, 90],
            "Horsepower": [150.0, 70, 65],
            "Weight_in_lbs": [3500, 2000, 1900],
            "Acceleration": [12.0, 16, 17],
            "Year": pd.to_datetime(["1970-01-01", "1975-01-01", "1980-01-01"]),
            "Origin": ["USA", "Japan", "Europe"],
        }
    )
    X2, y2 = D.autompg_frame(df)
    assert X2.shape == (2, 7) and list(y2) == [18.0, 30.0]
    assert list(X2[:, 5]) == [1970.0, 1980.0] and list(X2[:, 6]) == [0.0, 1.0]
    with pytest.raises(ValueError, match="lacks columns"):
        D.autompg_frame(df.drop(columns=["Horsepower"]))


def test_friedman_protocol():
    s = D.friedman(20.0, n_samples=1000, seed=3)
    assert (len(s.X_train), len(s.X_val), len(s.X_test)) == (600, 200, 200)
    f = (
        10 * np.sin(np.pi * s.X_test[:, 0] * s.X_test[:, 1])
        + 20 * (s.X_test[:, 2] - 0.5) ** 2
        + 10 * s.X_test[:, 3]
        + 5 * s.X_test[:, 4]
    )
    assert np.allclose(s.y_test, f)  # scored against the noiseless function
    f_tr = (
        10 * np.sin(np.pi * s.X_train[:, 0] * s.X_train[:, 1])
        + 20 * (s.X_train[:, 2] - 0.5) ** 2
        + 10 * s.X_train[:, 3]
        + 5 * s.X_train[:, 4]
    )
    assert 17 < np.std(s.y_train - f_tr) < 23  # the training targets carry noise of std 20


def test_synthetic_and_scalability_data():
    s = D.synthetic_2d(500, seed=0)
    g = D.synthetic_2d_function
    assert np.allclose(s.y_test, g(s.X_test[:, 0], s.X_test[:, 1]))
    yy = np.linspace(0, 1, 50)
    assert np.all(np.diff(g(np.full(50, 0.3), yy)) > 0)  # increasing in y on [0, 1]
    assert [len(D.scalability_monotone(m)) for m in D.SCALABILITY_M] == [1, 2, 5, 10, 20]
    assert set(D.scalability_monotone(2)) == {5, 13} and set(D.scalability_monotone(20)) == set(
        range(20)
    )
    X, y = D.scalability_data(100, 0)
    assert X.shape == (100, 40) and y.shape == (100,)


def test_kfold_partitions():
    folds = D.kfold_indices(23, 5, np.random.default_rng(0))
    tests = np.concatenate([te for _, te in folds])
    assert sorted(tests) == list(range(23))
    for tr, te in folds:
        assert not set(tr) & set(te) and len(tr) + len(te) == 23


def test_paper_dataset_runs_on_small_files(tmp_path):
    """The paper preset's per-dataset measurement, on tiny CSVs in the official layout."""
    from iclr24_smnn.experiment import PRESETS, measure_paper_dataset

    rng = np.random.default_rng(0)
    for name, d in (("heart", 13), ("blogfeedback", 280)):
        for part, n in (("train", 60), ("test", 20)):
            y = rng.integers(0, 2, n) if name == "heart" else rng.random(n)
            _write(tmp_path / "smnn" / name / f"{part}.csv", rng.random((n, d)), y)
    preset = replace(PRESETS["smoke"], max_epochs=2)
    heart, config = measure_paper_dataset(preset, "heart", "smnn", 0, tmp_path)
    assert 0.0 <= heart["test_accuracy"] <= 1.0 and heart["violation_rate"] == 0.0
    assert config == {"lr": 0.005} and heart["trials"] == 1  # smoke: no tuning
    blog, _ = measure_paper_dataset(preset, "blogfeedback", "gbm", 0, tmp_path)
    assert blog["test_rmse"] == pytest.approx(np.sqrt(blog["test_mse"]))
    assert blog["violation_rate"] == 0.0

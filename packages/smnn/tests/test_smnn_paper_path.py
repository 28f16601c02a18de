"""The paper preset (every task: Friedman #1 at the five official noise levels, the 2-D
function, Auto MPG by 5-fold cross-validation, the 40-input timing, and the four real data
sets; every model tuned on its grid) end to end, with miniatures of the real data sets it
reads written in their real on-disk format: the official repository's preprocessed CSVs
(retna319/SMNN bb954bf, ``compas/train.csv`` ...: ``numpy.savetxt`` output, no header,
comma-separated ``%.18e`` values, the features then the label; 0/1 labels for COMPAS, Loan and
Heart, a non-negative count for BlogFeedback) under ``<data-dir>/smnn/<name>/{train,test}.csv``.
Friedman #1, the 2-D function and the timing data are generated and Auto MPG is bundled
(``vega_datasets``), as in the real run.

Reduced (sizes only): 30 training / 10 test rows per real data set (COMPAS has ~5 000, Loan
~420 000, Heart ~300, BlogFeedback ~52 000); 1 seed of 5; 2 epochs (cap 5 000) with
patience 1 (300); Friedman 50 rows (1 000), the 2-D function 50 (10 000), the timing data 200
(20 000) timed for 2 epochs (11); Auto MPG 2 folds (5); UMNN 5 quadrature steps (50).
"""

from dataclasses import replace

import numpy as np
from iclr24_smnn import data as D
from iclr24_smnn.experiment import app

from iclr24_common import sha256_of
from iclr24_common.testing import run_paper_preset


def write_official_csvs(root, n_train=30, n_test=10, seed=0):
    """``root/smnn/<name>/{train,test}.csv`` for the four real data sets, as numpy.savetxt wrote
    the official files (features in [0, 1] as the official preprocessing scales them)."""
    rng = np.random.default_rng(seed)
    for name, spec in D.PAPER_DATASETS.items():
        folder = root / "smnn" / name
        folder.mkdir(parents=True)
        for split, n in (("train", n_train), ("test", n_test)):
            X = rng.random((n, spec.n_features))
            if spec.task == "classification":
                y = (X[:, list(spec.monotone)].sum(1) > len(spec.monotone) / 2).astype(float)
            else:  # BlogFeedback: comments in the next 24 h, a count
                y = np.floor(10 * X[:, list(spec.monotone)].sum(1))
            np.savetxt(folder / f"{split}.csv", np.column_stack([X, y]), delimiter=",")


def pin_miniatures(monkeypatch, root):
    """The pinned official files (COMPAS, Heart) pinned to the miniatures' checksums: the
    paper preset verifies every pinned file before it trains."""
    for name, files in D.REMOTE.items():
        pins = tuple(replace(f, sha256=sha256_of(root / "smnn" / f.path)) for f in files)
        monkeypatch.setitem(D.REMOTE, name, pins)


def test_miniature_csvs_have_the_official_format(tmp_path):
    write_official_csvs(tmp_path)
    first = (tmp_path / "smnn/compas/train.csv").read_text().splitlines()[0].split(",")
    assert len(first) == 14 and all(len(v.split("e")[0].split(".")[1]) == 18 for v in first)
    Xtr, ytr, Xte, yte = D.load_paper_dataset(tmp_path, "blogfeedback")
    assert Xtr.shape == (30, 280) and Xte.shape == (10, 280) and (ytr >= 0).all()


SIZES = {"seeds": 0, "max_epochs": 2, "patience": 1, "friedman_n": 50, "synth_n": 50,
         "scal_n": 200, "scal_epochs": 2, "autompg_folds": 2, "umnn_steps": 5}  # fmt: skip


def test_paper_preset_runs_on_miniature_official_csvs(tmp_path, monkeypatch):
    data = tmp_path / "data"
    write_official_csvs(data)
    pin_miniatures(monkeypatch, data)
    res = run_paper_preset(app, data, tmp_path / "run", sets=SIZES)
    cfg = res["config"]
    assert cfg["tune"] and "paper_datasets" in cfg["tasks"] and len(cfg["friedman_noises"]) == 5
    m = res["metrics"]
    for name, spec in D.PAPER_DATASETS.items():  # BCE on the logit for the 0/1 labels
        metric = "test_accuracy" if spec.task == "classification" else "test_rmse"
        assert f"{name}/smnn/{metric}" in m, name
    assert any(k.startswith("scalability/smnn/epoch_seconds_m20") for k in m)
    assert set(res["data_files"]) == {f"{n}/{s}.csv" for n in D.PAPER_DATASETS
                                      for s in ("train", "test")}  # fmt: skip

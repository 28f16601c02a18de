"""The paper preset runs end to end on miniatures of the files it reads (issue 41): ETTh1.csv in
the ETDataset layout and the 30 UEA sets as the archive's .ts files, through the real CLI
(``reproduce --preset paper --data-dir``), with ``--set`` capping sizes only (and training on
four of the 30 UEA sets; all 30 go through the loader).

What is reduced (everything else is the paper preset's): seed 0 (paper 0, 1, 2); AutoTCL 1
epoch (115), TS2Vec and the UEA budget 1 iteration (200); the encoder at the paper's architecture
(the official CoST encoder: dilated residual blocks + the trend head of kernels 1..128) with a
reduced width: 8 hidden, 2 blocks, 64 out (64, 10, 320; 64 is the smallest that takes the
official size's FFT trend head), the augmentation trunk 8 hidden, 1 block, 4 out (64, 3, 16);
the causal encoding's padding 8 (200). ETTh1.csv's pinned SHA-256 is the miniature's. The ETTh1 miniature has the 14,400 rows
that TS2Vec's fixed 12/4/4-month splits read (the real file: 17,420); every UEA set keeps its
real number of channels, variable lengths where the real set has them and string or numeric
labels, with 4 training and 4 test cases of 2 classes and at most 12 steps."""

import numpy as np
from iclr24_autotcl import data as autotcl_data
from iclr24_autotcl.data import UEA30
from iclr24_autotcl.experiment import app

from iclr24_common import RemoteFile, sha256_of
from iclr24_common.testing import run_paper_preset

# name: (channels, variable length, two labels as the real files write them)
UEA_FORMAT = {
    "ArticularyWordRecognition": (9, False, ("1.0", "2.0")),
    "AtrialFibrillation": (2, False, ("n", "s")),
    "BasicMotions": (6, False, ("Standing", "Running")),
    "CharacterTrajectories": (3, True, ("1", "2")),
    "Cricket": (6, False, ("1.0", "2.0")),
    "DuckDuckGeese": (1345, False, ("Black-bellied_Whistling_Duck", "Canadian_Goose")),
    "EigenWorms": (6, False, ("1", "2")),
    "Epilepsy": (3, False, ("EPILEPSY", "WALKING")),
    "ERing": (4, False, ("1", "2")),
    "EthanolConcentration": (3, False, ("E35", "E38")),
    "FaceDetection": (144, False, ("0", "1")),
    "FingerMovements": (28, False, ("left", "right")),
    "HandMovementDirection": (10, False, ("right", "forward")),
    "Handwriting": (3, False, ("1.0", "2.0")),
    "Heartbeat": (61, False, ("normal", "abnormal")),
    "InsectWingbeat": (200, True, ("Aedes_female", "Aedes_male")),
    "JapaneseVowels": (12, True, ("1", "2")),
    "Libras": (2, False, ("1", "2")),
    "LSST": (6, False, ("6", "15")),
    "MotorImagery": (64, False, ("finger", "tongue")),
    "NATOPS": (24, False, ("1.0", "2.0")),
    "PEMS-SF": (963, False, ("1.0", "2.0")),
    "PenDigits": (2, False, ("0", "1")),
    "PhonemeSpectra": (11, False, ("AA", "AE")),
    "RacketSports": (6, False, ("Badminton_Smash", "Squash_BackhandBoast")),
    "SelfRegulationSCP1": (6, False, ("negativity", "positivity")),
    "SelfRegulationSCP2": (7, False, ("negativity", "positivity")),
    "SpokenArabicDigits": (13, True, ("1", "2")),
    "StandWalkJump": (4, False, ("standing", "walking")),
    "UWaveGestureLibrary": (3, False, ("1.0", "2.0")),
}


def write_etth1(path, rows: int = 14_400, seed: int = 0) -> None:
    """ETTh1.csv as ETDataset ships it: date, the six load columns, OT (oil temperature)."""
    rng = np.random.default_rng(seed)
    stamps = np.datetime64("2016-07-01T00") + np.arange(rows).astype("timedelta64[h]")
    t = np.arange(rows)
    ot = 15 + 5 * np.sin(2 * np.pi * t / 24) + np.cumsum(rng.standard_normal(rows)) * 0.05
    loads = 5 + rng.standard_normal((rows, 6))
    lines = ["date,HUFL,HULL,MUFL,MULL,LUFL,LULL,OT"]
    for s, load, y in zip(stamps, loads, ot):
        lines.append(f"{str(s).replace('T', ' ')}:00:00," + ",".join(f"{v:.15g}" for v in load)
                     + f",{y:.15g}")  # fmt: skip
    path.write_text("\n".join(lines) + "\n")


def write_ts(path, name: str, split: str, seed: int) -> None:
    """A .ts file of the UEA archive: the @ header, then one case per line, channels separated
    by ':', values by ',', the class label last."""
    channels, variable, labels = UEA_FORMAT[name]
    rng = np.random.default_rng(seed)
    header = [f"#{name} {split}: a miniature written by the paper-path test",
              f"@problemName {name}", "@timeStamps false", "@missing false",
              f"@univariate {'true' if channels == 1 else 'false'}", f"@dimensions {channels}",
              f"@equalLength {'false' if variable else 'true'}"]  # fmt: skip
    if not variable:
        header.append("@seriesLength 12")
    header += [f"@classLabel true {' '.join(labels)}", "@data"]
    cases = []
    for i in range(4):
        length = int(rng.integers(3, 13)) if variable else 12
        label = labels[i % 2]
        x = rng.standard_normal((channels, length)) + (i % 2)
        cases.append(":".join(",".join(f"{v:.6g}" for v in ch) for ch in x) + f":{label}")
    path.write_text("\n".join(header + cases) + "\n")


def write_miniatures(root) -> None:
    folder = root / "autotcl"
    folder.mkdir(parents=True)
    write_etth1(folder / "ETTh1.csv")
    for k, name in enumerate(UEA30):
        (folder / "UEA" / name).mkdir(parents=True)
        for split in ("TRAIN", "TEST"):
            write_ts(folder / "UEA" / name / f"{name}_{split}.ts", name, split, 2 * k + (split == "TEST"))  # fmt: skip


def pin_miniature(monkeypatch, path) -> str:
    """The paper preset checks ETTh1.csv against its pinned SHA-256: pin the miniature's."""
    digest = sha256_of(path)
    real = autotcl_data.PINNED["ETTh1"]
    monkeypatch.setitem(autotcl_data.PINNED, "ETTh1", RemoteFile(real.url, real.path, digest))
    return digest


# the paper preset's run below trains on four of the 30 (CI time: 30 sets x 4 methods were most of
# this test): fixed and variable lengths, numeric, float-like and word labels; every one of the
# 30 miniatures goes through the loader in the test after it
RUN_UEA = ("ArticularyWordRecognition", "CharacterTrajectories", "Epilepsy", "JapaneseVowels")


def test_paper_preset_runs_on_miniatures_of_etth1_and_the_30_uea_sets(tmp_path, monkeypatch):
    assert set(UEA_FORMAT) == set(UEA30)
    write_miniatures(tmp_path / "data")
    digest = pin_miniature(monkeypatch, tmp_path / "data" / "autotcl" / "ETTh1.csv")
    sizes = {
        "seeds": "0",
        "autotcl_epochs": 1,
        "ts2vec_iters": 1,
        "uea_iters": 1,
        "hidden_dims": 8,  # reduced widths of the paper's architecture (64, 10 blocks, 320)
        "depth": 2,
        "output_dims": 64,  # FFT_MIN_DIMS: the trend head takes the 320-d run's FFT path
        "aug_hidden_dims": 8,  # the augmentation trunk (64, 3 blocks, 16)
        "aug_depth": 1,
        "aug_dim": 4,
        "sliding_padding": 8,
        "uea": ",".join(RUN_UEA),
    }
    res = run_paper_preset(app, tmp_path / "data", tmp_path / "run", sets=sizes)
    ids = {c["id"] for c in res["claims"]}
    forecasting = {"forecast/vs-ts2vec", "forecast/official-vs-ts2vec", "forecast/vs-random-mask",
                   "mask/not-degenerate"} | {f"forecast/h{h}-vs-ts2vec" for h in (24, 48, 168, 336, 720)}  # fmt: skip
    assert ids == forecasting | {f"classify/{name}-vs-ts2vec" for name in RUN_UEA}
    assert res["data_files"] == {"ETTh1.csv": digest}  # checked and recorded
    assert {p["id"] for p in res["premises"]} == {"forecast/vs-raw-lag"}  # no oracle for ETTh1
    # every seed scores ETTh1's test split and each UEA test set: the SE includes the items
    assert all(
        c["test_set"] == "shared" and c["test"]["se_basis"] == "items"
        for c in res["claims"]
        if c["id"] != "mask/not-degenerate"  # a share of the training series, not a test score
    )
    assert all(c["regime"] == "below" for c in res["claims"])  # the widths are cut here
    # one seed: each claim computed
    assert all(p.get("n", 1) == 1 for c in res["claims"] for p in c["test"]["parts"] or [c["test"]])
    metrics = res["metrics"]
    assert metrics["autotcl/iters"]["per_seed"] == [1.0]  # 33 windows of 257, batch 32
    for h in (24, 48, 168, 336, 720):  # the paper's five ETTh1 horizons
        assert np.isfinite(metrics[f"autotcl/mse_h{h}"]["mean"])
    assert {c["verdict"] for c in res["claims"]} <= {"holds", "fails", "inconclusive"}


def test_every_uea_miniature_loads_as_the_archive_writes_it(tmp_path):
    """All 30 sets through the loader the paper preset uses: channels, labels, lengths."""
    write_miniatures(tmp_path)
    for name in UEA30:
        channels, variable, labels = UEA_FORMAT[name]
        task = autotcl_data.load_classification(name, tmp_path)
        assert task.train_x.shape[0] == task.test_x.shape[0] == 4, name
        assert task.train_x.shape[2] == channels and task.classes == tuple(sorted(labels)), name
        assert set(task.train_y) == {0, 1}, name
        if not variable:  # a fixed-length set has no NaN padding (TS2Vec pads shorter series)
            assert not np.isnan(task.train_x).any() and task.train_x.shape[1] == 12, name

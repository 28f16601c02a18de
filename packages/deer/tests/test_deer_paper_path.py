"""The ``paper`` preset end to end on a miniature EigenWorms (issue 41): the two UEA ``.ts``
files the loader reads (``<data-dir>/deer/EigenWorms/EigenWorms_{TRAIN,TEST}.ts``, aeon's
extract layout: the archive's header, then one line per series, its six channels'
comma-separated values joined by ``:``, the class label last). 20 series of 32 steps instead
of 259 of 17,984. ``--set`` caps only sizes: one seed, epochs, training steps, the
equivalence / gradient / speed grids' lengths and hidden sizes. The classifier is the paper
preset's (the official 04_rnn_eigenworms model: 32 states, 5 layers)."""

import numpy as np
from iclr24_deer.data import load_eigenworms, read_ts
from iclr24_deer.experiment import PRESETS, app

from iclr24_common.testing import run_paper_preset

HEADER = """#The data was derived from the C. elegans eigenworms (miniature for the tests).
@problemName EigenWorms
@timeStamps false
@missing false
@univariate false
@dimensions 6
@equalLength true
@seriesLength {T}
@classLabel true 1 2 3 4 5
@data
"""


def write_eigenworms_ts(folder, n_train=10, n_test=10, T=32, seed=0):
    """EigenWorms_TRAIN.ts and EigenWorms_TEST.ts in the UEA format, classes 1..5."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True)
    for split, n in (("TRAIN", n_train), ("TEST", n_test)):
        lines = []
        for i in range(n):
            label = i % 5 + 1
            x = np.cumsum(rng.normal(0.1 * label, 1.0, size=(6, T)), axis=1)
            lines.append(":".join(",".join(f"{v:.6g}" for v in ch) for ch in x) + f":{label}")
        (folder / f"EigenWorms_{split}.ts").write_text(HEADER.format(T=T) + "\n".join(lines) + "\n")


SIZE_CAPS = {
    "seeds": "23",  # the first of the paper preset's (23, 24, 25)
    "epochs": 1,  # (paper preset: 100)
    "train_steps": 2,  # DEER-vs-sequential training steps (paper preset: 20)
    "eq_hidden": "1,4",  # equivalence grid (preset: 1, 4, 16 x 1,000, 10,000 steps)
    "eq_lengths": "16,32",
    "grad_hidden": 4,
    "grad_length": 32,  # (preset: 1,000)
    "speed_hidden": "1,4",  # speed grid (paper preset: 1..64 x 1,000..1,000,000 steps)
    "speed_lengths": "32,64",
    "speed_batch": 2,  # (preset: 16)
    "speed_reps": 1,  # (preset: 3)
    "mem_length": 200,  # peak-RSS comparison at n = 64 (preset: T 2,000)
}


def test_deer_paper_path_reads_the_uea_ts_files(tmp_path):
    paper = PRESETS["paper"]
    assert (paper.data, paper.width, paper.layers) == ("eigenworms", 32, 5)
    folder = tmp_path / "data" / "deer" / "EigenWorms"
    write_eigenworms_ts(folder)
    x, labels = read_ts(folder / "EigenWorms_TRAIN.ts")
    assert x.shape == (10, 32, 6) and sorted(set(labels)) == ["1", "2", "3", "4", "5"]
    splits = load_eigenworms(tmp_path / "data")
    assert sum(len(splits[k][1]) for k in ("train", "val", "test")) == 20
    res = run_paper_preset(app, tmp_path / "data", tmp_path / "run", sets=SIZE_CAPS)
    ids = {c["id"] for c in res["claims"]}
    checks = {c["id"] for c in res["checks"]}
    assert "eigenworms-accuracy" in ids and "no-accuracy-loss-eigenworms" in checks, ids
    assert any(i.startswith("speedup-hidden") for i in ids), ids
    assert "quasi-deer-memory-rss" in checks, checks  # an extension: a check, not a claim
    acc = next(c for c in res["claims"] if c["id"] == "eigenworms-accuracy")
    assert acc["test_set"] == "shared" and acc["test"]["se_basis"] == "items"

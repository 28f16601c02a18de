"""The paper preset (official main.py at tmllab/2024_ICLR_LabelWave cf3e9eb: CIFAR-10,
ResNet-18, batch 128, lr 0.01, crop + flip; here with the three noise kinds and the 10% / 20%
hold-outs) end to end on a miniature CIFAR-10 written in the real on-disk format: the "python
version" pickles as Python 2's cPickle wrote them (protocol 2, py2 ``str`` keys and strings,
numpy's reconstructor under ``numpy.core``), in ``labelwave/cifar-10-batches-py/`` with
``data_batch_1..5``, ``test_batch`` and ``batches.meta``; and the CIFAR-100 layout
(``cifar-100-python/train``, ``test``, ``meta``) through the loader.

Reduced (sizes only): 10 training images (2 per batch file) and 10 test images instead of
50 000 / 10 000; 4 epochs of 200 (the fewest that give Label Wave's first moving average at
window 3). Everything else is the paper preset's: its one seed, the full-width ResNet-18 with the CIFAR stem, batch 128, augmentation, every noise kind (the
instance-dependent one projects the raw image bytes) and both hold-outs.
"""

import pickle

import numpy as np
from iclr24_labelwave.data import load_cifar
from iclr24_labelwave.experiment import app

from iclr24_common.testing import run_paper_preset, write_cifar10, write_cifar100


def test_miniatures_have_the_real_pickle_format(tmp_path):
    root = tmp_path / "labelwave"
    write_cifar10(root / "cifar-10-batches-py", n_per_batch=2)
    write_cifar100(root / "cifar-100-python")
    raw = (root / "cifar-10-batches-py" / "data_batch_1").read_bytes()
    assert raw[:4] == b"\x80\x02}q"  # protocol 2, a dict: as the real files begin
    assert set(pickle.loads(raw, encoding="bytes")) == {b"batch_label", b"labels", b"data",
                                                        b"filenames"}  # fmt: skip
    assert set(pickle.loads(raw, encoding="latin1")) == {"batch_label", "labels", "data",
                                                         "filenames"}  # fmt: skip
    first = pickle.loads(raw, encoding="bytes")[b"data"][0].reshape(3, 32, 32)
    data = load_cifar(tmp_path, "cifar10")
    assert data.x_train.shape == (10, 3, 32, 32) and data.x_test.shape == (10, 3, 32, 32)
    assert np.array_equal(data.raw_train[0], first.transpose(1, 2, 0))
    data = load_cifar(tmp_path, "cifar100")
    assert data.x_train.shape == (200, 3, 32, 32) and data.num_classes == 100
    assert set(data.y_train.tolist()) == set(range(100))


def test_paper_preset_runs_on_miniature_cifar10(tmp_path):
    data = tmp_path / "data"
    write_cifar10(data / "labelwave" / "cifar-10-batches-py", n_per_batch=2)
    res = run_paper_preset(app, data, tmp_path / "run", sets={"train.epochs": 4})
    cfg = res["config"]
    assert cfg["data"] == "cifar10" and cfg["seeds"] == [1]
    assert (cfg["train"]["batch_size"], cfg["train"]["augment"]) == (128, True)
    ids = {c["id"] for c in res["claims"]}
    assert {"near-oracle", "near-oracle-epoch", "vs-holdout/sym0.4", "vs-holdout/pair0.3",
            "vs-holdout/instance0.4"} <= ids  # fmt: skip
    # CIFAR's one test set scores every seed: the accuracy claims carry its items' SE
    for c in res["claims"]:
        parts = c["test"]["parts"] or [c["test"]]
        if c["test_set"] == "shared":
            assert all(p["se_basis"] == "items" for p in parts), c["id"]
    assert {c["test_set"] for c in res["claims"]} == {"shared", "none"}
    assert {c["regime"] for c in res["claims"]} == {"below"}  # 4 epochs, not the paper's 200
    assert {p["id"] for p in res["premises"]} == {"stops/sym0.4", "stops/pair0.3",
                                                  "stops/instance0.4"}  # fmt: skip
    for g in ("sym0.4", "pair0.3", "instance0.4"):
        for m in ("labelwave/test_acc", "holdout10/test_acc", "holdout20/test_acc"):
            assert f"{g}/{m}" in res["metrics"]

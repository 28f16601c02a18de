"""The paper preset end to end on miniature CIFAR-10 and CIFAR-100 in the real on-disk format.

The miniatures are the python pickles of the real archives (cifar-10-batches-py/data_batch_1..5
and test_batch with b"data" (N, 3072) uint8, b"labels", b"batch_label", b"filenames", plus
batches.meta; cifar-100-python/train and test with b"fine_labels" and b"coarse_labels", plus
meta), under ``<data-dir>/infobatch/``. The run is the real ``reproduce --preset paper`` (ResNet-18
SGD on CIFAR-10, ResNet-50 LARS on CIFAR-100, augmentation, OneCycle, every method, the
interleaved timing) with only sizes reduced: 8 images per training batch file (40 train, 20 test
for CIFAR-10; 48 / 24 for CIFAR-100), 3 epochs instead of 200 (epoch 0 unscored, epoch 1 pruned,
epoch 2 annealed), the ResNets' width 4 instead of 64 (the paper's ResNets do not train on CPU in
seconds), 1 seed.
"""

import pickle

import numpy as np
from iclr24_infobatch.experiment import app

from iclr24_common.testing import run_paper_preset


def _dump(path, obj):
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=2)  # the archives are python 2 pickles (bytes keys)


def _batch(rng, n, classes, label_keys, name):
    data = rng.integers(0, 256, size=(n, 3072), dtype=np.uint8)  # rows: R, G, B planes of 32x32
    out = {b"batch_label": name, b"data": data,
           b"filenames": [b"img_%05d.png" % i for i in range(n)]}  # fmt: skip
    labels = rng.integers(0, classes, size=n)
    for key in label_keys:
        out[key] = [int(v) for v in labels]  # lists of ints, as in the archives
    return out


def write_cifar10(root, rng, per_batch=8, test=20):
    base = root / "cifar-10-batches-py"
    base.mkdir(parents=True)
    for i in range(1, 6):
        _dump(base / f"data_batch_{i}",
              _batch(rng, per_batch, 10, [b"labels"], b"training batch %d of 5" % i))  # fmt: skip
    _dump(base / "test_batch", _batch(rng, test, 10, [b"labels"], b"testing batch 1 of 1"))
    _dump(base / "batches.meta", {b"label_names": [b"c%d" % i for i in range(10)],
                                  b"num_cases_per_batch": per_batch, b"num_vis": 3072})  # fmt: skip


def write_cifar100(root, rng, train=48, test=24):
    base = root / "cifar-100-python"
    base.mkdir(parents=True)
    keys = [b"fine_labels", b"coarse_labels"]
    _dump(base / "train", _batch(rng, train, 100, keys, b"training batch 1 of 1"))
    _dump(base / "test", _batch(rng, test, 100, keys, b"testing batch 1 of 1"))
    _dump(base / "meta", {b"fine_label_names": [b"f%d" % i for i in range(100)],
                          b"coarse_label_names": [b"c%d" % i for i in range(20)]})  # fmt: skip


def test_paper_preset_runs_on_miniature_cifar(tmp_path):
    rng = np.random.default_rng(0)
    data = tmp_path / "data"
    write_cifar10(data / "infobatch", rng)
    write_cifar100(data / "infobatch", rng)
    res = run_paper_preset(app, data, tmp_path / "run",
                           sets={"epochs": 3, "resnet_width": 4})  # fmt: skip
    ids = {c["id"] for c in res["claims"]}
    assert ids == {"lossless/cifar10", "saves-cost/cifar10", "wall-clock/cifar10",
                   "beats-random/cifar10", "beats-hard/cifar10", "lossless/cifar100",
                   "saves-cost/cifar100", "beats-random/cifar100", "beats-hard/cifar100"}  # fmt: skip
    assert all(c["holds"] for c in res["checks"]), [c for c in res["checks"] if not c["holds"]]
    tasks = res["tasks"]
    assert tasks["cifar10"]["model"] == "resnet18" and tasks["cifar100"]["model"] == "resnet50"
    assert tasks["cifar100"]["train"]["optimizer"] == "lars"
    assert tasks["cifar100"]["train"]["batch_size"] == 256 and tasks["cifar10"]["train"]["augment"]
    assert res["tuning"] == {"cifar10": {}, "cifar100": {}}  # the official lrs, untuned
    assert res["metrics"]["cifar10/full/max_lr"]["mean"] == 0.05
    assert res["metrics"]["cifar100/full/max_lr"]["mean"] == 5.2
    assert res["config"]["epochs"] == 3 and res["config"]["datasets"] == ["cifar10", "cifar100"]
    # the timing ran its 2 repeats on the first dataset; the pruned epoch saved passes
    assert len(res["metrics"]["cifar10/interleaved/time_ratio"]["per_seed"]) == 2
    assert res["metrics"]["cifar10/infobatch_r0.5/saved_fraction"]["mean"] > 0

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

import io
import pickle
import struct

import numpy as np
from iclr24_labelwave.data import load_cifar
from iclr24_labelwave.experiment import app

from iclr24_common.testing import run_paper_preset


class _Py2Pickler(pickle._Pickler):
    """Protocol 2 as Python 2's cPickle wrote the CIFAR files: every str is a py2 ``str``
    (SHORT_BINSTRING / BINSTRING), so ``pickle.load(f, encoding="bytes")`` gives bytes keys and
    ``encoding="latin1"`` str keys, as on the real files; numpy's reconstructor is named by its
    Python 2 module (``numpy.core.multiarray``)."""

    def save(self, obj, save_persistent_id=True):
        if type(obj) in (str, bytes):
            data = obj.encode("latin1") if isinstance(obj, str) else obj
            n = len(data)
            self.write(b"U" + bytes([n]) + data if n < 256 else b"T" + struct.pack("<i", n) + data)
            return
        super().save(obj, save_persistent_id)

    def save_global(self, obj, name=None):
        module = getattr(obj, "__module__", "")
        if module.startswith("numpy._core"):
            name = (name or obj.__qualname__).encode()
            self.write(b"c" + module.replace("numpy._core", "numpy.core").encode() + b"\n" + name
                       + b"\n")  # fmt: skip
            self.memoize(obj)
            return
        super().save_global(obj, name)


def _dump_py2(obj, path) -> None:
    buf = io.BytesIO()
    _Py2Pickler(buf, protocol=2).dump(obj)
    path.write_bytes(buf.getvalue())


def write_cifar10(folder, n_per_batch=2, n_test=10, seed=0):
    """``folder`` = ``.../cifar-10-batches-py``: five training batches and the test batch
    (dict: batch_label, labels (list of int), data (n, 3072) uint8 row-major R, G, B planes,
    filenames), and batches.meta (label_names, num_cases_per_batch, num_vis)."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    for b, name in enumerate(names):
        n = n_test if name == "test_batch" else n_per_batch
        labels = [int(c) for c in (np.arange(n) + b * n_per_batch) % 10]  # every class once
        label = "testing batch 1 of 1" if name == "test_batch" else f"training batch {b + 1} of 5"
        _dump_py2({"batch_label": label, "labels": labels,
                   "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
                   "filenames": [f"img_{b}_{i}.png" for i in range(n)]}, folder / name)  # fmt: skip
    _dump_py2({"num_cases_per_batch": n_per_batch, "num_vis": 3072,
               "label_names": ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog",
                               "horse", "ship", "truck"]}, folder / "batches.meta")  # fmt: skip


def write_cifar100(folder, n_train=200, n_test=100, seed=0):
    """``folder`` = ``.../cifar-100-python``: train, test (dict: filenames, batch_label,
    fine_labels, coarse_labels, data) and meta (fine_label_names, coarse_label_names)."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    for name, n in (("train", n_train), ("test", n_test)):
        fine = [int(c) for c in np.arange(n) % 100]
        _dump_py2({"filenames": [f"{name}_{i}.png" for i in range(n)],
                   "batch_label": f"{name}ing batch 1 of 1", "fine_labels": fine,
                   "coarse_labels": [c // 5 for c in fine],
                   "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8)}, folder / name)  # fmt: skip
    _dump_py2(
        {
            "fine_label_names": [f"c{i}" for i in range(100)],
            "coarse_label_names": [f"s{i}" for i in range(20)],
        },
        folder / "meta",
    )


def test_miniatures_have_the_real_pickle_format(tmp_path):
    root = tmp_path / "labelwave"
    write_cifar10(root / "cifar-10-batches-py")
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
    write_cifar10(data / "labelwave" / "cifar-10-batches-py")
    res = run_paper_preset(app, data, tmp_path / "run", sets={"train.epochs": 4})
    cfg = res["config"]
    assert cfg["data"] == "cifar10" and cfg["seeds"] == [1]
    assert (cfg["train"]["batch_size"], cfg["train"]["augment"]) == (128, True)
    ids = {c["id"] for c in res["claims"]}
    assert {"near-oracle", "vs-holdout/sym0.4", "vs-holdout/pair0.3",
            "vs-holdout/instance0.4"} <= ids  # fmt: skip
    for g in ("sym0.4", "pair0.3", "instance0.4"):
        for m in ("labelwave/test_acc", "holdout10/test_acc", "holdout20/test_acc"):
            assert f"{g}/{m}" in res["metrics"]

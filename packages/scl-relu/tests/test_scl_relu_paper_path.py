"""The paper preset (CIFAR-10, ResNet-18 with the CIFAR stem, R in {10, 100}, every variant,
SupContrast's recipe) end to end on a miniature CIFAR-10 written in the real on-disk format:
the "python version" pickles as Python 2's cPickle wrote them (protocol 2, py2 ``str`` keys
and strings, numpy's reconstructor under ``numpy.core``), in ``cifar-10-batches-py/`` with
``data_batch_1..5``, ``test_batch`` and ``batches.meta``.

Reduced (sizes only): 20 training images (4 per batch file) and 10 test images instead of
50 000 / 10 000; 1 seed of 3; 1 epoch of 350; UFM 20 GD steps of 600 and 6 examples per
majority class of 100. Everything else is the paper preset's: ResNet-18 (full width), batch
1024 (one batch per epoch here), lr 0.5, warm-up 10, temperature 0.1, dim 128, both ratios,
all four variants, the UFM part at its scale. Then ``--resume`` of the finished run recomputes
nothing and gives the same metrics.
"""

import io
import json
import pickle
import struct

import numpy as np
from iclr24_scl_relu.data import load_cifar
from iclr24_scl_relu.experiment import app

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


def write_cifar10(folder, n_per_batch=4, n_test=10, seed=0):
    """``folder`` = ``.../cifar-10-batches-py``: five training batches and the test batch
    (dict: batch_label, labels (list of int), data (n, 3072) uint8 row-major R, G, B planes,
    filenames), and batches.meta (label_names, num_cases_per_batch, num_vis)."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    for b, name in enumerate(names):
        n = n_test if name == "test_batch" else n_per_batch
        labels = [int(c) for c in (np.arange(n) + b * n_per_batch) % 10]  # every class twice
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
    root = tmp_path / "scl-relu"
    write_cifar10(root / "cifar-10-batches-py")
    write_cifar100(root / "cifar-100-python")
    raw = (root / "cifar-10-batches-py" / "data_batch_1").read_bytes()
    assert raw[:4] == b"\x80\x02}q"  # protocol 2, a dict: as the real files begin
    as_bytes = pickle.loads(raw, encoding="bytes")
    as_str = pickle.loads(raw, encoding="latin1")  # torchvision's reading
    assert set(as_bytes) == {b"batch_label", b"labels", b"data", b"filenames"}
    assert set(as_str) == {"batch_label", "labels", "data", "filenames"}
    Xtr, ytr, Xte, yte = load_cifar(tmp_path, "cifar10")
    assert Xtr.shape == (20, 32, 32, 3) and Xte.shape == (10, 32, 32, 3) and Xtr.dtype == np.uint8
    first = as_bytes[b"data"][0].reshape(3, 32, 32)  # R, G, B planes -> (32, 32, 3)
    assert np.array_equal(Xtr[0], first.transpose(1, 2, 0)) and ytr[0] == as_bytes[b"labels"][0]
    Xtr, ytr, Xte, yte = load_cifar(tmp_path, "cifar100")
    assert Xtr.shape == (200, 32, 32, 3) and set(ytr.tolist()) == set(range(100))


SIZES = {"seeds": 0, "net_epochs": 1, "ufm_steps": 20, "ufm_majority": 6}


def test_paper_preset_runs_on_miniature_cifar10_and_resumes(tmp_path):
    data, out = tmp_path / "data", tmp_path / "run"
    write_cifar10(data / "scl-relu" / "cifar-10-batches-py")
    res = run_paper_preset(app, data, out, sets=SIZES)
    cfg = res["config"]
    assert (cfg["data"], cfg["net_batch"], cfg["net_dim"], cfg["net_lr"]) == ("cifar10", 1024, 128,
                                                                               0.5)  # fmt: skip
    assert cfg["net_variants"] == ["plain", "relu", "plain+bind", "relu+bind"]
    ids = {c["id"] for c in res["claims"]}
    for r in (10, 100):
        assert {f"net-relu-orthogonal-frame-R{r}-tau0.1", f"net-relu-accuracy-R{r}-tau0.1"} <= ids
        for v in ("plain", "relu", "plain+bind", "relu+bind"):
            assert f"net-R{r}-tau0.1/{v}/probe_acc" in res["metrics"]
    assert {"ufm+-orthogonal-frame-R100", "batching-binding-of"} <= ids
    assert all(c["holds"] for c in res["checks"] if c["id"].startswith("sampler-binds"))
    assert len(list((out / "checkpoints").glob("*.pt"))) == 8  # 2 ratios x 4 variants
    assert (out / "gram_heatmaps.png").exists() and (out / "ufm_convergence.png").exists()
    run_paper_preset(app, data, out, sets=SIZES, extra=["--resume"])
    again = json.loads((out / "results.json").read_text())
    assert again["units"]["computed"] == 0 and again["metrics"] == res["metrics"]

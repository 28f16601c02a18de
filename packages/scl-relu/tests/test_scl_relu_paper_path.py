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

import json
import pickle

import numpy as np
import torch
from iclr24_scl_relu.claims import CONTROL
from iclr24_scl_relu.data import load_cifar
from iclr24_scl_relu.experiment import app

from iclr24_common.testing import run_paper_preset, write_cifar10, write_cifar100


def test_miniatures_have_the_real_pickle_format(tmp_path):
    root = tmp_path / "scl-relu"
    write_cifar10(root / "cifar-10-batches-py", n_per_batch=4)
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
    write_cifar10(data / "scl-relu" / "cifar-10-batches-py", n_per_batch=4)
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
    for c in res["claims"]:  # CIFAR: one test set for every seed, scored with its items' SE
        if c["id"].startswith("net-relu-accuracy"):
            assert c["test_set"] == "shared" and c["regime"] == "below"
            assert all(p["se_basis"] == "items" for p in c["test"]["parts"])
        assert f"net-R10-tau0.1/{CONTROL}/probe_acc" in res["metrics"]  # the no-op arm ran
    assert all(c["holds"] for c in res["checks"] if c["id"].startswith("sampler-binds"))
    ckpts = sorted((out / "checkpoints").glob("*.pt"))
    assert len(ckpts) == 8  # 2 ratios x 4 variants (the untrained no-op arm trains nothing)
    for ckpt in ckpts:  # every network trained is the full-width ResNet-18 with the CIFAR stem
        state = torch.load(ckpt, weights_only=False)["model"]
        assert state["backbone.conv1.weight"].shape == (64, 3, 3, 3)  # 3x3 stem, not 7x7
        assert state["backbone.layer4.1.conv2.weight"].shape == (512, 512, 3, 3)
        assert state["head.weight"].shape == (128, 512)  # d = 128
    assert (out / "gram_heatmaps.png").exists() and (out / "ufm_convergence.png").exists()
    run_paper_preset(app, data, out, sets=SIZES, extra=["--resume"])
    again = json.loads((out / "results.json").read_text())
    assert again["units"]["computed"] == 0 and again["metrics"] == res["metrics"]

"""The paper's loaders on small files the test writes; the missing-data error; augmentation."""

import pickle

import numpy as np
import pytest
import torch
from iclr24_refresh import load_paper_dataset
from iclr24_refresh.data import crop_flip

from iclr24_common import MissingDataError


def _write_cifar10(root, n=4):
    folder = root / "refresh" / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        labels = list(np.arange(n * 10) % 10)
        data = rng.integers(0, 256, size=(n * 10, 3072), dtype=np.uint8)
        with open(folder / name, "wb") as f:
            pickle.dump({"data": data, "labels": labels}, f)


def test_cifar10_loader(tmp_path):
    _write_cifar10(tmp_path)
    stream = load_paper_dataset("cifar10", tmp_path)
    assert len(stream.tasks) == 5 and stream.n_classes == 10
    t = stream.tasks[1]
    assert t.classes == (2, 3) and t.x_train.shape == (5 * 8, 3, 32, 32)
    assert set(t.y_test.tolist()) == {2, 3}
    assert abs(float(stream.tasks[0].x_train.mean())) < 1.0  # normalised


def test_missing_data_names_the_place(tmp_path):
    with pytest.raises(MissingDataError, match="cifar-100-python"):
        load_paper_dataset("cifar100", tmp_path)


def test_crop_flip_shapes_and_content():
    x = torch.arange(2 * 3 * 8 * 8, dtype=torch.float32).reshape(2, 3, 8, 8)
    out = crop_flip(x, torch.Generator().manual_seed(0), pad=0)
    assert out.shape == x.shape
    for a, b in zip(out, x):  # no padding: each image is itself or its mirror
        assert torch.equal(a, b) or torch.equal(a, b.flip(-1))
    padded = crop_flip(x, torch.Generator().manual_seed(1), pad=2)
    assert padded.shape == x.shape


def test_image_stream_trains_with_augmentation_batchnorm_and_refresh(tmp_path):
    """The paper preset's path (images, crop + flip, BatchNorm, per-example Fisher) on a tiny
    conv net instead of ResNet-18."""
    from iclr24_refresh import DERpp, Refresh, TrainConfig, train_stream
    from torch import nn

    _write_cifar10(tmp_path, n=2)
    stream = load_paper_dataset("cifar10", tmp_path)
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 4, 3, 2), nn.BatchNorm2d(4), nn.ReLU(),
                        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 10))  # fmt: skip
    cfg = TrainConfig(lr=0.03, batch_size=8, minibatch_size=8, buffer_size=10, augment=crop_flip)
    r = train_stream(net, stream.tasks[:2], DERpp(), cfg, seed=0, refresh=Refresh())
    assert r["steps"] == r["refresh_steps"] == 6  # 20 images per task, batches of 8
    assert r["R_cil"].shape == (2, 2)

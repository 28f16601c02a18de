"""The CIFAR loader on small pickles written by the test, the hold-out split, the stopping
rules of the baselines, and the measurement of one seed."""

import pickle

import numpy as np
import pytest
from iclr24_labelwave.baselines import best_validation_epoch, final_epoch, oracle_epoch
from iclr24_labelwave.data import holdout_split, load_cifar, load_digits_split

from iclr24_common import MissingDataError


def _write_cifar10(root, n=4):
    folder = root / "labelwave" / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        batch = {b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
                 b"labels": list(rng.integers(0, 10, n))}  # fmt: skip
        (folder / name).write_bytes(pickle.dumps(batch))


def test_cifar_loader_reads_the_python_pickles(tmp_path):
    _write_cifar10(tmp_path)
    data = load_cifar(tmp_path, "cifar10")
    assert data.x_train.shape == (20, 3, 32, 32) and data.x_test.shape == (4, 3, 32, 32)
    assert data.raw_train.shape == (20, 32, 32, 3) and data.num_classes == 10
    assert data.x_train.dtype == np.float32 and abs(float(data.x_train.mean())) < 1.0


def test_missing_cifar_says_where_and_how(tmp_path):
    with pytest.raises(MissingDataError, match="cifar-10-python.tar.gz"):
        load_cifar(tmp_path, "cifar10")


def test_digits_split_and_holdout_are_disjoint_and_seeded():
    a, b = load_digits_split(0), load_digits_split(0)
    np.testing.assert_array_equal(a.y_train, b.y_train)
    assert len(a.y_train) + len(a.y_test) == 1797 and a.x_train.max() <= 1.0
    train, val = holdout_split(1000, 0.2, seed=0)
    assert len(val) == 200 and len(np.intersect1d(train, val)) == 0 and len(train) == 800


def test_stopping_rules_pick_the_first_best_epoch():
    acc = np.array([50.0, 70.0, 70.0, 60.0])
    assert best_validation_epoch(acc) == 2 and oracle_epoch(acc) == 2 and final_epoch(acc) == 4

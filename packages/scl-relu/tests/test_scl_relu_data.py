"""STEP imbalance, the digits split, the CIFAR loader on small pickles the test writes, and
the CIFAR augmentation."""

import numpy as np
import pytest
import torch
from iclr24_scl_relu import load_cifar, load_digits_split, step_counts, step_imbalance, ufm_labels
from iclr24_scl_relu.data import augment_cifar, cifar_test_view

from iclr24_common import MissingDataError


def test_step_counts_and_ufm_labels():
    assert step_counts(10, 100, 10) == [100] * 5 + [10] * 5
    assert step_counts(4, 200, 100, 0.25) == [200] * 3 + [2]
    assert np.bincount(ufm_labels(4, 6, 3)).tolist() == [6, 6, 2, 2]
    with pytest.raises(ValueError, match="R must be >= 1"):
        step_counts(4, 10, 0.5)


def test_step_imbalance_of_a_labelled_set():
    labels = np.repeat(np.arange(6), [50, 47, 60, 52, 49, 55])
    keep, majority = step_imbalance(labels, 10, seed=1)
    assert np.bincount(labels[keep]).tolist() == [47, 47, 47, 5, 5, 5]
    assert majority == [0, 1, 2] and len(set(keep)) == len(keep)
    again, _ = step_imbalance(labels, 10, seed=1)
    np.testing.assert_array_equal(keep, again)


def test_digits_split_is_stratified_and_scaled():
    Xtr, Xte, ytr, yte = load_digits_split(0.3, seed=0)
    assert Xtr.shape[1] == 64 and len(Xtr) + len(Xte) == 1797
    assert Xtr.min() >= 0 and Xtr.max() <= 1 and set(yte) == set(range(10))


def test_cifar_loader_reads_the_python_pickles(tmp_path, write_cifar):
    last = write_cifar(tmp_path)
    Xtr, ytr, Xte, yte = load_cifar(tmp_path, "cifar10")
    assert Xtr.shape == (100, 32, 32, 3) and Xte.shape == (10, 32, 32, 3)
    assert Xtr.dtype == np.uint8 and ytr.shape == (100,)
    # the channel-major rows become HWC images
    np.testing.assert_array_equal(Xte[0, :, :, 0].ravel(), last[b"data"][0, :1024])
    np.testing.assert_array_equal(yte, last[b"labels"])


def test_missing_cifar_says_where_and_how(tmp_path):
    with pytest.raises(MissingDataError, match="cifar-10-python.tar.gz"):
        load_cifar(tmp_path, "cifar10")
    with pytest.raises(ValueError, match="dataset"):
        load_cifar(tmp_path, "svhn")


def test_augmentation_shapes_randomness_and_normalisation():
    x = torch.randint(0, 256, (16, 32, 32, 3), dtype=torch.uint8)
    g = torch.Generator().manual_seed(0)
    a, b = augment_cifar(x, "cifar10", g), augment_cifar(x, "cifar10", g)
    assert a.shape == (16, 3, 32, 32) and a.dtype == torch.float32 and not torch.equal(a, b)
    again = augment_cifar(x, "cifar10", torch.Generator().manual_seed(0))
    torch.testing.assert_close(a, again)
    plain = cifar_test_view(torch.full((1, 32, 32, 3), 255, dtype=torch.uint8), "cifar10")
    assert plain[0, 0, 0, 0] == pytest.approx((1 - 0.4914) / 0.2023, rel=1e-5)

import logging

import numpy as np
import pytest
import torch

from iclr24_common import DeviceError, available_devices, resolve_device, seed_everything


def _draws(seed, deterministic=False):
    g = seed_everything(seed, deterministic=deterministic)
    return (
        torch.randn(5),
        np.random.rand(3),
        g.normal(size=2),
        torch.nn.Linear(4, 2).weight.detach(),
    )


@pytest.mark.parametrize("deterministic", [False, True])
def test_same_seed_gives_bit_identical_draws(deterministic):
    a, b = _draws(7, deterministic), _draws(7, deterministic)
    for x, y in zip(a, b):
        assert np.array_equal(np.asarray(x), np.asarray(y))
    torch.use_deterministic_algorithms(False)


def test_different_seeds_differ():
    a, b = _draws(1), _draws(2)
    assert not torch.equal(a[0], b[0])
    assert not np.array_equal(a[1], b[1])


@pytest.mark.parametrize("bad", [-1, 1.5, "3"])
def test_bad_seed_is_rejected(bad):
    with pytest.raises(ValueError, match="non-negative integer"):
        seed_everything(bad)


def test_auto_picks_best_and_logs(caplog):
    caplog.set_level(logging.INFO, logger="iclr24")
    logging.getLogger("iclr24").propagate = True
    try:
        dev = resolve_device("auto")
    finally:
        logging.getLogger("iclr24").propagate = False
    expected = (
        "cuda" if torch.cuda.is_available() else ("mps" if "mps" in available_devices() else "cpu")
    )
    assert dev.type == expected
    assert "auto ->" in caplog.text


def test_cpu_always_available():
    assert resolve_device("cpu") == torch.device("cpu")
    assert "cpu" in available_devices()


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on a machine without CUDA")
def test_unavailable_device_error_names_what_is_available():
    with pytest.raises(DeviceError, match="available: cpu"):
        resolve_device("cuda")
    with pytest.raises(DeviceError, match="available: cpu"):
        resolve_device("cuda:3")


def test_unknown_device_string():
    with pytest.raises(DeviceError, match="unknown device"):
        resolve_device("tpu7")

"""The training loop: the optimiser equals torch's SGD, the ReLU head, checkpoint resume,
and the paper preset's code path on a tiny fake CIFAR."""

import copy

import numpy as np
import pytest
import torch
from iclr24_scl_relu.train import (
    MomentumSGD,
    SCLNet,
    TrainConfig,
    embed,
    lr_at,
    mlp,
    ncc_accuracy,
    train_scl,
)


def test_momentum_sgd_equals_torch_sgd():
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 3)
    ).double()
    twin = copy.deepcopy(net)
    ours = MomentumSGD(net.parameters(), 0.01, 0.9, 1e-4)
    ref = torch.optim.SGD(twin.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    for _ in range(15):
        x = torch.randn(8, 5, dtype=torch.float64)
        for model, opt in ((net, ours), (twin, ref)):
            opt.zero_grad()
            model(x).pow(2).sum().backward()
            opt.step()
    for a, b in zip(net.parameters(), twin.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


def test_schedule_warms_up_then_decays_to_zero():
    config = TrainConfig(epochs=10, lr=1.0, warmup_epochs=2)
    assert lr_at(config, 0) == pytest.approx(0.01) and lr_at(config, 2) == pytest.approx(1.0)
    assert lr_at(config, 10) == pytest.approx(0.0, abs=1e-12)


def test_relu_head_gives_non_negative_unit_embeddings():
    net = SCLNet(mlp(6, 16), 16, 8, relu=True, head_bias=0.1)
    net.eval()
    h = net(torch.randn(32, 6))
    assert (h >= 0).all() and torch.allclose(h.norm(dim=1), torch.ones(32), atol=1e-6)
    z = net.features(torch.randn(32, 6))
    assert (z >= 0).all()


def _toy(seed=0):
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(3), [30, 30, 6])
    X = torch.tensor(rng.standard_normal((66, 6)) + 3 * np.eye(6)[labels], dtype=torch.float32)
    return X, labels


@pytest.mark.parametrize("binding", [False, True])
def test_an_interrupted_training_resumes_to_the_same_result(tmp_path, binding):
    X, labels = _toy()
    y = torch.as_tensor(labels)
    calls = {"n": 0, "stop": None}

    def fetch(idx):
        calls["n"] += 1
        if calls["stop"] is not None and calls["n"] == calls["stop"]:
            raise KeyboardInterrupt
        return X[idx][:, None], y[idx]

    config = TrainConfig(epochs=6, batch_size=16, lr=0.05, temperature=0.2, binding=binding)

    def fresh():
        torch.manual_seed(0)
        return SCLNet(mlp(6, 16), 16, 8, relu=True)

    full = fresh()
    history = train_scl(full, labels, fetch, config, seed=0)
    part, ckpt = fresh(), tmp_path / "ckpt.pt"
    calls.update(n=0, stop=13)  # inside the third epoch
    with pytest.raises(KeyboardInterrupt):
        train_scl(part, labels, fetch, config, seed=0, checkpoint=ckpt)
    calls["stop"] = None
    part = fresh()
    resumed = train_scl(part, labels, fetch, config, seed=0, checkpoint=ckpt)
    assert resumed == pytest.approx(history, rel=1e-6)
    for a, b in zip(full.parameters(), part.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)
    _, h = embed(full, [X])
    assert ncc_accuracy(h, labels, h, labels) > 0.7  # chance: 1/3

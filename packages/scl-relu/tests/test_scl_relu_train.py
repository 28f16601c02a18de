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
    linear_probe_accuracy,
    linear_probe_correct,
    lr_at,
    mlp,
    ncc_accuracy,
    ncc_correct,
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


def test_per_item_scores_average_to_the_accuracies_and_agree_with_sklearn():
    """The per-test-item scores (a shared test set's SE needs them) are the accuracies' items:
    their mean is the accuracy, and the probe's equals scikit-learn's own score."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    y_tr, y_te = rng.integers(0, 3, 60), rng.integers(0, 3, 30)
    h_tr = np.eye(3)[y_tr] + 0.8 * rng.standard_normal((60, 3))
    h_te = np.eye(3)[y_te] + 0.8 * rng.standard_normal((30, 3))
    ncc = ncc_correct(h_tr, y_tr, h_te, y_te)
    assert set(np.unique(ncc)) <= {0.0, 1.0} and ncc.shape == (30,)
    assert ncc.mean() == ncc_accuracy(h_tr, y_tr, h_te, y_te)
    probe = linear_probe_correct(h_tr, y_tr, h_te, y_te, seed=1)
    ref = LogisticRegression(max_iter=2000, random_state=1).fit(h_tr, y_tr).score(h_te, y_te)
    assert probe.mean() == pytest.approx(ref) == linear_probe_accuracy(h_tr, y_tr, h_te, y_te, 1)
    assert 0.4 < probe.mean() < 1.0  # neither chance nor trivially perfect at this noise

"""Continual-learning plumbing: reservoir sampling, class-IL / task-IL, metrics, the loop."""

import numpy as np
import pytest
import torch
from iclr24_refresh import (
    ER,
    MLP,
    Refresh,
    ReservoirBuffer,
    TrainConfig,
    average_accuracy,
    backward_transfer,
    evaluate,
    forgetting,
    gaussian_mixture,
    split_digits,
    train_stream,
)
from iclr24_refresh.continual import Task
from scipy.stats import chisquare
from torch import nn


def test_reservoir_keeps_a_uniform_sample():
    n, size, trials = 120, 12, 600
    counts = np.zeros(n)
    buf = ReservoirBuffer(size, seed=0)
    for _ in range(trials):
        buf.seen = 0
        where = buf.slots(n)
        held = np.full(size, -1)
        for item, slot in enumerate(where):
            if slot >= 0:
                held[slot] = item
        counts[held] += 1
    assert counts.sum() == trials * size
    assert chisquare(counts).pvalue > 1e-3  # every item held with probability size / n
    assert counts[: n // 2].sum() == pytest.approx(counts[n // 2 :].sum(), rel=0.1)


def test_buffer_holds_what_was_added():
    buf = ReservoirBuffer(5, seed=1)
    x, y = torch.arange(8.0)[:, None], torch.arange(8)
    buf.add(x, y, torch.stack([x[:, 0], -x[:, 0]], 1))
    assert len(buf) == 5 and buf.seen == 8
    xs, ys, zs = buf.sample(10)
    assert len(ys) == 5 and len(set(ys.tolist())) == 5
    assert torch.equal(xs[:, 0].long(), ys) and torch.equal(zs[:, 1], -xs[:, 0])


class _Fixed(nn.Module):
    def __init__(self, logits):
        super().__init__()
        self.logits = logits

    def forward(self, x):
        return self.logits[x[:, 0].long()]


def test_class_il_and_task_il_masking():
    # 4 classes, tasks (0, 1) and (2, 3); the net always prefers class 3
    logits = torch.tensor(
        [[1.0, 0.0, 0.0, 5.0], [0.0, 1.0, 0.0, 5.0], [0.0, 0.0, 1.0, 5.0], [0.0, 0.0, 0.0, 5.0]]
    )
    x = torch.arange(4.0)[:, None]
    t0 = Task((0, 1), x[:2], torch.tensor([0, 1]), x[:2], torch.tensor([0, 1]))
    t1 = Task((2, 3), x[2:], torch.tensor([2, 3]), x[2:], torch.tensor([2, 3]))
    cil, til = evaluate(_Fixed(logits), [t0, t1])
    assert cil.tolist() == [0.0, 50.0]  # class-IL: argmax over all classes is always 3
    assert til.tolist() == [100.0, 50.0]  # task-IL: only the task's own classes compete


def test_metrics_on_a_hand_made_matrix():
    R = np.array([[90.0, 0, 0], [60.0, 80, 0], [50.0, 70, 95]])
    assert average_accuracy(R) == pytest.approx((50 + 70 + 95) / 3)
    assert forgetting(R) == pytest.approx(((90 - 50) + (80 - 70)) / 2)
    assert backward_transfer(R) == pytest.approx(((50 - 90) + (70 - 80)) / 2)
    assert forgetting(R[:1, :1]) == 0.0


def test_streams():
    digits = split_digits()
    assert len(digits.tasks) == 5 and digits.n_classes == 10
    assert all(set(t.y_train.tolist()) == set(t.classes) for t in digits.tasks)
    gmm = gaussian_mixture(n_classes=6, n_train=10, n_test=5)
    assert [t.classes for t in gmm.tasks] == [(0, 1), (2, 3), (4, 5)]
    assert gmm.tasks[0].x_train.shape == (20, 20)


def test_refresh_arm_takes_the_same_steps_and_differs():
    stream = gaussian_mixture(n_classes=4, n_train=30, n_test=10)
    cfg = TrainConfig(lr=0.05, batch_size=10, minibatch_size=10, buffer_size=20)
    runs = []
    for rf in (None, Refresh(scale=100.0)):
        torch.manual_seed(0)
        runs.append(train_stream(MLP(20, 4), stream.tasks, ER(), cfg, seed=0, refresh=rf))
    assert runs[0]["steps"] == runs[1]["steps"] == runs[1]["refresh_steps"] == 12
    assert runs[0]["refresh_steps"] == 0 and runs[0]["displacement_ratio"] == []
    weights = runs[1]["displacement_ratio"][::2]  # Linear weights (biases in between)
    assert weights == pytest.approx([100 * 1e-5] * 3, rel=0.01)


def _sgd(net, x, y, lr):
    grads = torch.autograd.grad(nn.functional.cross_entropy(net(x), y), list(net.parameters()))
    with torch.no_grad():
        for p, g in zip(net.parameters(), grads):
            p.sub_(lr * g)


@pytest.mark.parametrize("variant", ["official", "official-2484f2a"])
def test_official_placement_unlearn_then_learn(variant):
    """official (derpp.py at HEAD 7c90da5, since 575e441): ``observe`` unlearns the batch, then
    takes the method's SGD step on it; official-2484f2a (the first commit) steps, then
    unlearns. One task, one batch (ER with an empty buffer is plain CE): the trained network
    equals its own order done by hand, and not the other order."""
    stream = gaussian_mixture(n_classes=2, n_train=8, n_test=4)
    task = stream.tasks[0]
    x, y = task.x_train, task.y_train
    cfg = TrainConfig(lr=0.5, batch_size=len(y), buffer_size=20)
    torch.manual_seed(0)
    init = MLP(20, 2)
    net = MLP(20, 2)
    net.load_state_dict(init.state_dict())
    train_stream(net, [task], ER(), cfg, seed=0, refresh=Refresh(variant, scale=1e3))
    by_hand = {}
    for order in ("unlearn-learn", "learn-unlearn"):
        ref = MLP(20, 2)
        ref.load_state_dict(init.state_dict())
        rf = Refresh(variant, scale=1e3)  # same noise generator seed
        if order == "unlearn-learn":
            rf.unlearn(ref, x, y)
            _sgd(ref, x, y, cfg.lr)
        else:
            _sgd(ref, x, y, cfg.lr)
            rf.unlearn(ref, x, y)
        by_hand[order] = torch.cat([p.detach().flatten() for p in ref.parameters()])
    got = torch.cat([p.detach().flatten() for p in net.parameters()])
    mine = "unlearn-learn" if variant == "official" else "learn-unlearn"
    other = "learn-unlearn" if variant == "official" else "unlearn-learn"
    assert torch.allclose(got, by_hand[mine], rtol=0, atol=1e-6)
    assert (got - by_hand[other]).abs().max() > 1e-4


def test_class_il_items_average_to_the_average_accuracy_with_unequal_tasks():
    stream = gaussian_mixture(n_classes=4, n_train=30, n_test=10)
    tasks = list(stream.tasks)
    last = tasks[1]  # give the second task fewer test examples: plain means would differ
    tasks[1] = Task(last.classes, last.x_train, last.y_train, last.x_test[:7], last.y_test[:7])
    cfg = TrainConfig(lr=0.05, batch_size=10, minibatch_size=10, buffer_size=20)
    torch.manual_seed(0)
    r = train_stream(MLP(20, 4), tasks, ER(), cfg, seed=0)
    items = r["items_cil"]
    assert items.shape == (27,) and len(set(items.round(6))) > 1
    assert items.mean() == pytest.approx(average_accuracy(r["R_cil"]), rel=1e-9)
    # per task, the weighted scores are that task's accuracy
    assert items[:20].mean() == pytest.approx(r["R_cil"][-1, 0] * 27 / 40, rel=1e-9)


def test_the_random_step_spends_the_official_budget_in_another_direction():
    stream = gaussian_mixture(n_classes=4, n_train=30, n_test=10)
    cfg = TrainConfig(lr=0.05, batch_size=10, minibatch_size=10, buffer_size=20)
    runs, nets = [], []
    for rf in (Refresh(scale=100.0), Refresh("random", scale=100.0)):
        torch.manual_seed(0)
        nets.append(MLP(20, 4))
        runs.append(train_stream(nets[-1], stream.tasks, ER(), cfg, seed=0, refresh=rf))
    assert runs[1]["refresh_steps"] == runs[1]["steps"] == 12
    assert runs[1]["displacement_ratio"][::2] == pytest.approx([100 * 1e-5] * 3, rel=1e-5)
    a, b = (torch.cat([p.detach().flatten() for p in n.parameters()]) for n in nets)
    assert (a - b).abs().max() > 1e-4  # not the ascent direction


def test_the_cumulative_displacement_sums_every_refresh_step_per_tensor():
    # the random step moves every tensor by exactly scale * delta of its norm each step, so
    # its path over 12 steps is 12 * scale * delta per weight matrix (a bias starts at norm 0,
    # where its first step is 0); no refresh, no path
    stream = gaussian_mixture(n_classes=4, n_train=30, n_test=10)
    cfg = TrainConfig(lr=0.05, batch_size=10, minibatch_size=10, buffer_size=20)
    torch.manual_seed(0)
    net = MLP(20, 4)
    r = train_stream(net, stream.tasks, ER(), cfg, seed=0, refresh=Refresh("random", scale=10.0))
    assert r["steps"] == 12 and len(r["cumulative_displacement"]) == len(list(net.parameters()))
    assert r["cumulative_displacement"][::2] == pytest.approx([12 * 10 * 1e-5] * 3, rel=1e-4)
    assert r["cumulative_displacement"][1::2] == pytest.approx([11 * 10 * 1e-5] * 3, rel=1e-4)
    torch.manual_seed(0)
    plain = train_stream(MLP(20, 4), stream.tasks, ER(), cfg, seed=0)
    assert plain["cumulative_displacement"] == []
    # the official step: each weight matrix about steps * delta (noise and damping move it
    # by ~1e-3 relative), the order of the package's "moved"
    torch.manual_seed(0)
    off = train_stream(MLP(20, 4), stream.tasks, ER(), cfg, seed=0, refresh=Refresh())
    assert off["cumulative_displacement"][::2] == pytest.approx([12 * 1e-5] * 3, rel=1e-2)

"""Invariants of InfoBatch and the baselines: unbiasedness, weights, epoch sizes, counters."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from iclr24_infobatch import FullData, HardPruning, InfoBatch, RandomPruning
from torch.utils.data import DataLoader, TensorDataset


def _linear_problem(n=1000, d=5, seed=0):
    """Per-sample squared-error gradients of a fixed linear model and their losses."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    y = x @ torch.randn(d, generator=g) + 0.5 * torch.randn(n, generator=g)
    w = torch.randn(d, generator=g) * 0.3  # a fixed, not yet fitted model
    resid = x @ w - y
    return 0.5 * resid**2, resid[:, None] * x  # losses (n,), gradients (n, d)


@pytest.mark.parametrize("r", [0.5, 0.7])
def test_weighted_kept_gradient_is_unbiased(r):
    losses, grads = _linear_problem()
    full = grads.sum(0)
    ib = InfoBatch(len(losses), num_epochs=10, prune_ratio=r, seed=1)
    ib.scores.copy_(losses)
    sums, unscaled = [], []
    for _ in range(2000):  # 2000 prune draws
        kept = torch.from_numpy(ib._select(0))
        sums.append((ib.weights[kept, None] * grads[kept]).sum(0))
        unscaled.append(grads[kept].sum(0))
    rel_err = lambda s: float((torch.stack(s).mean(0) - full).norm() / full.norm())  # noqa: E731
    assert rel_err(sums) < 0.02
    # Without the 1/(1-r) rescaling the same draws are biased: the test can fail.
    assert rel_err(unscaled) > 0.05


def test_weights_and_counts_of_one_epoch():
    losses, _ = _linear_problem(n=777)
    r = 0.5
    ib = InfoBatch(777, num_epochs=8, prune_ratio=r, seed=3)
    ib.scores.copy_(losses)
    low = (losses < losses.mean()).numpy()
    kept = ib._select(0)
    kept_low = kept[low[kept]]
    assert set(np.flatnonzero(~low)) <= set(kept.tolist())  # every high-loss sample stays
    assert len(kept_low) == int((1 - r) * low.sum())  # fixed count, as in the official code
    assert len(np.unique(kept)) == len(kept)
    w = ib.weights.numpy()
    assert np.all(w[kept_low] == np.float32(1 / (1 - r)))
    others = np.setdiff1d(np.arange(777), kept_low)
    assert np.all(w[others] == 1.0)


@settings(max_examples=40, deadline=None)
@given(
    scores=st.lists(st.floats(0, 10, allow_nan=False, width=32), min_size=2, max_size=300),
    r=st.floats(0.0, 0.95),
    seed=st.integers(0, 2**31),
)
def test_selection_properties_for_any_scores(scores, r, seed):
    s = torch.tensor(scores, dtype=torch.float32)
    ib = InfoBatch(len(s), num_epochs=4, prune_ratio=r, seed=seed)
    ib.scores.copy_(s)
    kept = ib._select(0)
    keep = min(1.0, max(0.1, 1 - r))
    if bool((s == s[0]).all()):
        assert len(kept) == len(s)
        return
    low = (s < s.mean()).numpy()
    assert len(kept) == len(s) - (low.sum() - int(keep * low.sum()))
    assert set(np.flatnonzero(~low)) <= set(kept.tolist())
    assert torch.all(ib.weights[torch.from_numpy(np.flatnonzero(~low))] == 1)


def test_epoch_lengths_shrink_then_anneal_non_integer_delta():
    n, epochs = 200, 10  # delta * E = 8.75: the official `==` test would never end pruning
    ib = InfoBatch(n, epochs, prune_ratio=0.5, delta=0.875, seed=0)
    assert ib.num_full_epochs == math.ceil(1.25) == 2
    sampler = ib.sampler
    losses = torch.linspace(0, 3, n) ** 3  # skewed, like cross-entropy
    lengths, weights_used = [], []
    for _ in range(epochs):
        lengths.append(len(sampler))
        order = list(iter(sampler))
        assert len(order) == lengths[-1]
        weights_used.append(ib.weights.clone())
        ib.update(losses[order], torch.tensor(order))
    assert lengths[0] == n  # epoch 0: all scores equal, nothing pruned (official issue #25)
    assert all(length < n for length in lengths[1:8])
    assert lengths[8:] == [n, n]
    assert all(torch.all(w == 1) for w in weights_used[8:])
    assert torch.any(weights_used[7] == 2.0)
    assert len(sampler) == n  # after the last epoch len() draws nothing more
    with pytest.raises(RuntimeError):
        ib.next_epoch()


def test_update_weighted_mean_and_cursor_path_agree():
    n = 50
    a = InfoBatch(n, 4, seed=5)
    b = InfoBatch(n, 4, seed=5)
    for ib in (a, b):
        ib.scores.copy_(torch.arange(n, dtype=torch.float32))
    order_a, order_b = a.next_epoch(), b.next_epoch()
    assert torch.equal(order_a, order_b)
    loss = torch.rand(len(order_a), requires_grad=True)
    out_a = a.update(loss[:16], order_a[:16])  # explicit indices
    out_b = b.update(loss[:16])  # indices read from the sampler's order
    assert torch.allclose(out_a, out_b)
    expected = (loss[:16] * a.weights[order_a[:16]]).mean()
    assert torch.allclose(out_a, expected)
    assert torch.equal(a.scores, b.scores)
    assert torch.allclose(a.scores[order_a[:16]], loss[:16].detach())
    out_a.backward()  # the weighted mean stays differentiable
    assert loss.grad is not None


def test_dataloader_integration_and_counters():
    n, epochs, bs = 90, 6, 16
    x, y = torch.randn(n, 3), torch.randint(0, 2, (n,))
    ib = InfoBatch(TensorDataset(x, y), epochs, prune_ratio=0.5, delta=0.875, seed=0)
    loader = DataLoader(ib, batch_size=bs, sampler=ib.sampler)
    for _ in range(epochs):
        steps = len(loader)
        seen = 0
        for idx, (xb, yb) in loader:
            assert torch.equal(xb, x[idx]) and torch.equal(yb, y[idx])
            ib.update((xb**2).sum(1) + idx.float() / n)  # indices from the sampler's order
            seen += len(idx)
        assert steps == math.ceil(seen / bs)
    assert ib.forward_passes == sum(ib.kept_per_epoch)
    assert ib.saved_fraction() == pytest.approx(ib.predicted_saved_fraction())
    assert 0 < ib.saved_fraction() < 0.5


def test_state_dict_round_trip_continues_identically():
    n = 120
    a = InfoBatch(n, 5, seed=2)
    for _ in range(2):
        order = a.next_epoch()
        a.update(torch.rand(len(order)), order)
    b = InfoBatch(n, 5, seed=99)
    b.load_state_dict(a.state_dict())
    assert torch.equal(a.next_epoch(), b.next_epoch())
    assert torch.equal(a.weights, b.weights)


def test_baselines():
    n = 100
    rp = RandomPruning(n, 3, keep_counts=[100, 60, 40], seed=0)
    sizes = [len(rp.next_epoch()) for _ in range(3)]
    assert sizes == [100, 60, 40] and torch.all(rp.weights == 1)
    hp = HardPruning(n, 2, prune_fraction=0.3, seed=0)
    hp.scores.copy_(torch.arange(n, dtype=torch.float32))
    kept = hp.next_epoch()
    assert sorted(kept.tolist()) == list(range(30, 100))  # the 30 lowest scores are dropped
    fd = FullData(n, 2)
    assert sorted(fd.next_epoch().tolist()) == list(range(n))
    with pytest.raises(ValueError):
        InfoBatch(n, 2, prune_ratio=1.0)
    with pytest.raises(ValueError):
        fd.update(torch.rand(2, 2))


def test_saved_fraction_is_r_times_the_below_mean_share_times_pruned_epochs():
    """The accounting behind the saved fraction: each pruned epoch drops r of the samples
    below the mean score (floored), so saved ~ r x low_fraction x pruned epochs / E."""
    n, epochs, r = 1000, 8, 0.5
    ib = InfoBatch(n, epochs, prune_ratio=r, delta=0.75, seed=0)
    losses = torch.linspace(0, 1, n) ** 4  # skewed: ~2/3 of the samples below the mean
    for _ in range(epochs):
        order = ib.next_epoch()
        ib.update(losses[order], order)
    pruned_epochs = sum(c > 0 for c in ib.low_counts)
    assert pruned_epochs == 5  # epochs 1-5: epoch 0 sees equal scores, 6-7 anneal
    low = ib.low_fraction()
    assert 0.6 < low < 0.75
    assert ib.saved_fraction() == pytest.approx(r * low * pruned_epochs / epochs, abs=2 / n)
    assert ib.saved_fraction() < r * 0.75  # below the ceiling r x delta

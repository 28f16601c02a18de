"""Algorithm 1 on hand-made PC sequences, PC counting, and the callback in a plain torch loop."""

import numpy as np
import pytest
import torch
from iclr24_labelwave import (
    LabelWave,
    PredictionChangeTracker,
    label_wave_stop,
    prediction_changes,
    state_of,
)
from iclr24_labelwave.labelwave import PATIENCE, WINDOW


def test_known_stop_epoch_and_selected_epoch():
    # window 3: MA exists from epoch 4 (PC_2..PC_4) = 8, epoch 5 = 17/3 (new minimum),
    # epoch 6 = 6, epoch 7 = 7 -> two epochs without improvement = patience 2: stop at 7
    pcs = [None, 10, 8, 6, 3, 9, 9, 0, 0]
    assert label_wave_stop(pcs, window=3, patience=2) == (5, 7)


# The default rule (issue 50): the first local minimum of the k = 3 moving average of PC (the
# paper's Algorithm 1 and Appendix E, second-hand). Held out: one curve where it must stop at
# the first local minimum although a deeper one follows, one where a one-epoch blip of PC must
# not stop it early, and a property against a brute-force first local minimum.
def test_default_rule_stops_at_the_first_local_minimum_not_a_later_deeper_one():
    # MA_4..: 70, 53.3, 45, 48.3 (first local minimum at epoch 6), then 45, 36.7, ... 11.7
    pcs = [None, 90, 70, 50, 40, 45, 60, 30, 20, 10, 5]
    assert WINDOW == 3 and PATIENCE == 1
    assert label_wave_stop(pcs) == (6, 7)
    # the package's old rule (patience 5) would ride past it to the later, deeper minimum
    assert label_wave_stop(pcs, window=3, patience=5)[0] > 7


def test_default_rule_does_not_stop_at_a_one_epoch_blip_of_pc():
    # PC rises for one epoch (60 -> 65 at epoch 5); the k = 3 average keeps falling through it
    # (80, 68.3, 55, 45, 31.7, 30, 36.7) and the rule stops at the real minimum, epoch 9
    pcs = [None, 100, 80, 60, 65, 40, 30, 25, 35, 50, 70]
    best, stop = label_wave_stop(pcs)
    assert (best, stop) == (9, 10) and best > 5
    assert label_wave_stop(pcs, window=1, patience=1) == (4, 5)  # raw PC stops at the blip


def _first_local_minimum(pcs, k):
    """Brute force: the first epoch whose k-epoch mean of PC is not beaten by the next one."""
    vals = [p for p in pcs if p is not None]
    first = pcs.index(vals[0]) if vals else 0  # epoch index (0-based) of PC_2
    ma = [np.mean(vals[i - k + 1 : i + 1]) for i in range(k - 1, len(vals))]
    for i in range(len(ma) - 1):
        if ma[i + 1] >= ma[i]:
            return first + k + i, first + k + i + 1  # 1-based epochs of MA_i and of the stop
    return first + k - 1 + len(ma), None


def test_default_rule_equals_a_brute_force_first_local_minimum():
    rng = np.random.default_rng(0)
    for _ in range(200):
        pcs = [None, *rng.integers(0, 40, size=int(rng.integers(4, 20))).tolist()]
        assert label_wave_stop(pcs) == _first_local_minimum(pcs, 3)


def test_patience_delays_the_stop_but_not_the_selection():
    pcs = [None, 10, 8, 6, 3, 9, 9, 9, 9, 9]
    assert label_wave_stop(pcs, window=3, patience=2) == (5, 7)
    assert label_wave_stop(pcs, window=3, patience=4) == (5, 9)
    assert label_wave_stop(pcs, window=3, patience=9) == (5, None)  # never ran out


def test_a_tie_is_not_a_new_minimum():
    pcs = [None, 4, 2, 4, 2, 4, 2]  # window 2: MA = 3 on every epoch from 3 on
    assert label_wave_stop(pcs, window=2, patience=3) == (3, 6)


def test_no_moving_average_before_the_first_full_window():
    wave = LabelWave(1, window=4, patience=1)
    for pc in [None, 0, 0]:  # a partial window would be a perfect minimum: it must not count
        wave.observe(pc)
    assert wave.moving_average == [None, None, None] and wave.best_epoch is None
    wave.observe(5)  # PC_2..PC_5 = (0, 0, 5) + one more needed -> still None
    assert wave.best_epoch is None
    wave.observe(7)
    assert wave.moving_average[-1] == pytest.approx(3.0) and wave.best_epoch == 5


def test_window_one_is_plain_pc_and_the_result_freezes_after_the_stop():
    wave = LabelWave(1, window=1, patience=1)
    for pc, state in [(None, "a"), (5, "b"), (2, "c"), (3, "d"), (0, "e")]:
        wave.observe(pc, state)
    assert (wave.best_epoch, wave.stop_epoch, wave.best_state) == (3, 4, "c")


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="window and patience"):
        LabelWave(10, window=0)
    with pytest.raises(ValueError, match="indices"):
        PredictionChangeTracker(3).update([5], [0])


def _epoch_counts(order_seed: int, preds: np.ndarray, batch: int = 7) -> list:
    tracker = PredictionChangeTracker(preds.shape[1])
    rng = np.random.default_rng(order_seed)
    for epoch_preds in preds:  # (n,) predictions of one epoch, visited in a shuffled order
        for idx in np.array_split(rng.permutation(len(epoch_preds)), batch):
            tracker.update(idx, epoch_preds[idx])
        tracker.end_epoch()
    return tracker.history


def test_pc_is_keyed_by_index_so_the_shuffle_order_does_not_matter():
    preds = np.random.default_rng(0).integers(0, 4, size=(5, 50))  # (epochs, n)
    expected = [None] + [int((preds[t] != preds[t - 1]).sum()) for t in range(1, 5)]
    assert _epoch_counts(1, preds) == _epoch_counts(2, preds) == expected


def test_pc_counts_only_examples_seen_in_both_epochs_and_accepts_logits():
    tracker = PredictionChangeTracker(4)
    tracker.update(torch.tensor([0, 1, 2]), torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]))
    assert tracker.end_epoch() is None  # first epoch: nothing to compare with
    tracker.update([1, 2, 3], [0, 0, 1])  # 1 changed, 2 did not, 3 was not seen before
    assert tracker.end_epoch() == 1
    assert prediction_changes(np.array([0, -1, 2]), np.array([1, 1, -1])) == 1


def test_the_callback_in_a_plain_torch_loop_keeps_the_selected_model():
    torch.manual_seed(0)
    x, y = torch.randn(64, 5), torch.randint(0, 3, (64,))  # random labels: PC rises and falls
    model = torch.nn.Sequential(torch.nn.Linear(5, 32), torch.nn.ReLU(), torch.nn.Linear(32, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    wave, snapshots = LabelWave(len(y), window=2, patience=3), []
    for _ in range(40):
        for idx in torch.randperm(len(y)).split(16):
            out = model(x[idx])
            loss = torch.nn.functional.cross_entropy(out, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            wave.update(idx, out.argmax(1))
        snapshots.append(state_of(model)())
        if wave.end_epoch(state_of(model)):
            break
    assert wave.stop_epoch == len(snapshots) and wave.best_epoch < wave.stop_epoch
    for name, value in snapshots[wave.best_epoch - 1].items():
        torch.testing.assert_close(wave.best_state[name], value)


@pytest.mark.parametrize("pc_pass", ["train", "eval"])
def test_training_loop_records_pc_in_both_modes(pc_pass):
    from iclr24_labelwave.train import TrainConfig, mlp, predict, test_items, train

    torch.manual_seed(0)
    x, y = torch.rand(60, 6), torch.randint(0, 3, (60,))
    cfg = TrainConfig(epochs=4, batch_size=16, window=1, patience=2, pc_pass=pc_pass)
    model = mlp(6, 3, 16)
    out = train(model, x, y, x[:20], y[:20], cfg, seed=0, x_val=x[:10], y_val=y[:10])
    assert np.isnan(out["pc"][0]) and (out["pc"][1:] >= 0).all() and len(out["pc"]) == 4
    assert len(out["val_acc"]) == 4 and out["best_epoch"] >= 2
    assert out["kept_test_acc"] == out["test_acc"][out["best_epoch"] - 1]
    # every test example's score at every epoch: they average to that epoch's accuracy
    for epoch in range(1, 5):
        scores = test_items(out, epoch)
        assert scores.shape == (20,) and set(scores) <= {0.0, 100.0}
        assert scores.mean() == pytest.approx(out["test_acc"][epoch - 1], rel=1e-6)
    # the kept state's items, example by example (train() leaves the kept state loaded), are
    # those of the epoch it selected
    right = (predict(model, x[:20]) == y[:20]).numpy() * 100.0
    np.testing.assert_array_equal(test_items(out), right)
    np.testing.assert_array_equal(test_items(out), test_items(out, out["best_epoch"]))
    assert test_items(out).mean() == pytest.approx(out["kept_test_acc"], rel=1e-6)

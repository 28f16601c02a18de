"""The EMA: its schedules, its invariants, and agreement with torch's AveragedModel."""

import copy

import pytest
import torch
from iclr24_gva import EMA, EMASchedule
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn


def net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))


def sgd_steps(model, n, seed=0):
    """Yield after each of n SGD steps on random data (train mode: BN buffers move)."""
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(n):
        x = torch.randn(16, 3, generator=g)
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        yield


def test_schedule_values():
    const = EMASchedule.constant(0.9)
    assert [const.beta(t) for t in range(3)] == [1.0, pytest.approx(0.1), pytest.approx(0.1)]
    power = EMASchedule.power_law(power=0.5, inv_gamma=2.0, beta_min=0.0)
    assert power.beta(0) == 1.0
    assert power.beta(6) == pytest.approx((1 + 6 / 2.0) ** -0.5)
    floored = EMASchedule.power_law(power=1.0, beta_min=0.05)
    assert floored.beta(10) == pytest.approx(1 / 11)
    assert floored.beta(1000) == 0.05  # the floor
    with pytest.raises(ValueError):
        EMASchedule(kind="cosine")


def test_power_one_is_polyak_average():
    model = net()
    ema = EMA(model, EMASchedule.power_law(power=1.0, inv_gamma=1.0))
    seen = []
    for _ in sgd_steps(model, 7):
        ema.update(model)
        seen.append(copy.deepcopy(model[0].weight.detach()))
    torch.testing.assert_close(ema.module[0].weight, torch.stack(seen).mean(0))


def test_ema_of_a_constant_model_is_that_model():
    model = net()
    ema = EMA(model, EMASchedule.constant(0.99))
    for _ in range(5):
        ema.update(model)
    for a, b in zip(ema.module.state_dict().values(), model.state_dict().values()):
        torch.testing.assert_close(a, b)


def test_tracks_parameters_and_buffers():
    model = net()
    ema = EMA(model, EMASchedule.constant(0.5))
    for _ in sgd_steps(model, 3):
        ema.update(model)
    bn, bn_ema = model[1], ema.module[1]
    assert not torch.allclose(bn_ema.running_mean, torch.zeros(8))  # averaged, not frozen
    assert not torch.allclose(bn_ema.running_mean, bn.running_mean)  # an average, not a copy
    assert bn_ema.num_batches_tracked == bn.num_batches_tracked == 3  # integers: copied
    assert not ema.module.training and not any(p.requires_grad for p in ema.module.parameters())


@pytest.mark.parametrize("decay", [0.9, 0.999])
def test_agrees_with_torch_averaged_model(decay):
    """Our constant-decay EMA equals torch.optim.swa_utils.AveragedModel with its EMA
    multi_avg_fn, parameters and floating buffers, after every step."""
    model = net()
    ours = EMA(model, EMASchedule.constant(decay))
    ref = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(decay), use_buffers=True)
    for _ in sgd_steps(model, 12):
        ours.update(model)
        ref.update_parameters(model)
        mine = dict(ours.module.state_dict())
        for name, value in ref.module.state_dict().items():
            if value.is_floating_point():
                torch.testing.assert_close(mine[name], value, rtol=1e-6, atol=1e-7)


def test_state_dict_round_trip(tmp_path):
    model = net()
    ema = EMA(model, EMASchedule.power_law(0.75, 1.0, 0.01))
    for _ in sgd_steps(model, 4):
        ema.update(model)
    path = tmp_path / "ckpt.pt"
    torch.save({"model": model.state_dict(), "ema": ema.state_dict()}, path)
    fresh = EMA(net(), EMASchedule.power_law(0.75, 1.0, 0.01))
    fresh.load_state_dict(torch.load(path)["ema"])
    assert fresh.step == 4
    x = torch.randn(5, 3)
    torch.testing.assert_close(fresh.module(x), ema.module(x))

"""EpochProgressScheduler: equal to the plain step schedule on full epochs, and tracks epoch
progress when epochs shrink."""

import pytest
import torch
from iclr24_infobatch import EpochProgressScheduler, cosine_lambda
from torch.optim.lr_scheduler import CosineAnnealingLR, LambdaLR, OneCycleLR


def _opt():
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1, momentum=0.9)


def _onecycle(opt, total):
    return OneCycleLR(
        opt, 0.05, total_steps=total, pct_start=0.3, div_factor=25, final_div_factor=1e4
    )


def test_full_epochs_equal_plain_onecycle_lr_and_momentum():
    epochs, s = 4, 7
    ref_opt, opt = _opt(), _opt()
    ref = _onecycle(ref_opt, epochs * s)
    sched = EpochProgressScheduler(_onecycle(opt, epochs * s), s)
    for e in range(epochs):
        sched.begin_epoch(e, s)
        for _ in range(s):
            g, rg = opt.param_groups[0], ref_opt.param_groups[0]
            assert g["lr"] == pytest.approx(rg["lr"], rel=1e-12)
            assert g["momentum"] == pytest.approx(rg["momentum"], rel=1e-12)
            ref_opt.step()
            ref.step()
            opt.step()
            sched.step()


def test_shrunken_epochs_follow_epoch_progress():
    epochs, s = 5, 10
    ref_opt, opt = _opt(), _opt()
    ref = _onecycle(ref_opt, epochs * s)
    plain = []
    for _ in range(epochs * s):
        plain.append(ref_opt.param_groups[0]["lr"])
        ref_opt.step()
        ref.step()
    sched = EpochProgressScheduler(_onecycle(opt, epochs * s), s)
    lrs = []
    for e, steps in enumerate([10, 4, 3, 6, 10]):
        sched.begin_epoch(e, steps)
        assert opt.param_groups[0]["lr"] == pytest.approx(plain[e * s])  # epoch starts aligned
        for _ in range(steps):
            lrs.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
    assert lrs[-1] == pytest.approx(plain[-1])  # the schedule reaches its end
    # A schedule built for the shrunken step count would stop short instead.
    assert len(lrs) < epochs * s


def test_cosine_lambda_equals_cosine_annealing():
    total = 12
    a, b = _opt(), _opt()
    ref = CosineAnnealingLR(a, T_max=total, eta_min=0.1 * 0.01)
    sched = EpochProgressScheduler(LambdaLR(b, cosine_lambda(total, 0.01)), 3)
    for e in range(4):
        sched.begin_epoch(e, 3)
        for _ in range(3):
            assert b.param_groups[0]["lr"] == pytest.approx(a.param_groups[0]["lr"], rel=1e-9)
            a.step()
            ref.step()
            b.step()
            sched.step()


def test_rejects_recursive_schedulers():
    with pytest.raises(TypeError):
        EpochProgressScheduler(CosineAnnealingLR(_opt(), T_max=5), 5)

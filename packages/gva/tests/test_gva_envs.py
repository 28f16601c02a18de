"""The environments, their experts, common-random-numbers evaluation and the metrics."""

import numpy as np
import pytest
import torch
from iclr24_gva import (
    BCConfig,
    BehaviorCloning,
    LinearSystem,
    curve_summary,
    expert_dataset,
    mean_abs_jump,
    mean_rel_jump,
    mlp,
    plateaued,
    rollout_reward,
)
from iclr24_gva.experiment import PRESETS, system


def test_lqr_expert_stabilises_in_closed_loop():
    env = system(PRESETS["default"])
    radius = np.abs(np.linalg.eigvals(env.A - env.B @ env.K)).max()
    assert 0.9 < radius < 1.0  # stable, and only just
    assert np.abs(np.linalg.eigvals(env.A)).max() == pytest.approx(1.0)  # marginal open loop
    # from the training distribution, the (saturated, noisy) expert never leaves the box
    assert rollout_reward(env, env.expert, env.rollouts(64, 200, 0.3, 0.02, seed=0)) == 1.0
    # with no control, the same rollouts drift away (the system needs the expert)
    zero = lambda x: torch.zeros(len(x), env.action_dim)  # noqa: E731
    assert rollout_reward(env, zero, env.rollouts(64, 200, 1.0, 0.4, seed=0)) < 0.9


def test_expert_action_saturates():
    env = LinearSystem(u_max=0.5, seed=1)
    u = env.expert(100 * torch.randn(32, env.state_dim))
    assert u.abs().max() <= 0.5 and u.abs().max() > 0.49


def test_common_random_numbers_evaluation_is_deterministic():
    env = LinearSystem(seed=0, control_cost=100.0)
    rollouts = env.rollouts(32, 100, 1.0, 0.4, seed=3)
    policy = mlp(env.state_dim, env.action_dim)
    assert rollout_reward(env, policy, rollouts) == rollout_reward(env, policy, rollouts)
    again = env.rollouts(32, 100, 1.0, 0.4, seed=3)
    assert torch.equal(again.noise, rollouts.noise) and torch.equal(again.x0, rollouts.x0)


def test_demonstrations_carry_action_noise():
    env = LinearSystem(seed=0)
    obs, act = expert_dataset(env, env.rollouts(8, 20, 0.3, 0.02, seed=1), 0.2, seed=2)
    resid = act - env.expert(obs)  # linear system: observation = state
    assert obs.shape == (160, env.state_dim) and resid.std().item() == pytest.approx(0.2, rel=0.2)


def test_metrics():
    assert mean_abs_jump([1.0, 3.0, 2.0]) == 1.5
    assert mean_rel_jump([1.0, 2.0]) == 1.0
    s = curve_summary([0.0, 0.0, 1.0, 0.5], [2.0, 1.0, 1.0, 1.0])
    assert s["dJ"] == 0.5 and s["J_mean"] == 0.75 and s["rel_dloss"] == 0.0


def test_bc_trainer_learns_the_expert_and_logs_both_iterates():
    env = LinearSystem(seed=0, control_cost=100.0)
    obs, act = expert_dataset(env, env.rollouts(40, 50, 0.3, 0.02, seed=1), 0.0, seed=2)
    val = expert_dataset(env, env.rollouts(10, 50, 0.3, 0.02, seed=3), 0.0, seed=4)
    evals = env.rollouts(16, 40, 0.3, 0.02, seed=5)
    trainer = BehaviorCloning(env, BCConfig(steps=200, eval_every=100, lr=0.01), seed=0)
    hist = trainer.fit(obs, act, val, evals)
    assert hist.step == [100, 200]
    assert len(hist.reward) == len(hist.reward_ema) == len(hist.loss_ema) == 2
    assert hist.loss[-1] < 0.2 * hist.loss[0] + 1e-6 or hist.loss[-1] < 1e-3
    assert hist.reward[-1] >= 0.95  # in-distribution, the clone keeps the system in the box


def test_the_plateau_rule_waits_for_three_flat_blocks():
    # held out (issue 49): a curve still rising is not at its plateau; a single flat block
    # in a rising curve (a dip) is not either; three flat blocks in a row are
    rising = np.linspace(0.2, 0.8, 30)
    assert not plateaued(rising, block=10, tol=0.01)
    dip = np.r_[np.full(10, 0.3), np.full(10, 0.3), np.full(10, 0.5)]
    assert not plateaued(dip, block=10, tol=0.01)
    noisy_flat = 0.5 + 0.005 * np.sin(np.arange(30.0))
    assert plateaued(np.r_[rising, noisy_flat], block=10, tol=0.01)
    assert not plateaued(noisy_flat[:29], block=10, tol=0.01)  # fewer than three blocks


def test_bc_trainer_trains_to_the_plateau_then_measures_the_window():
    env = LinearSystem(seed=0, control_cost=100.0)
    obs, act = expert_dataset(env, env.rollouts(20, 30, 0.3, 0.02, seed=1), 0.1, seed=2)
    val = expert_dataset(env, env.rollouts(5, 30, 0.3, 0.02, seed=3), 0.1, seed=4)
    evals = env.rollouts(8, 20, 0.3, 0.02, seed=5)
    base = dict(steps=40, eval_every=5, search_every=10, plateau_block=2, window=3)
    # tolerance 1: every block is flat, the rule fires at the minimum steps
    hist = BehaviorCloning(env, BCConfig(plateau_tol=1.0, max_steps=200, **base), 0).fit(
        obs, act, val, evals
    )
    assert not hist.capped and hist.step[hist.window_start] == 60  # 3 blocks of 2 x 10
    assert hist.step[hist.window_start :] == [60, 65, 70, 75]  # the window, every 5
    assert np.isnan(hist.reward_ema[0]) and not np.isnan(hist.reward_ema[hist.window_start])
    assert len(hist.train_loss) == len(hist.step) and hist.train_loss[-1] > 0
    # tolerance -1: no block is ever flat, the search stops at its cap
    hist = BehaviorCloning(env, BCConfig(plateau_tol=-1.0, max_steps=100, **base), 0).fit(
        obs, act, val, evals
    )
    assert hist.capped and hist.step[hist.window_start] == 100
    assert len(hist.step) - 1 - hist.window_start == 3

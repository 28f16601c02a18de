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

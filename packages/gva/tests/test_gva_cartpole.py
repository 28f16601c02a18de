"""Our batched cart-pole against gymnasium's CartPoleEnv on the same states and forces."""

from dataclasses import replace

import numpy as np
import pytest
import torch
from iclr24_gva import CartPole, rollout_reward
from iclr24_gva.experiment import PRESETS, CartPolePreset, bc_unit


def test_step_matches_gymnasium_cartpole():
    # gymnasium is in the test group: the CI leg runs this; a bare workspace skips it
    gym = pytest.importorskip("gymnasium")
    env = gym.make("CartPole-v1").unwrapped
    env.reset(seed=0)
    ours = CartPole()
    rng = np.random.default_rng(0)
    for _ in range(50):
        state = rng.uniform([-2.4, -3, -0.2, -3], [2.4, 3, 0.2, 3])
        u = rng.uniform(-1, 1)
        # gymnasium's two actions are +-force_mag: set force_mag to |force|, pick its sign
        env.state, env.force_mag = state.copy(), abs(10.0 * u)
        env.steps_beyond_terminated = None  # a fresh episode: no post-termination warning
        obs, _, terminated, *_ = env.step(int(u > 0))
        x = torch.tensor(state[None], dtype=torch.float64)
        nxt = ours.step(x, torch.tensor([[u]], dtype=torch.float64), torch.zeros(1, 4))
        np.testing.assert_allclose(nxt[0].numpy(), env.state, rtol=1e-6, atol=1e-6)
        assert bool(ours.outside(nxt)[0]) == terminated


def test_lqr_expert_balances_the_cartpole_and_saturates():
    env = CartPole()
    assert np.abs(np.linalg.eigvals(env.A)).max() > 1.0  # the upright pole is unstable
    radius = np.abs(np.linalg.eigvals(env.A - env.B @ env.K)).max()
    assert 0.9 < radius < 1.0  # the LQR closed loop is stable, and only just
    near = env.rollouts(64, 200, x0_scale=0.05, noise=0.005, seed=0)
    assert rollout_reward(env, env.expert, near) == 1.0
    idle = lambda obs: torch.zeros(len(obs), 1)  # noqa: E731
    assert rollout_reward(env, idle, near) < 0.5  # unactuated, the pole falls
    u = env.expert(100 * torch.randn(32, 4))
    assert u.abs().max() <= 1.0 and u.abs().max() > 0.99


def test_the_reproduction_runs_the_cartpole_and_can_skip_it():
    preset = PRESETS["default"]
    assert list(preset.tasks()) == ["linear", "pendulum", "cartpole"]
    skip = replace(preset, cartpole=replace(preset.cartpole, steps=0))
    assert "cartpole" not in skip.tasks()
    with pytest.raises(ValueError):
        CartPolePreset(lr=0.0)


def test_cartpole_unit_logs_the_loss_above_the_floor_at_its_label_noise():
    preset = replace(PRESETS["smoke"], eval_every=10, n_eval=8, horizon=20, n_demos=10,
                     cartpole=CartPolePreset(steps=40))  # fmt: skip
    task = preset.tasks()["cartpole"]
    values = bc_unit(preset, task, "small_batch", seed=0)["values"]
    second = bc_unit(preset, task, "second_floor", seed=0)["values"]
    assert values["crn_repeat_error"] == 0.0 and values["expert_J_train_dist"] == 1.0
    assert (values["action_noise"], second["action_noise"]) == (0.2, 0.1)
    # the measured floor is the label noise's variance (1-d action)
    assert values["floor"] == pytest.approx(0.04, rel=0.25)
    assert second["floor"] == pytest.approx(0.01, rel=0.25)
    assert values["excess_final"] >= 0.0 and "rel_dexcess" in values

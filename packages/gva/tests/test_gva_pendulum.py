"""Our batched pendulum against gymnasium's Pendulum-v1 on the same states and torques."""

import gymnasium as gym
import numpy as np
import torch
from iclr24_gva import Pendulum, rollout_reward


def test_step_matches_gymnasium_pendulum_v1():
    env = gym.make("Pendulum-v1").unwrapped
    env.reset(seed=0)
    ours = Pendulum()
    rng = np.random.default_rng(0)
    for _ in range(50):
        th, thdot, u = rng.uniform(-np.pi, np.pi), rng.uniform(-8, 8), rng.uniform(-3, 3)
        env.state = np.array([th, thdot])
        obs, *_ = env.step(np.array([u], dtype=np.float32))
        x = torch.tensor([[th, thdot]], dtype=torch.float64)
        nxt = ours.step(x, torch.tensor([[u]], dtype=torch.float64), torch.zeros(1, 2))
        np.testing.assert_allclose(ours.observe(nxt)[0].numpy(), obs, rtol=1e-5, atol=1e-5)


def test_lqr_expert_holds_the_pendulum_up():
    env = Pendulum()
    near = env.rollouts(64, 200, x0_scale=0.1, noise=0.01, seed=0)
    assert rollout_reward(env, env.expert, near) == 1.0
    idle = lambda obs: torch.zeros(len(obs), 1)  # noqa: E731
    assert rollout_reward(env, idle, near) < 0.5  # unactuated, it falls

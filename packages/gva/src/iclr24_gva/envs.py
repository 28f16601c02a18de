"""Closed-loop environments where GVA is visible, with their experts and a "cliff" reward.

Both are batched torch dynamics (every rollout of an evaluation runs at once) and both end
a rollout the first time the state leaves a box, so the reward J (the fraction of the
horizon spent inside the box, averaged over rollouts) has the cliff the paper's theory
needs (Section 5: small policy errors compound until the state falls off).

- :class:`LinearSystem`, the paper's theory setting: x' = A x + B u + w with an open-loop
  unstable A, an LQR expert whose action saturates (u = u_max tanh(K x / u_max)), a narrow
  training distribution (small process noise) and a wider one at evaluation.
- :class:`Pendulum`, gymnasium's ``Pendulum-v1`` dynamics (torque <= 2, dt = 0.05) kept
  upright by the LQR of its linearisation, saturated at the torque limit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import torch


def lqr_gain(A: np.ndarray, B: np.ndarray, Q: np.ndarray, R: np.ndarray) -> np.ndarray:
    """The infinite-horizon discrete LQR gain K (u = -K x) from the Riccati equation."""
    P = scipy.linalg.solve_discrete_are(A, B, Q, R)
    return np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)


@dataclass(frozen=True)
class Rollouts:
    """Common random numbers for an evaluation: the same initial states and noise at
    every checkpoint, so a change in J is the policy's, never the evaluation's."""

    x0: torch.Tensor  # (n, state_dim)
    noise: torch.Tensor  # (horizon, n, state_dim)


class LinearSystem:
    """x' = A x + B u + w, an LQR expert saturated at u_max, a cliff at |x|_inf > box.

    A is a random rotation scaled to spectral radius ``rho`` > 1 (open-loop unstable, as in
    the paper's Proposition: errors grow unless the policy keeps correcting them).
    """

    def __init__(
        self,
        state_dim: int = 4,
        action_dim: int = 2,
        rho: float = 1.1,
        u_max: float = 0.5,
        box: float = 4.0,
        control_cost: float = 1.0,
        seed: int = 0,
    ):
        rng = np.random.default_rng(seed)
        q, _ = np.linalg.qr(rng.standard_normal((state_dim, state_dim)))
        self.A = rho * q * np.sign(np.linalg.det(q))  # a scaled rotation: |eig| = rho
        self.B = rng.standard_normal((state_dim, action_dim)) / np.sqrt(state_dim)
        self.K = lqr_gain(self.A, self.B, np.eye(state_dim), control_cost * np.eye(action_dim))
        self.state_dim, self.action_dim, self.u_max, self.box = state_dim, action_dim, u_max, box
        self._A = torch.tensor(self.A.T, dtype=torch.float32)
        self._B = torch.tensor(self.B.T, dtype=torch.float32)
        self._K = torch.tensor(self.K.T, dtype=torch.float32)

    def expert(self, x: torch.Tensor) -> torch.Tensor:
        """u = u_max tanh(-K x / u_max): the LQR action, saturating smoothly at u_max."""
        return self.u_max * torch.tanh(-(x @ self._K) / self.u_max)

    def step(self, x: torch.Tensor, u: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return x @ self._A + u.clamp(-self.u_max, self.u_max) @ self._B + w

    def outside(self, x: torch.Tensor) -> torch.Tensor:
        return x.abs().amax(-1) > self.box

    def rollouts(self, n: int, horizon: int, x0_scale: float, noise: float, seed: int):
        g = torch.Generator().manual_seed(seed)
        x0 = x0_scale * torch.randn(n, self.state_dim, generator=g)
        return Rollouts(x0, noise * torch.randn(horizon, n, self.state_dim, generator=g))


class Pendulum:
    """gymnasium ``Pendulum-v1`` dynamics (g = 10, m = l = 1, dt = 0.05, |u| <= 2,
    |theta_dot| <= 8), balanced upright by the saturated LQR of its linearisation. The
    state is (theta, theta_dot) with theta = 0 upright; the cliff is |theta| > box.
    Observations fed to the policy are (cos theta, sin theta, theta_dot), as in gymnasium.
    """

    g, m, l, dt, max_speed = 10.0, 1.0, 1.0, 0.05, 8.0  # gymnasium Pendulum-v1 constants
    state_dim, action_dim, obs_dim = 2, 1, 3

    def __init__(self, u_max: float = 2.0, box: float = 1.0):
        # theta'' = 3g/(2l) sin(theta) + 3/(m l^2) u, linearised at theta = 0, Euler as in gym
        a = 3 * self.g / (2 * self.l)
        b = 3.0 / (self.m * self.l**2)
        A = np.array([[1 + a * self.dt**2, self.dt], [a * self.dt, 1.0]])
        B = np.array([[b * self.dt**2], [b * self.dt]])
        self.K = lqr_gain(A, B, np.diag([1.0, 0.1]), np.array([[0.1]]))
        self.u_max, self.box = u_max, box
        self._K = torch.tensor(self.K.T, dtype=torch.float32)

    def observe(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([x[..., 0].cos(), x[..., 0].sin(), x[..., 1]], -1)

    def expert(self, obs: torch.Tensor) -> torch.Tensor:
        """The saturated LQR action from an observation (cos theta, sin theta, theta_dot)."""
        z = torch.stack([torch.atan2(obs[..., 1], obs[..., 0]), obs[..., 2]], -1)
        return self.u_max * torch.tanh(-(z @ self._K) / self.u_max)

    def step(self, x: torch.Tensor, u: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """gymnasium's semi-implicit Euler step (gymnasium/envs/classic_control/pendulum.py),
        with theta measured from upright, plus a process-noise kick w on the velocity."""
        th, thdot = x[..., 0], x[..., 1]
        u = u[..., 0].clamp(-self.u_max, self.u_max)
        thdot = (
            thdot
            + (3 * self.g / (2 * self.l) * th.sin() + 3.0 / (self.m * self.l**2) * u) * self.dt
        )
        thdot = thdot.clamp(-self.max_speed, self.max_speed) + w[..., 1]
        return torch.stack([th + thdot * self.dt + w[..., 0], thdot], -1)

    def outside(self, x: torch.Tensor) -> torch.Tensor:
        return torch.atan2(x[..., 0].sin(), x[..., 0].cos()).abs() > self.box

    def rollouts(self, n: int, horizon: int, x0_scale: float, noise: float, seed: int):
        g = torch.Generator().manual_seed(seed)
        x0 = x0_scale * torch.randn(n, 2, generator=g)
        return Rollouts(x0, noise * torch.randn(horizon, n, 2, generator=g))


@torch.no_grad()
def rollout_reward(env, policy, rollouts: Rollouts) -> float:
    """J: the fraction of the horizon each rollout stays inside the box, averaged (a rollout
    that leaves the box is stopped there: the cliff)."""
    x, alive = rollouts.x0.clone(), torch.ones(len(rollouts.x0), dtype=torch.bool)
    steps = torch.zeros(len(rollouts.x0))
    observe = getattr(env, "observe", lambda s: s)
    for w in rollouts.noise:
        x = env.step(x, policy(observe(x)), w)
        alive &= ~env.outside(x)
        steps += alive
        x = torch.where(alive[:, None], x, torch.zeros_like(x))  # frozen once fallen
    return float(steps.mean() / len(rollouts.noise))


@torch.no_grad()
def expert_dataset(
    env, rollouts: Rollouts, action_noise: float = 0.0, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """(observation, demonstrated action) pairs along the expert's own closed-loop
    trajectories, the demonstrated action being the expert's plus Gaussian noise of std
    ``action_noise`` (and executed as such): demonstrations are never exactly realisable,
    so SGD keeps a noise floor at the optimum. States that left the box are dropped."""
    g = torch.Generator().manual_seed(seed)
    x, obs, acts = rollouts.x0.clone(), [], []
    observe = getattr(env, "observe", lambda s: s)
    alive = torch.ones(len(x), dtype=torch.bool)
    for w in rollouts.noise:
        u = env.expert(observe(x))
        u = u + action_noise * torch.randn(u.shape, generator=g)
        obs.append(observe(x)[alive])
        acts.append(u[alive])
        x = env.step(x, u, w)
        alive &= ~env.outside(x)
    return torch.cat(obs), torch.cat(acts)

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
- :class:`CartPole`, gymnasium's ``CartPole-v1`` dynamics with a continuous force, kept
  upright and centred by the LQR of its linearisation, saturated at gymnasium's force. Its
  cart position is a double integrator and its pole is open-loop unstable: nothing damps
  an error but the policy (the pendulum's only state is the angle the expert is built for).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.signal
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

    def __init__(self, u_max: float = 2.0, box: float = 1.0, closed_loop: float = 0.0):
        """``closed_loop`` > 0: the expert's gain places the linearised closed loop's poles at
        (closed_loop, closed_loop - 0.02) (a marginally stable expert, whose errors compound
        as in the paper's systems); 0: the LQR gain (Q = diag(1, 0.1), R = 0.1: radius 0.84)."""
        # theta'' = 3g/(2l) sin(theta) + 3/(m l^2) u, linearised at theta = 0, Euler as in gym
        a = 3 * self.g / (2 * self.l)
        b = 3.0 / (self.m * self.l**2)
        A = np.array([[1 + a * self.dt**2, self.dt], [a * self.dt, 1.0]])
        B = np.array([[b * self.dt**2], [b * self.dt]])
        if closed_loop > 0:
            poles = np.array([closed_loop, closed_loop - 0.02])
            self.K = scipy.signal.place_poles(A, B, poles).gain_matrix
        else:
            self.K = lqr_gain(A, B, np.diag([1.0, 0.1]), np.array([[0.1]]))
        self.A, self.B = A, B
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


class CartPole:
    """gymnasium ``CartPole-v1`` dynamics (gymnasium/envs/classic_control/cartpole.py,
    gymnasium 1.4.0: g = 9.8, cart 1 kg, pole 0.1 kg, half-length 0.5, tau = 0.02, explicit
    Euler), with a continuous force ``force_mag * u`` for an action u in [-1, 1] instead of
    gymnasium's two actions +-force_mag (its step with ``force_mag`` set to |force| and the
    action to the force's sign is the same map: tests/test_gva_cartpole.py). The state and
    observation are (x, x_dot, theta, theta_dot); the cliff is gymnasium's termination,
    |x| > 2.4 or |theta| > 12 degrees. The expert is the LQR of the step's Jacobian at the
    upright equilibrium, saturated smoothly at |u| = 1.
    """

    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    x_threshold, theta_threshold = 2.4, 12 * 2 * np.pi / 360  # gymnasium's termination
    state_dim, action_dim = 4, 1

    def __init__(self, q=(1.0, 1.0, 10.0, 1.0), r: float = 1.0):
        x0 = torch.zeros(1, 4, dtype=torch.float64)
        u0 = torch.zeros(1, 1, dtype=torch.float64)
        zero = torch.zeros(1, 4, dtype=torch.float64)
        A, B = torch.autograd.functional.jacobian(lambda x, u: self.step(x, u, zero), (x0, u0))
        self.A, self.B = A[0, :, 0].numpy(), B[0, :, 0].numpy()  # the exact discrete step's
        self.K = lqr_gain(self.A, self.B, np.diag(q), np.array([[r]]))
        self._K = torch.tensor(self.K.T, dtype=torch.float32)

    def expert(self, x: torch.Tensor) -> torch.Tensor:
        """u = tanh(-K x): the LQR action, saturating smoothly at gymnasium's force."""
        return torch.tanh(-(x @ self._K.to(x.dtype)))

    def step(self, x: torch.Tensor, u: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """gymnasium's Euler step of CartPoleEnv.step with force = force_mag * clamp(u),
        plus a process-noise kick w on the state."""
        pos, vel, th, thdot = x.unbind(-1)
        force = self.force_mag * u[..., 0].clamp(-1.0, 1.0)
        total = self.masspole + self.masscart
        pml = self.masspole * self.length
        cos, sin = th.cos(), th.sin()
        temp = (force + pml * thdot**2 * sin) / total
        thacc = (self.gravity * sin - cos * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * cos**2 / total)
        )
        xacc = temp - pml * thacc * cos / total
        nxt = torch.stack(
            [pos + self.tau * vel, vel + self.tau * xacc, th + self.tau * thdot,
             thdot + self.tau * thacc], -1)  # fmt: skip
        return nxt + w

    def outside(self, x: torch.Tensor) -> torch.Tensor:
        return (x[..., 0].abs() > self.x_threshold) | (x[..., 2].abs() > self.theta_threshold)

    def rollouts(self, n: int, horizon: int, x0_scale: float, noise: float, seed: int):
        """Initial states and noise per coordinate scaled to the cliff: (x, theta) by
        (2.4, 12 degrees), (x_dot, theta_dot) by the same (per second)."""
        g = torch.Generator().manual_seed(seed)
        scale = torch.tensor([self.x_threshold, self.x_threshold, self.theta_threshold,
                              self.theta_threshold])  # fmt: skip
        x0 = x0_scale * scale * torch.randn(n, 4, generator=g)
        return Rollouts(x0, noise * scale * torch.randn(horizon, n, 4, generator=g))


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

"""The behaviour-cloning trainer: an MLP policy fit to expert (state, action) pairs by
minibatch Adam or SGD, with the raw iterate and its EMA both evaluated in closed loop at
every checkpoint on the same rollouts (common random numbers)."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from .envs import Rollouts, rollout_reward
from .gva import EMA, EMASchedule


def mlp(d_in: int, d_out: int, width: int = 64, depth: int = 2) -> nn.Sequential:
    """The policy: ``depth`` hidden ReLU layers of ``width`` units."""
    layers, d = [], d_in
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    return nn.Sequential(*layers, nn.Linear(d, d_out))


@dataclass(frozen=True)
class BCConfig:
    """One training run's optimisation settings."""

    steps: int = 3000
    """Minibatch updates."""
    batch_size: int = 32
    """Minibatch size (small: SGD noise)."""
    lr: float = 1e-3
    """Learning rate (constant: the paper studies GVA without a decay)."""
    optimizer: str = "sgd"
    """sgd (heavy-ball, the paper's theory: iterate noise ~ lr / batch) or adam."""
    momentum: float = 0.9
    """sgd: heavy-ball momentum."""
    eval_every: int = 100
    """Updates between two checkpoints."""
    width: int = 64
    depth: int = 2
    ema: EMASchedule = field(default_factory=lambda: EMASchedule.power_law(0.75, 1.0, 0.01))
    """The EMA evaluated beside the raw iterate."""

    def __post_init__(self):
        if min(self.steps, self.batch_size, self.eval_every, self.width, self.depth) < 1:
            raise ValueError("steps, batch_size, eval_every, width and depth must be >= 1")
        if self.lr <= 0:
            raise ValueError("lr must be > 0")
        if not 0.0 <= self.momentum < 1.0:
            raise ValueError("momentum must be in [0, 1)")
        if self.optimizer not in ("adam", "sgd"):
            raise ValueError("optimizer must be adam or sgd")


@dataclass
class BCHistory:
    """Per checkpoint: update count, BC loss (and its part above the noise floor) and
    closed-loop reward of the raw and EMA iterate."""

    step: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    loss_ema: list[float] = field(default_factory=list)
    excess: list[float] = field(default_factory=list)
    """The BC loss above the label-noise floor: mean |policy - expert|^2 on the validation
    states (the noisy-label loss minus the floor, in expectation)."""
    excess_ema: list[float] = field(default_factory=list)
    reward: list[float] = field(default_factory=list)
    reward_ema: list[float] = field(default_factory=list)


def bc_loss(policy: nn.Module, obs: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
    return ((policy(obs) - act) ** 2).sum(-1).mean()


class BehaviorCloning:
    """``BehaviorCloning(env, config, seed).fit(obs, act, val, rollouts) -> BCHistory``."""

    def __init__(self, env, config: BCConfig, seed: int = 0):
        self.env, self.config, self.seed = env, config, seed
        torch.manual_seed(seed)
        d_in = getattr(env, "obs_dim", env.state_dim)
        self.policy = mlp(d_in, env.action_dim, config.width, config.depth)
        self.ema = EMA(self.policy, config.ema)
        params = self.policy.parameters()
        if config.optimizer == "adam":
            self.opt = torch.optim.Adam(params, lr=config.lr)
        else:
            self.opt = torch.optim.SGD(params, lr=config.lr, momentum=config.momentum)

    @torch.no_grad()
    def evaluate(self, val: tuple[torch.Tensor, torch.Tensor], rollouts: Rollouts, hist):
        clean = self.env.expert(val[0])  # the noise-free label of every validation state
        for net, loss, excess, reward in (
            (self.policy, hist.loss, hist.excess, hist.reward),
            (self.ema.module, hist.loss_ema, hist.excess_ema, hist.reward_ema),
        ):
            loss.append(float(bc_loss(net, *val)))
            excess.append(float(bc_loss(net, val[0], clean)))
            reward.append(rollout_reward(self.env, net, rollouts))

    def fit(self, obs, act, val, rollouts: Rollouts, progress=None) -> BCHistory:
        """Train for ``config.steps`` minibatch updates; every ``eval_every`` updates, the
        raw and the EMA policy's BC loss on ``val`` and reward on ``rollouts``."""
        c, hist = self.config, BCHistory()
        g = torch.Generator().manual_seed(10_000 + self.seed)  # the minibatch order
        for t in range(1, c.steps + 1):
            idx = torch.randint(len(obs), (c.batch_size,), generator=g)
            self.opt.zero_grad(set_to_none=True)
            bc_loss(self.policy, obs[idx], act[idx]).backward()
            self.opt.step()
            self.ema.update(self.policy)
            if t % c.eval_every == 0:
                hist.step.append(t)
                self.evaluate(val, rollouts, hist)
                if progress is not None:
                    progress()
        return hist

"""The behaviour-cloning trainer: an MLP policy fit to expert (state, action) pairs by
minibatch Adam or SGD, with the raw iterate and its EMA both evaluated in closed loop at
every checkpoint on the same rollouts (common random numbers)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import nn

from .envs import Rollouts, rollout_reward
from .gva import EMA, EMASchedule, plateaued


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
    plateau_block: int = 0
    """The plateau rule (0: off, train exactly ``steps``). On: train ``steps`` (the minimum),
    checkpointing every ``search_every`` updates (the raw iterate's reward and losses only),
    then keep training, a block of ``plateau_block`` checkpoints at a time, until the raw
    reward stops rising: the mean J of each of the last two blocks exceeds its predecessor's
    by less than ``plateau_tol`` (three flat blocks in a row), or ``max_steps`` is reached
    (``capped``). Then the measured window: ``window`` checkpoints every ``eval_every``
    updates, raw and EMA, beginning at the plateau checkpoint."""
    plateau_tol: float = 0.01
    """The plateau rule's tolerance on the rise of a block's mean J (a fraction of the horizon)."""
    search_every: int = 0
    """Updates between two checkpoints before the window (0: ``eval_every``)."""
    max_steps: int = 0
    """The plateau search's cap in updates (0: ``steps``: no search)."""
    window: int = 0
    """Checkpoints of the measured window after the plateau (plateau rule on)."""

    def __post_init__(self):
        if min(self.steps, self.batch_size, self.eval_every, self.width, self.depth) < 1:
            raise ValueError("steps, batch_size, eval_every, width and depth must be >= 1")
        if min(self.plateau_block, self.search_every, self.max_steps, self.window) < 0:
            raise ValueError("plateau_block, search_every, max_steps and window must be >= 0")
        if self.plateau_block and self.window < 1:
            raise ValueError("the plateau rule needs a window of >= 1 checkpoint")
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
    train_loss: list[float] = field(default_factory=list)
    """The BC training loss (the noisy demonstrations the policy is fit to, all of them): the
    loss the paper plots beside the reward (Fig. 1)."""
    train_loss_ema: list[float] = field(default_factory=list)
    window_start: int = 0
    """Index of the checkpoint that opens the measured window (the plateau checkpoint; the
    second half of the run without the plateau rule)."""
    capped: bool = False
    """The plateau search stopped at ``max_steps``, not by the rule."""


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
    def evaluate(self, val: tuple[torch.Tensor, torch.Tensor], rollouts: Rollouts, hist,
                 train: tuple[torch.Tensor, torch.Tensor] | None = None, ema: bool = True):  # fmt: skip
        """Append one checkpoint to ``hist``; ``ema=False`` records the raw iterate only (the
        EMA's entries are NaN)."""
        clean = self.env.expert(val[0])  # the noise-free label of every validation state
        for net, loss, excess, reward, tr in (
            (self.policy, hist.loss, hist.excess, hist.reward, hist.train_loss),
            (self.ema.module, hist.loss_ema, hist.excess_ema, hist.reward_ema,
             hist.train_loss_ema),
        ):  # fmt: skip
            if net is self.ema.module and not ema:
                for values in (loss, excess, reward, tr):
                    values.append(math.nan)
                continue
            loss.append(float(bc_loss(net, *val)))
            excess.append(float(bc_loss(net, val[0], clean)))
            reward.append(rollout_reward(self.env, net, rollouts))
            tr.append(float(bc_loss(net, *train)) if train is not None else math.nan)

    @torch.no_grad()
    def evaluate_ema(self, val, rollouts: Rollouts, hist, train=None) -> None:
        """Fill in the EMA's entries of the last checkpoint (recorded raw-only)."""
        clean = self.env.expert(val[0])
        net = self.ema.module
        hist.loss_ema[-1] = float(bc_loss(net, *val))
        hist.excess_ema[-1] = float(bc_loss(net, val[0], clean))
        hist.reward_ema[-1] = rollout_reward(self.env, net, rollouts)
        hist.train_loss_ema[-1] = float(bc_loss(net, *train)) if train is not None else math.nan

    def _train(self, obs, act, n: int, g: torch.Generator) -> None:
        c = self.config
        for _ in range(n):
            idx = torch.randint(len(obs), (c.batch_size,), generator=g)
            self.opt.zero_grad(set_to_none=True)
            bc_loss(self.policy, obs[idx], act[idx]).backward()
            self.opt.step()
            self.ema.update(self.policy)
            self.updates += 1

    def fit(self, obs, act, val, rollouts: Rollouts, progress=None, on_window=None) -> BCHistory:
        """Train for ``config.steps`` minibatch updates; every ``eval_every`` updates, the
        raw and the EMA policy's BC loss on ``val`` (and on the training data) and reward on
        ``rollouts``. With ``config.plateau_block``, train on until the raw reward stops
        rising, then measure the window (see :class:`BCConfig`); ``on_window()`` is called
        when the window opens (``hist.window_start``)."""
        c, hist = self.config, BCHistory()
        g = torch.Generator().manual_seed(10_000 + self.seed)  # the minibatch order
        self.updates, train = 0, (obs, act)

        def checkpoint(every: int, ema: bool = True) -> None:
            self._train(obs, act, every, g)
            hist.step.append(self.updates)
            self.evaluate(val, rollouts, hist, train, ema=ema)
            if progress is not None:
                progress()

        if not c.plateau_block:  # the window: the second half of the checkpoints
            n = c.steps // c.eval_every
            hist.window_start = n // 2
            for i in range(n):
                checkpoint(c.eval_every)
                if i == hist.window_start and on_window is not None:
                    on_window()
            self._train(obs, act, c.steps - self.updates, g)
            return hist
        every, block = c.search_every or c.eval_every, c.plateau_block
        read = -1  # checkpoints since the minimum steps: the rule is read every block
        while True:
            checkpoint(every, ema=False)
            if self.updates < c.steps:
                continue
            read += 1
            if read % block:
                continue
            if plateaued(hist.reward, block, c.plateau_tol):
                break
            if self.updates >= max(c.max_steps, c.steps):
                hist.capped = True
                break
        self.evaluate_ema(val, rollouts, hist, train)  # the window's first checkpoint, whole
        hist.window_start = len(hist.step) - 1
        if on_window is not None:
            on_window()
        for _ in range(c.window):
            checkpoint(c.eval_every)
        return hist

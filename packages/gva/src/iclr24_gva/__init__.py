"""Butterfly Effects of SGD Noise (Block, Foster, Krishnamurthy, Simchowitz & Zhang, ICLR 2024),
https://arxiv.org/abs/2310.11428

Gradient variance amplification (GVA) in behaviour cloning, measured in closed loop with
common random numbers, and the paper's fix: an EMA of the iterates (``EMA``).
"""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .envs import (
    CartPole,
    LinearSystem,
    Pendulum,
    Rollouts,
    expert_dataset,
    lqr_gain,
    rollout_reward,
)
from .gva import (
    EMA,
    EMASchedule,
    curve_summary,
    late_std,
    mean_abs_jump,
    mean_rel_jump,
    plateaued,
)
from .train import BCConfig, BCHistory, BehaviorCloning, bc_loss, mlp

__version__ = "0.1.0"

__all__ = [
    "EMA",
    "BCConfig",
    "BCHistory",
    "BehaviorCloning",
    "EMASchedule",
    "CartPole",
    "LinearSystem",
    "Pendulum",
    "Rollouts",
    "bc_loss",
    "curve_summary",
    "expert_dataset",
    "late_std",
    "plateaued",
    "lqr_gain",
    "mean_abs_jump",
    "mean_rel_jump",
    "mlp",
    "rollout_reward",
]

"""A Unified and General Framework for Continual Learning (Wang, Li, Shen & Huang, ICLR 2024),
https://arxiv.org/abs/2403.13249

The unified CL objective L_CE + alpha D_Phi(outputs) + beta D_Psi(weights) with ER, DER,
DER++, LwF and online EWC as its instances, and the refresh (unlearn-then-relearn) plug-in.
"""

# The default streams train a small MLP: many tiny ops. OpenMP threads that spin while they
# wait stall each op when the cores are shared (measured ~10x slower with 2 threads on 2 busy
# cores): iclr24_common sets OMP_WAIT_POLICY=PASSIVE unless the user set it, and must be
# imported before torch for OpenMP to read it.
import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .continual import (
    ReservoirBuffer,
    Task,
    average_accuracy,
    backward_transfer,
    evaluate,
    forgetting,
)
from .data import Stream, gaussian_mixture, load_paper_dataset, split_digits
from .models import MLP, ResNet18
from .refresh import Refresh, diagonal_fisher
from .train import TrainConfig, train_stream
from .unified import DER, ER, METHODS, CLMethod, DERpp, EWCOnline, LwF, Replay, bregman

__version__ = "0.1.0"

__all__ = [
    "DER", "ER", "METHODS", "MLP", "CLMethod", "DERpp", "EWCOnline", "LwF", "Refresh",
    "Replay", "ReservoirBuffer", "ResNet18", "Stream", "Task", "TrainConfig",
    "average_accuracy", "backward_transfer", "bregman", "diagonal_fisher", "evaluate",
    "forgetting", "gaussian_mixture", "load_paper_dataset", "split_digits", "train_stream",
]  # fmt: skip

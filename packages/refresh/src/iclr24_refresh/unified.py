"""The unified continual-learning objective of "A Unified and General Framework for
Continual Learning" (Wang, Li, Shen & Huang, ICLR 2024), https://arxiv.org/abs/2403.13249,
Section 3 and Table 1:

    L_CL(theta) = L_CE(x, y) + alpha * D_Phi(h_theta(x'), z) + beta * D_Psi(theta, theta_old)

with Bregman divergences D_F(a, b) = F(a) - F(b) - <grad F(b), a - b>. The classic methods
are instances, each a class with one ``loss`` method:

===========  =========================================  ======================================
method       output term D_Phi                          weight term D_Psi
===========  =========================================  ======================================
ER           Phi = negative entropy on probabilities:   none
             D = KL(onehot(y_buf) || softmax(h(x_buf)))
             = cross-entropy on the buffer
DER          Phi = mean of squares: D = mean((h - z)^2)  none
             on buffered logits z
DER++        both of the above (two buffer draws)       none
LwF / KD     Phi = negative entropy: D =                 none
             KL(softmax(z_old/T) || softmax(h/T))
             (old model's outputs on the current batch)
EWC online   none                                       Psi = sum F theta^2: D = sum F (dtheta)^2
===========  =========================================  ======================================

Every divergence is computed by :func:`bregman` from its generator; ``baselines.py`` has
the same methods written as their usual standalone formulas (mammoth), and a test checks that
each instance reproduces them on the same batch (loss values equal to 1e-6).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

Generator = Callable[[Tensor], Tensor]  # Phi or Psi: tensor -> scalar


# ------------------------------------------------------------------ generators
def with_gradient(grad_fn: Callable[[Tensor], Tensor]):
    """Attach the closed-form gradient of a generator (``bregman`` then skips autograd)."""

    def wrap(phi):
        phi.grad = grad_fn
        return phi

    return wrap


@with_gradient(lambda p: (torch.log(p) + 1.0) / p.shape[0])
def neg_entropy(p: Tensor) -> Tensor:
    """Phi(p) = sum p log p, summed over classes, averaged over the batch. p: (n, K)."""
    return torch.special.xlogy(p, p).sum(-1).mean()


@with_gradient(lambda z: 2.0 * z / z.numel())
def mean_square(z: Tensor) -> Tensor:
    """Phi(z) = mean(z^2) over every element: its divergence is ``F.mse_loss``."""
    return z.pow(2).mean()


def fisher_quadratic(fisher: Tensor) -> Generator:
    """Psi(theta) = sum F theta^2 (diagonal F): its divergence is sum F (theta - theta_old)^2."""
    psi = with_gradient(lambda theta: 2.0 * fisher * theta)(
        lambda theta: (fisher * theta.pow(2)).sum()
    )
    return psi


def bregman(phi: Generator, a: Tensor, b: Tensor) -> Tensor:
    """D_phi(a, b) = phi(a) - phi(b) - <grad phi(b), a - b>; differentiable in a and b.

    grad phi(b) is the generator's closed form where it has one (``phi.grad``), else taken
    by autograd (with a graph, so the divergence stays differentiable in b as well): any
    convex generator works, not only the ones above."""
    if hasattr(phi, "grad"):
        return phi(a) - phi(b) - (phi.grad(b) * (a - b)).sum()
    b_ = b if b.requires_grad else b.detach().requires_grad_(True)
    with torch.enable_grad():
        (grad_b,) = torch.autograd.grad(phi(b_), b_, create_graph=b.requires_grad)
    if not b.requires_grad:
        grad_b = grad_b.detach()
    return phi(a) - phi(b) - (grad_b * (a - b)).sum()


# ------------------------------------------------------------------ pieces of L_CL
def ce_divergence(logits: Tensor, labels: Tensor) -> Tensor:
    """Cross-entropy as a Bregman divergence: KL(onehot(y) || softmax(logits)), the Phi =
    negative-entropy divergence from the label distribution to the prediction."""
    onehot = F.one_hot(labels, logits.shape[-1]).to(logits.dtype)
    return bregman(neg_entropy, onehot, probabilities(logits))


def probabilities(logits: Tensor) -> Tensor:
    """softmax, kept off exact zero (log 0 in grad Phi would give 0 * inf = nan)."""
    return logits.softmax(-1).clamp_min(torch.finfo(logits.dtype).tiny)


def flat_params(net: nn.Module) -> Tensor:
    """All parameters as one vector (the order of ``net.parameters()``)."""
    return torch.cat([p.reshape(-1) for p in net.parameters()])


@dataclass
class Replay:
    """What a method sampled from the buffer for one step (None where it draws nothing).

    DER++ draws twice, as the official code does: one draw for the logit term, an
    independent one for the label term."""

    x_logits: Tensor | None = None
    """(m, ...) buffered inputs for the logit term."""
    logits: Tensor | None = None
    """(m, K) logits stored with them."""
    x_labels: Tensor | None = None
    """(m, ...) buffered inputs for the label term."""
    labels: Tensor | None = None
    """(m,) their labels."""


class CLMethod:
    """One instance of the unified objective. ``loss(net, x, y, replay)`` is L_CL on a
    batch; ``draws`` says which buffer samples it needs (``"logits"``, ``"labels"``);
    ``end_task`` updates what the weight or distillation term keeps between tasks."""

    name = "sgd"
    draws: tuple[str, ...] = ()

    def loss(
        self, net: nn.Module, x: Tensor, y: Tensor, replay: Replay | None = None, out=None
    ) -> Tensor:
        """L_CL on the batch (x, y); ``out`` = net(x) when the caller already has it."""
        return ce_divergence(net(x) if out is None else out, y)

    def end_task(self, net: nn.Module, x: Tensor, y: Tensor, task_classes: int) -> None:
        """Called once after each task with that task's training inputs and labels."""


@dataclass
class ER(CLMethod):
    """Experience replay: CE + beta * CE on a buffer draw (official er.py: ``--beta``)."""

    beta: float = 1.0
    name = "er"
    draws = ("labels",)

    def loss(self, net, x, y, replay=None, out=None):
        out = ce_divergence(net(x) if out is None else out, y)
        if replay is not None and replay.x_labels is not None:
            out = out + self.beta * ce_divergence(net(replay.x_labels), replay.labels)
        return out


@dataclass
class DER(CLMethod):
    """Dark experience replay: CE + alpha * mean((h(x_buf) - z_buf)^2)."""

    alpha: float = 0.3
    name = "der"
    draws = ("logits",)

    def loss(self, net, x, y, replay=None, out=None):
        out = ce_divergence(net(x) if out is None else out, y)
        if replay is not None and replay.x_logits is not None:
            out = out + self.alpha * bregman(mean_square, net(replay.x_logits), replay.logits)
        return out


@dataclass
class DERpp(CLMethod):
    """DER++: CE + alpha * logit divergence + beta * CE on a second, independent draw."""

    alpha: float = 0.1
    beta: float = 0.5
    name = "derpp"
    draws = ("logits", "labels")

    def loss(self, net, x, y, replay=None, out=None):
        out = ce_divergence(net(x) if out is None else out, y)
        if replay is not None and replay.x_logits is not None:
            out = out + self.alpha * bregman(mean_square, net(replay.x_logits), replay.logits)
            out = out + self.beta * ce_divergence(net(replay.x_labels), replay.labels)
        return out


@dataclass
class LwF(CLMethod):
    """Learning without forgetting / knowledge distillation: CE + alpha *
    KL(softmax(z_old / T) || softmax(h / T)) on the current batch, over the classes seen
    before this task, z_old from the network frozen at the last task end."""

    alpha: float = 1.0
    temperature: float = 2.0
    name = "lwf"
    old: nn.Module | None = field(default=None, repr=False)
    seen_classes: int = 0

    def loss(self, net, x, y, replay=None, out=None):
        logits = net(x) if out is None else out
        out = ce_divergence(logits, y)
        if self.old is not None and self.seen_classes:
            k, t = self.seen_classes, self.temperature
            with torch.no_grad():
                target = probabilities(self.old(x)[:, :k] / t)
            out = out + self.alpha * bregman(neg_entropy, target, probabilities(logits[:, :k] / t))
        return out

    def end_task(self, net, x, y, task_classes):
        import copy

        self.old = copy.deepcopy(net).eval().requires_grad_(False)
        self.seen_classes += task_classes


@dataclass
class EWCOnline(CLMethod):
    """Online EWC: CE + lam * sum F (theta - theta_old)^2, with F the probability-weighted
    diagonal Fisher of the true label (official ewc_on.py), F <- gamma F + F_task."""

    lam: float = 10.0
    gamma: float = 1.0
    name = "ewc_on"
    fisher: Tensor | None = field(default=None, repr=False)
    theta_old: Tensor | None = field(default=None, repr=False)

    def loss(self, net, x, y, replay=None, out=None):
        out = ce_divergence(net(x) if out is None else out, y)
        if self.fisher is not None:
            out = out + self.lam * bregman(
                fisher_quadratic(self.fisher), flat_params(net), self.theta_old
            )
        return out

    def end_task(self, net, x, y, task_classes):
        from .refresh import diagonal_fisher

        fisher = torch.cat([f.reshape(-1) for f in diagonal_fisher(net, x, y)])
        self.fisher = fisher if self.fisher is None else self.gamma * self.fisher + fisher
        self.theta_old = flat_params(net).detach().clone()


METHODS = {m.name: m for m in (ER, DER, DERpp, LwF, EWCOnline)}

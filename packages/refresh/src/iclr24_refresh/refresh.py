"""Refresh learning, the unlearn-then-relearn plug-in of "A Unified and General Framework for
Continual Learning" (Wang, Li, Shen & Huang, ICLR 2024), https://arxiv.org/abs/2403.13249,
Section 4; official code github.com/joey-wang123/CL-refresh-learning, ``models/derpp.py``
(``unlearn`` and ``end_task``) at HEAD 7c90da5 (2024-03-22).

Three named variants:

``official`` (what ``derpp.py`` runs at HEAD 7c90da5, as since commit 575e441 "revision":
``observe`` calls ``unlearn`` on the current batch *before* the CL method's SGD step on it):
    g_l   = grad_l CE(theta; x, y)                         ascent on the current batch's CE,
    u_l   = ||theta_l|| / (||eta g_l|| + 1e-20) * eta g_l   rescaled per tensor l to its norm,
    theta_l += delta * (u_l + 0.001 xi_l) / (1 + 0.001 F_l) preconditioned, xi ~ N(0, I),
    with eta = 0.01 (the unlearning SGD), delta = 1e-5 and F the probability-weighted
    diagonal Fisher p(y|x) (grad log p(y|x))^2 of the task just finished, F <- 1e-5 F + F_task.
    So ||theta_l|| grows by a relative delta per step along the ascent direction.

``official-2484f2a`` (the first official commit, 2484f2a, 2024-03-20): the same step, called
*after* the SGD step on the same batch (so it precedes the next batch's step). Commit 575e441
moved the call before the step the next day; kept only to compare the two placements.

``paper`` (Sec. 4, Eq. 7-8: unlearning as Fisher-preconditioned Langevin ascent on L_CL,
before the relearning step on the same batch):
    theta += gamma P g + sqrt(2 gamma T P) xi,  g = grad L_CL(theta; batch),  P = 1/(1 + 0.001 F)
    (the damped inverse Fisher; the paper writes F^-1), gamma = ``step``, T = ``temperature``.
    No value of gamma or T is given in the stored copies of the paper we could read (its
    Table 5 varies the unlearning rate gamma; its numbers were not found, see the README); the
    defaults here (gamma = 0.01, the official unlearning learning rate; T = 1e-7) are ours.

``random`` (the no-op control, ours): the official step's budget in a random direction, each
tensor moved by scale * delta * ||theta_l|| along a uniformly random unit vector, before the
learning step; no gradient, no Fisher. What refresh does beyond nudging the weights by its
step size is what it does better than this arm.

The noise comes from the plug-in's own ``torch.Generator``, so runs with and without refresh
at one seed consume the same random numbers elsewhere and stay paired.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn

EPS = 1e-20  # derpp.py: epsilon = 1E-20
# variant -> where the training loop calls ``unlearn`` relative to the method's SGD step
VARIANTS = {"official": "before", "official-2484f2a": "after", "paper": "before",
            "random": "before"}  # fmt: skip


def _grads(net: nn.Module, loss_fn: Callable[[nn.Module], Tensor]) -> list[Tensor]:
    """Gradients of ``loss_fn(net)`` w.r.t. the parameters, leaving ``net`` as it was:
    buffers (BatchNorm running statistics) are restored after the forward (official: the
    ascent step runs on a copy of the network, ``self.temp``)."""
    saved = [b.clone() for b in net.buffers()]
    params = list(net.parameters())
    with torch.enable_grad():
        grads = torch.autograd.grad(loss_fn(net), params, allow_unused=True)
    with torch.no_grad():
        for buf, old in zip(net.buffers(), saved):
            buf.copy_(old)
    return list(grads)


def diagonal_fisher(net: nn.Module, x: Tensor, y: Tensor, chunk: int = 256) -> list[Tensor]:
    """Probability-weighted diagonal Fisher of the true label, one tensor per parameter:

        F = (1/N) sum_i p(y_i | x_i) (grad log p(y_i | x_i))^2

    (derpp.py / ewc_on.py ``end_task``: ``exp_cond_prob * param.grad ** 2``, summed over
    examples one at a time and divided by len(loader) * batch_size; here divided by N).
    Networks made of ``nn.Linear`` layers only take an exact closed form (a per-example
    weight gradient is the outer product g_i a_i^T, so its square is g_i^2 (a_i^2)^T);
    others take the official loop, each example its own batch of one through a copy of the
    network in train mode."""
    mods = [m for m in net.modules() if len(list(m.parameters(recurse=False)))]
    if all(isinstance(m, nn.Linear) for m in mods):
        return _fisher_linear(net, x, y, chunk)
    return _fisher_loop(net, x, y)


def _fisher_linear(net: nn.Module, x: Tensor, y: Tensor, chunk: int) -> list[Tensor]:
    acts: dict[nn.Module, Tensor] = {}
    outs: dict[nn.Module, Tensor] = {}
    linears = [m for m in net.modules() if isinstance(m, nn.Linear)]

    def keep(m, inp, out):
        acts[m] = inp[0].detach()
        out.retain_grad()
        outs[m] = out

    hooks = [m.register_forward_hook(keep) for m in linears]
    acc = {id(p): torch.zeros_like(p) for p in net.parameters()}
    try:
        for s in range(0, len(y), chunk):
            xs, ys = x[s : s + chunk], y[s : s + chunk]
            with torch.enable_grad():
                logp = net(xs).log_softmax(-1).gather(1, ys[:, None])[:, 0]  # (n,)
                grads = torch.autograd.grad(logp.sum(), [outs[m] for m in linears])
            w = logp.detach().exp()[:, None]  # (n, 1) p(y|x), detached as officially
            for m, g in zip(linears, grads):  # g: (n, out) = d log p_i / d out_i
                acc[id(m.weight)] += (w * g.pow(2)).T @ acts[m].pow(2)
                if m.bias is not None:
                    acc[id(m.bias)] += (w * g.pow(2)).sum(0)
    finally:
        for h in hooks:
            h.remove()
    return [acc[id(p)] / len(y) for p in net.parameters()]


def _fisher_loop(net: nn.Module, x: Tensor, y: Tensor) -> list[Tensor]:
    """The official loop: one example at a time through a copy of the network in train mode."""
    model = copy.deepcopy(net).train()
    params = list(model.parameters())
    fisher = [torch.zeros_like(p) for p in params]
    for xi, yi in zip(x, y):
        with torch.enable_grad():
            logp = model(xi[None]).log_softmax(-1)[0, yi]
            grads = torch.autograd.grad(logp, params, allow_unused=True)
        for f, g in zip(fisher, grads):
            if g is not None:
                f += logp.detach().exp() * g.pow(2)
    return [f / len(y) for f in fisher]


def official_displacement(
    params: list[Tensor],
    grads: list[Tensor],
    fisher: list[Tensor],
    *,
    delta: float,
    noise: float,
    damping: float,
    unlearn_lr: float,
    generator: torch.Generator,
) -> list[Tensor]:
    """The official per-tensor displacement (see the module docstring), one per parameter."""
    out = []
    for p, g, f in zip(params, grads, fisher):
        if g is None:
            out.append(torch.zeros_like(p))
            continue
        update = unlearn_lr * g  # temp_param - model_param after SGD ascent on -CE
        scaled = p.detach().norm() / (update.norm() + EPS) * update
        xi = torch.randn(p.shape, generator=generator, dtype=p.dtype).to(p.device)
        out.append(delta * (scaled + noise * xi) / (1.0 + damping * f))
    return out


def paper_displacement(
    grads: list[Tensor],
    fisher: list[Tensor],
    *,
    step: float,
    temperature: float,
    damping: float,
    generator: torch.Generator,
) -> list[Tensor]:
    """Fisher-preconditioned Langevin ascent: gamma P g + sqrt(2 gamma T P) xi."""
    out = []
    for g, f in zip(grads, fisher):
        precond = 1.0 / (1.0 + damping * f)
        xi = torch.randn(f.shape, generator=generator, dtype=f.dtype).to(f.device)
        drift = step * precond * g if g is not None else torch.zeros_like(f)
        out.append(drift + (2.0 * step * temperature * precond).sqrt() * xi)
    return out


def random_displacement(params: list[Tensor], *, delta: float,
                        generator: torch.Generator) -> list[Tensor]:  # fmt: skip
    """The no-op control at the official budget: each tensor moved by delta * ||theta_l|| in
    a uniformly random direction."""
    out = []
    for p in params:
        xi = torch.randn(p.shape, generator=generator, dtype=p.dtype).to(p.device)
        out.append(delta * p.detach().norm() / (xi.norm() + EPS) * xi)
    return out


@dataclass
class Refresh:
    """The refresh plug-in around any CL method: ``when`` says where the training loop calls
    ``unlearn`` ("before" the learning step on the same batch, as the official code at HEAD
    7c90da5 and the paper; "after" it for ``official-2484f2a``, the first official commit),
    ``end_task`` refreshes the Fisher."""

    variant: Literal["official", "official-2484f2a", "paper", "random"] = "official"
    delta: float = 1e-5
    """Official relative step per tensor (derpp.py: self.delta = 0.00001)."""
    noise: float = 1e-3
    """Official noise scale inside the step (derpp.py: 0.001 * randn_like)."""
    damping: float = 1e-3
    """Fisher preconditioner 1 / (1 + damping F) (derpp.py: 1.0/(identity + 0.001*fish))."""
    tau: float = 1e-5
    """Decay of the previous tasks' Fisher (derpp.py: self.tau = 0.00001)."""
    unlearn_lr: float = 0.01
    """Learning rate of the official ascent copy (derpp.py: temp_opt = SGD(lr=0.01))."""
    step: float = 0.01
    """Paper variant: Langevin step gamma (ours: the official unlearning learning rate)."""
    temperature: float = 1e-7
    """Paper variant: Langevin temperature T (ours; the paper gives none)."""
    scale: float = 1.0
    """Multiplies the step (delta, or gamma): 10 and 100 are the reproduction's large steps."""
    seed: int = 0
    """Seed of the plug-in's own noise generator."""

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}")
        self._gen = torch.Generator().manual_seed(self.seed)
        self.fisher: list[Tensor] | None = None
        self.steps = 0

    @property
    def when(self) -> str:
        return VARIANTS[self.variant]

    @torch.no_grad()
    def unlearn(
        self,
        net: nn.Module,
        x: Tensor,
        y: Tensor,
        loss_fn: Callable[[nn.Module], Tensor] | None = None,
    ) -> list[Tensor]:
        """Move ``net`` one unlearning step on the batch; returns the displacement.

        official (either placement): ascent on CE(net(x), y); paper: on ``loss_fn(net)`` (the
        method's L_CL on this batch, buffer terms included), CE where none is given."""
        params = list(net.parameters())
        if self.variant == "random":
            disp = random_displacement(params, delta=self.scale * self.delta, generator=self._gen)
            for p, d in zip(params, disp):
                p.add_(d)
            self.steps += 1
            return disp
        if self.fisher is None:
            self.fisher = [torch.zeros_like(p) for p in params]
        ce = lambda m: F.cross_entropy(m(x), y)  # noqa: E731
        official = self.variant != "paper"
        g = _grads(net, ce if official or loss_fn is None else loss_fn)
        if official:
            disp = official_displacement(
                params, g, self.fisher, delta=self.scale * self.delta, noise=self.noise,
                damping=self.damping, unlearn_lr=self.unlearn_lr, generator=self._gen,
            )  # fmt: skip
        else:
            disp = paper_displacement(
                g, self.fisher, step=self.scale * self.step, temperature=self.temperature,
                damping=self.damping, generator=self._gen,
            )  # fmt: skip
        for p, d in zip(params, disp):
            p.add_(d)
        self.steps += 1
        return disp

    def end_task(self, net: nn.Module, x: Tensor, y: Tensor) -> None:
        """F <- tau F + F_task, with F_task the Fisher on the finished task's training data
        (the random control uses none)."""
        if self.variant == "random":
            return
        new = diagonal_fisher(net, x, y)
        if self.fisher is None:
            self.fisher = new
        else:
            self.fisher = [self.tau * f + n for f, n in zip(self.fisher, new)]

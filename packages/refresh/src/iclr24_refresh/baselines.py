"""The classic methods as their usual standalone formulas (mammoth's ``models/er.py``,
``der.py``, ``derpp.py``, ``ewc_on.py``, ``lwf.py``), written directly with
``F.cross_entropy`` / ``F.mse_loss`` / ``F.kl_div``: the reference that the unified objective's
instances (``unified.py``) must reproduce on the same batch and buffer draw.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .unified import DER, ER, CLMethod, DERpp, EWCOnline, LwF, Replay, flat_params


def standalone_loss(
    method: CLMethod, net: nn.Module, x: Tensor, y: Tensor, replay: Replay | None
) -> Tensor:
    """The usual formula of ``method`` (same hyper-parameters and state) on one batch."""
    out = net(x)
    loss = F.cross_entropy(out, y)
    has = replay is not None
    if isinstance(method, ER) and has:
        loss = loss + method.beta * F.cross_entropy(net(replay.x_labels), replay.labels)
    elif isinstance(method, DER) and has:
        loss = loss + method.alpha * F.mse_loss(net(replay.x_logits), replay.logits)
    elif isinstance(method, DERpp) and has:
        loss = loss + method.alpha * F.mse_loss(net(replay.x_logits), replay.logits)
        loss = loss + method.beta * F.cross_entropy(net(replay.x_labels), replay.labels)
    elif isinstance(method, EWCOnline) and method.fisher is not None:
        loss = (
            loss + method.lam * (method.fisher * (flat_params(net) - method.theta_old) ** 2).sum()
        )
    elif isinstance(method, LwF) and method.old is not None and method.seen_classes:
        k, t = method.seen_classes, method.temperature
        with torch.no_grad():
            target = (method.old(x)[:, :k] / t).softmax(-1)
        kd = F.kl_div((out[:, :k] / t).log_softmax(-1), target, reduction="batchmean")
        loss = loss + method.alpha * kd
    return loss


def mammoth_lwf_term(method: LwF, net: nn.Module, x: Tensor) -> Tensor:
    """mammoth lwf.py's distillation term, -mean sum p_old log p_new with p = softmax(z / T):
    the cross-entropy H(p_old, p_new) = KL(p_old || p_new) + H(p_old). It differs from the
    Bregman (KL) term by the entropy of the old outputs, a constant in theta: the same
    gradient, a shifted value."""
    k, t = method.seen_classes, method.temperature
    with torch.no_grad():
        p_old = (method.old(x)[:, :k] / t).softmax(-1)
    return -(p_old * (net(x)[:, :k] / t).log_softmax(-1)).sum(1).mean()

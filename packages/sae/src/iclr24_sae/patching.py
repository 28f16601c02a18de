"""Activation patching in a feature basis (the paper's IOI experiment, Sec. 5): move the
hooked activations of the clean prompts towards the corrupted ones along the ``k`` features
whose codes change most, and measure how much of the corrupted behaviour that brings.
The fewer features needed for a given share of the effect, the more finely the basis
localises the behaviour. A library function: the default reproduction does not run it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from .harvest import run_to_hook, splice


@torch.no_grad()
def patching_curve(
    model: torch.nn.Module,
    module: torch.nn.Module,
    clean_ids: torch.Tensor,
    corrupt_ids: torch.Tensor,
    metric: Callable[[torch.Tensor], torch.Tensor],
    encode: Callable[[torch.Tensor], torch.Tensor],
    directions: torch.Tensor,
    ks: Sequence[int],
    position: int = -1,
) -> list[float]:
    """Share of the clean-to-corrupted change of ``metric`` recovered by patching ``k``
    features at ``position``, for every ``k`` in ``ks``.

    ``clean_ids``, ``corrupt_ids``: ``(batch, seq)`` prompt pairs of equal length;
    ``metric(logits) -> (batch,)`` (e.g. a logit difference at the last position);
    ``encode(h) -> codes`` ``(n, m)`` and ``directions`` ``(m, d)``: a linear read-out of the
    basis, so that moving the codes by ``delta`` moves ``h`` by ``delta @ directions``
    (an SAE: its encoder and its dictionary; neurons: identity and ``eye(d)``). Features are
    ranked by the mean absolute change of their code between the pairs.
    """
    h_clean = run_to_hook(model, module, clean_ids)[:, position]  # (batch, d)
    h_corrupt = run_to_hook(model, module, corrupt_ids)[:, position]
    delta = encode(h_corrupt) - encode(h_clean)  # (batch, m)
    order = delta.abs().mean(0).argsort(descending=True)
    base = metric(model(input_ids=clean_ids, use_cache=False).logits)
    target = metric(model(input_ids=corrupt_ids, use_cache=False).logits)
    shares = []
    for k in ks:
        mask = torch.zeros(delta.shape[1], dtype=delta.dtype)
        mask[order[:k]] = 1
        shift = (delta * mask) @ directions  # (batch, d)

        def patch(h, shift=shift):
            h = h.clone()
            h[:, position] = h[:, position] + shift.to(h.dtype)
            return h

        with splice(module, patch):
            out = metric(model(input_ids=clean_ids, use_cache=False).logits)
        shares.append(float(((out - base) / (target - base)).mean()))
    return shares


def features_needed(ks: Sequence[int], shares: Sequence[float], share: float = 0.5) -> float:
    """The smallest ``k`` whose patch recovers at least ``share`` of the effect (inf if
    none does)."""
    for k, s in zip(ks, shares):
        if s >= share:
            return float(k)
    return float("inf")

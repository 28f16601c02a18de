"""Attention-based Iterative Decomposition (AID) for tensor product representations.

Park, Choi & Lee, "Attention-based Iterative Decomposition for Tensor Product Representation",
ICLR 2024, https://arxiv.org/abs/2406.01012 (official code: github.com/taewonpark/AID,
``SARtask/models/AID.py``, class ``Decomposition``).

A TPR model turns each step's input features ``u_1..u_n`` into its structural components
(roles, fillers, unbinding vectors). The usual decomposition is one linear map of the
concatenated features. AID keeps that map only as the *initial slots* and refines them with a
slot-attention-like competition between slots for input features:

    S0 = W_init [u_1; ...; u_n]                      (n_com slots of size D)
    K  = ELU(W_k u) + 1,   V = W_v u                 (n_inputs x D)
    repeat T times:
        Q = ELU((W_q S + S0) / sqrt(D)) + 1          (the initial slots re-added every time)
        A = softmax over slots of K Q^T              (inputs compete for slots)
        A = (A + eps) / sum over inputs              (a weighted mean over inputs per slot)
        S = S + MLP(LN(A^T V)) / D                   (residual update; no GRU)
    out = W_o [dropout(S0); S]

``W_k, W_v, W_q``, the MLP, its LayerNorm and ``W_o`` are shared by every group of
components (the binding and the reasoning decompositions of one model); each group has its
own initialiser ``W_init``. Shapes are written for inputs ``(..., n_inputs, input_dim)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn


def _groups(num_components: int | Sequence[int]) -> tuple[int, ...]:
    groups = (num_components,) if isinstance(num_components, int) else tuple(num_components)
    if not groups or min(groups) < 1:
        raise ValueError(f"num_components must be positive, got {num_components}")
    return groups


def elu_plus_one(x: torch.Tensor) -> torch.Tensor:
    """The positive feature map of linear attention (official code: ``F.elu(x) + 1``)."""
    return F.elu(x) + 1.0


class LinearDecomposition(nn.Module):
    """The decomposition AID replaces: one linear map of the concatenated input features per
    group of components (what FWM, TPR-RNN and the linear Transformer do)."""

    def __init__(
        self,
        input_dim: int,
        num_inputs: int,
        num_components: int | Sequence[int],
        slot_size: int,
    ):
        super().__init__()
        self.groups, self.slot_size = _groups(num_components), slot_size
        self.init = nn.ModuleList(
            nn.Linear(num_inputs * input_dim, n * slot_size) for n in self.groups
        )

    def group(self, inputs: torch.Tensor, g: int) -> torch.Tensor:
        """The components of group ``g`` alone: (..., num_inputs, input_dim) -> (..., n_g, D)."""
        return self.init[g](inputs.flatten(-2)).unflatten(-1, (self.groups[g], self.slot_size))

    def forward(self, inputs: torch.Tensor) -> list[torch.Tensor]:
        """inputs: (..., num_inputs, input_dim) -> one (..., n_g, slot_size) per group."""
        flat = inputs.flatten(-2)  # (..., num_inputs * input_dim)
        return [w(flat).unflatten(-1, (n, self.slot_size)) for w, n in zip(self.init, self.groups)]


class AIDDecomposition(nn.Module):
    """AID: the initial slots of a linear decomposition, refined by ``iterations`` rounds of
    competitive attention over the input features (module docstring for the equations).

    ``num_components`` is an int (one group) or a sequence (e.g. ``(3, 2)``: the binding and
    the reasoning components of an FWM), all groups sharing the attention weights. With
    ``num_inputs=None`` there is no initialiser: the backbone passes its own initial slots to
    :meth:`refine` (the linear Transformer's keys and values).
    Defaults follow the official SAR script (``train.py``: slot 32, MLP 64, 2 iterations).
    """

    def __init__(
        self,
        input_dim: int,
        num_inputs: int | None,
        num_components: int | Sequence[int],
        slot_size: int = 32,
        iterations: int = 2,
        mlp_hidden: int = 64,
        dropout: float = 0.5,
        eps: float = 1e-8,
    ):
        super().__init__()
        if iterations < 0:
            raise ValueError(f"iterations must be >= 0, got {iterations}")
        self.groups, self.slot_size = _groups(num_components), slot_size
        self.iterations, self.eps = iterations, eps
        # num_inputs=None: the backbone gives the initial slots to ``refine`` (linear Transformer)
        self.initial = (
            None
            if num_inputs is None
            else LinearDecomposition(input_dim, num_inputs, self.groups, slot_size)
        )
        self.to_q = nn.Linear(slot_size, slot_size)
        self.to_k = nn.Linear(input_dim, slot_size)
        self.to_v = nn.Linear(input_dim, slot_size)
        self.norm = nn.LayerNorm(slot_size)
        self.mlp = nn.Sequential(
            nn.Linear(slot_size, mlp_hidden), nn.ReLU(), nn.Linear(mlp_hidden, slot_size)
        )
        self.out = nn.Linear(2 * slot_size, slot_size)
        self.dropout = nn.Dropout(dropout)  # official: p = 0.5 on the initial slots

    def attend(self, inputs: torch.Tensor, slots0: torch.Tensor, mask: torch.Tensor | None = None):
        """The iterations of one group. inputs: (..., n_in, d); slots0: (..., n_com, D); mask:
        (..., n_in), True for real inputs (e.g. the words of a padded sentence) or None.
        Returns the refined slots (..., n_com, D) and the last attention (..., n_in, n_com)."""
        k = elu_plus_one(self.to_k(inputs))  # (..., n_in, D)
        v = self.to_v(inputs)  # (..., n_in, D)
        slots = slots0
        attn = slots0.new_zeros(*inputs.shape[:-1], slots0.shape[-2])
        for _ in range(self.iterations):
            q = elu_plus_one((self.to_q(slots) + slots0) * self.slot_size**-0.5)  # (..., n_com, D)
            attn = torch.softmax(k @ q.transpose(-1, -2), dim=-1)  # (..., n_in, n_com)
            attn = attn + self.eps
            if mask is not None:  # padded inputs take no part in the mean over inputs
                attn = attn * mask[..., None].to(attn.dtype)
            # each slot: a mean over inputs (clamped: a fully padded sentence gives zero updates)
            attn = attn / attn.sum(dim=-2, keepdim=True).clamp_min(self.eps)
            updates = attn.transpose(-1, -2) @ v  # (..., n_com, D)
            slots = slots + self.mlp(self.norm(updates)) / self.slot_size
        return slots, attn

    def refine(self, inputs: torch.Tensor, slots0: torch.Tensor, mask=None):
        """AID on given initial slots: ``W_o [dropout(S0); S]`` and the last attention map.
        For backbones whose initial slots come from another view of the input (TPR-RNN:
        from the sentence vector, attending over its words)."""
        slots, attn = self.attend(inputs, slots0, mask)
        return self.out(torch.cat((self.dropout(slots0), slots), dim=-1)), attn

    def forward(self, inputs: torch.Tensor, return_attention: bool = False):
        """inputs: (..., num_inputs, input_dim) -> one (..., n_g, slot_size) per group (and the
        last iteration's attention maps (..., num_inputs, n_g) with ``return_attention``)."""
        if self.initial is None:
            raise ValueError("built with num_inputs=None: call refine(inputs, initial_slots)")
        outs, maps = [], []
        for slots0 in self.initial(inputs):
            out, attn = self.refine(inputs, slots0)
            outs.append(out)
            maps.append(attn)
        return (outs, maps) if return_attention else outs

"""The Fast Weight Memory backbone (Schlag et al., ICLR 2021) as the AID paper runs it on SAR,
with a switch between its own linear decomposition and AID.

Follows the official ``SARtask/models/AID.py`` (class ``Network``): each step's input
``x_t = [emb(key); emb(value); flag]`` is projected to ``n_inputs`` feature streams, one LSTM
(shared by the streams) gives their context ``u_t`` (n_inputs x H), the decomposition turns
``u_t`` into three binding components (roles r1, r2 and filler f) and 1 + n_read reasoning
components (unbinding vectors), all through tanh. The memory is a third-order tensor
F (m x m x m), written and read at every step:

    write:  g = sigmoid(w_g . [u_t] + 1);   v_old = F . (r1 x r2)
            F <- F + (r1 x r2) x g (f - v_old) / m;   F <- F / max(1, ||F||_F)
    read:   o = LN(F . (n x e))                     (n_read times, o feeding the next read)
    logits  = W_out(dropout(W_h [u_t]) + W_o o)
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .aid import AIDDecomposition, LinearDecomposition

DECOMPOSITIONS = ("linear", "aid")


def clip_frobenius(memory: torch.Tensor) -> torch.Tensor:
    """Scale each memory (batch, m, m, m) down to Frobenius norm 1 when it is above 1."""
    norm = memory.flatten(1).norm(dim=-1)  # (batch,)
    return memory / torch.clamp(norm, min=1.0)[:, None, None, None]


def fwm_write(memory, role1, role2, filler, gate):
    """One gated delta-rule write. memory: (B, m, m, m); role1, role2, filler: (B, m);
    gate: (B, 1). The value stored at role1 x role2 moves towards ``filler`` by gate / m."""
    B, m = filler.shape
    flat = memory.reshape(B, m * m, m)
    role = (role1[:, :, None] * role2[:, None, :]).reshape(B, 1, m * m)  # (B, 1, m*m)
    old = torch.bmm(role, flat)  # (B, 1, m): the value now stored at this role
    new = gate[:, :, None] * (filler[:, None, :] - old) / m  # official scale 1 / mem_size
    # one fused pass over the memory: flat + role^T new
    return clip_frobenius(torch.baddbmm(flat, role.transpose(1, 2), new).view_as(memory))


def fwm_read(memory, unbind1, unbind2):
    """n_read chained reads. memory: (B, m, m, m); unbind1: (B, m); unbind2: (n_read, B, m)."""
    B, m = unbind1.shape
    out = unbind1
    for e in unbind2:
        # F . (out x e): contract the first two memory axes with out and e
        role = (out[:, :, None] * e[:, None, :]).reshape(B, 1, m * m)
        out = torch.bmm(role, memory.reshape(B, m * m, m)).squeeze(1)
        out = F.layer_norm(out, out.shape[-1:])  # official: LayerNorm without affine
    return out


class FWM(nn.Module):
    """FWM with ``decomposition="linear"`` (the baseline) or ``"aid"``. Defaults are the
    official SAR script's (``SARtask/train.py``): hidden 256, 1 LSTM layer, 3 inputs, slot =
    memory size 32, MLP 64, 2 AID iterations, 1 read, input projection 32, embedding 50."""

    def __init__(
        self,
        vocab_size: int,
        decomposition: str = "aid",
        embedding_size: int = 50,
        hidden_size: int = 256,
        num_layers: int = 1,
        num_inputs: int = 3,
        mem_size: int = 32,
        mlp_hidden: int = 64,
        iterations: int = 2,
        n_read: int = 1,
        input_proj_size: int = 32,
        flag_size: int = 2,
    ):
        super().__init__()
        if decomposition not in DECOMPOSITIONS:
            raise ValueError(
                f"decomposition must be one of {DECOMPOSITIONS}, got {decomposition!r}"
            )
        self.decomposition_name, self.num_inputs, self.n_read = decomposition, num_inputs, n_read
        self.embedding = nn.Embedding(vocab_size, embedding_size)
        nn.init.xavier_normal_(self.embedding.weight)  # official init
        self.input_proj = nn.Linear(2 * embedding_size + flag_size, num_inputs * input_proj_size)
        self.lstm = nn.LSTM(input_proj_size, hidden_size, num_layers)
        groups = (3, 1 + n_read)  # binding: role1, role2, filler; reasoning: unbinding vectors
        # the slot size is the memory size: the components enter the memory without projection
        if decomposition == "aid":
            self.decomposition = AIDDecomposition(
                hidden_size, num_inputs, groups, mem_size, iterations, mlp_hidden
            )
        else:
            self.decomposition = LinearDecomposition(hidden_size, num_inputs, groups, mem_size)
        self.write_gate = nn.Linear(num_inputs * hidden_size, 1)
        nn.init.xavier_normal_(self.write_gate.weight)
        self.hidden_proj = nn.Linear(num_inputs * hidden_size, hidden_size)
        self.read_proj = nn.Linear(mem_size, hidden_size)
        self.output = nn.Linear(hidden_size, vocab_size)
        self.dropout = nn.Dropout(0.5)  # official p = 0.5
        self.mem_size = mem_size

    def components(self, keys, values, flags):
        """Everything before the memory. keys, values: (B, T) token ids; flags: (B, T, 2).
        Returns the context (T, B, n_inputs, H) and the binding (T, B, 3, m) and reasoning
        (T, B, 1 + n_read, m) components after tanh."""
        x = torch.cat((self.embedding(keys), self.embedding(values), flags), dim=-1)
        x = self.input_proj(x.transpose(0, 1))  # (T, B, n_inputs * P)
        T, B = x.shape[:2]
        ctx, _ = self.lstm(x.reshape(T, B * self.num_inputs, -1))  # streams share the LSTM
        ctx = ctx.reshape(T, B, self.num_inputs, -1)  # (T, B, n_inputs, H)
        binding, reasoning = self.decomposition(ctx)
        return ctx, torch.tanh(binding), torch.tanh(reasoning)

    def forward(self, keys, values, flags, return_components: bool = False):
        """keys, values: (B, T) ids; flags: (B, T, 2) -> logits (B, T, vocab)."""
        ctx, binding, reasoning = self.components(keys, values, flags)
        ctx = ctx.flatten(2)  # (T, B, n_inputs * H)
        gates = torch.sigmoid(self.write_gate(ctx) + 1.0)  # (T, B, 1); official bias +1
        memory = ctx.new_zeros(ctx.shape[1], *(self.mem_size,) * 3)
        reads = []
        for t in range(ctx.shape[0]):
            r1, r2, f = binding[t].unbind(1)
            memory = fwm_write(memory, r1, r2, f, gates[t])
            reads.append(fwm_read(memory, reasoning[t, :, 0], reasoning[t, :, 1:].transpose(0, 1)))
        out = self.dropout(self.hidden_proj(ctx)) + self.read_proj(torch.stack(reads))
        logits = self.output(out).transpose(0, 1)  # (B, T, vocab)
        if return_components:
            return logits, {
                "binding": binding.transpose(0, 1),
                "reasoning": reasoning.transpose(0, 1),
            }
        return logits

"""A causal linear-attention Transformer language model (Katharopoulos et al., 2020) in pure
torch, with a switch between its own key/value projection and AID, as the AID paper runs it on
WikiText-103.

Follows the official ``WikiText103`` code (``src/model_main.py`` and ``src/utils/AID.py``,
built on Irie et al.'s lmtool-fwp): ``--attn_type 9998`` is the linear Transformer (sum update
rule, ELU+1 feature map, ``CudaFastWeightSumLinearTransformerLayer``) whose every
``n_decomposition_layer``-th layer (official 4: layers 0, 4, 8, 12 of 16) is the AID layer
``CudaFastWeightSumLinearAIDTransformerLayer``. One attention layer, for heads h = 1..H:

    q_t, k_t, v_t = W_qkv x_t                       (per head, d_head each; no bias)
    AID layers:  [k_t; v_t] (2H slots of d_head) are AID's initial slots, refined by attention
                 over 2H input features W_in x_t (d_head each): keys and values only
    phi = ELU + 1 (or DPFP)
    out_t = (1 / sqrt(d_head)) sum_{j<=t} (phi(q_t).phi(k_j)) v_j / (phi(q_t).sum_{j<=t} phi(k_j) + eps)
    x <- LN(x + dropout(W_o out)),  then x <- LN(x + FF(x))        (post-LN, Transformer-XL)

The attention is computed as a fast-weight RNN in chunks (a running sum of phi(k) v^T and of
phi(k)), exact and causal; :func:`quadratic_linear_attention` is the same quantity as a masked
T x T product, the reference the tests compare against.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from .aid import AIDDecomposition, elu_plus_one

DECOMPOSITIONS = ("linear", "aid")
FEATURE_MAPS = ("elu", "dpfp")


def dpfp(x: torch.Tensor, n_roll: int = 3) -> torch.Tensor:
    """Deterministic parameter-free projection (Schlag et al., 2021; official ``--dpfp_n_roll``
    3): r = [relu(x), relu(-x)], phi = [r * roll(r, i) for i = 1..n_roll]. (..., d) -> (..., 2 d n_roll)."""
    r = torch.cat((F.relu(x), F.relu(-x)), dim=-1)
    return torch.cat([r * r.roll(i, dims=-1) for i in range(1, n_roll + 1)], dim=-1)


def feature_map(x: torch.Tensor, name: str) -> torch.Tensor:
    return elu_plus_one(x) if name == "elu" else dpfp(x)


def causal_linear_attention(q, k, v, eps: float = 1e-5, chunk: int = 64) -> torch.Tensor:
    """Normalised causal linear attention on feature-mapped q, k: (B, H, T, d_k) and v:
    (B, H, T, d_v) -> (B, H, T, d_v), chunk by chunk: the state (sum of k v^T and of k) of the
    earlier chunks plus a masked product inside the chunk. Memory O(chunk^2 + d_k d_v)."""
    B, H, T, dk = k.shape
    state = q.new_zeros(B, H, dk, v.shape[-1])  # sum_j k_j v_j^T so far
    ksum = q.new_zeros(B, H, dk)  # sum_j k_j so far
    outs = []
    for s in range(0, T, chunk):
        qc, kc, vc = q[:, :, s : s + chunk], k[:, :, s : s + chunk], v[:, :, s : s + chunk]
        scores = torch.tril(qc @ kc.transpose(-1, -2))  # (B, H, c, c), j <= t only
        num = qc @ state + scores @ vc  # (B, H, c, d_v)
        den = (qc * ksum[:, :, None]).sum(-1) + scores.sum(-1)  # (B, H, c)
        outs.append(num / (den[..., None] + eps))
        state = state + kc.transpose(-1, -2) @ vc
        ksum = ksum + kc.sum(2)
    return torch.cat(outs, dim=2)


def quadratic_linear_attention(q, k, v, eps: float = 1e-5) -> torch.Tensor:
    """The same as :func:`causal_linear_attention` written as attention weights: A = tril(q
    k^T), out = A v / (A 1 + eps). The tests' reference."""
    a = torch.tril(q @ k.transpose(-1, -2))
    return (a @ v) / (a.sum(-1, keepdim=True) + eps)


class LinearAttentionLayer(nn.Module):
    """One post-LN linear-attention block (attention + position-wise feed-forward), with AID on
    the keys and values when ``aid`` (official settings: 2 iterations, slot = d_head, MLP
    2 d_head, eps 1e-5, dropout 0.5 on the initial slots)."""

    def __init__(self, d_model, n_head, d_head, d_inner, dropout, aid=False, phi="elu"):
        super().__init__()
        self.n_head, self.d_head, self.phi = n_head, d_head, phi
        self.qkv = nn.Linear(d_model, 3 * n_head * d_head, bias=False)
        self.o = nn.Linear(n_head * d_head, d_model, bias=False)
        self.drop = nn.Dropout(dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.ff = nn.Sequential(
            nn.Linear(d_model, d_inner), nn.ReLU(inplace=True), nn.Dropout(dropout),
            nn.Linear(d_inner, d_model), nn.Dropout(dropout),
        )  # fmt: skip
        self.aid = None
        if aid:
            self.inputs = nn.Linear(d_model, 2 * n_head * d_head)  # official input_proj_linear
            self.aid = AIDDecomposition(
                d_head, None, 2 * n_head, d_head, iterations=2, mlp_hidden=2 * d_head, eps=1e-5
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, T, d_model) -> (B, T, d_model)."""
        B, T, _ = x.shape
        q, k, v = self.qkv(x).view(B, T, self.n_head, 3 * self.d_head).split(self.d_head, -1)
        if self.aid is not None:
            feats = self.inputs(x).view(B, T, 2 * self.n_head, self.d_head)  # (B, T, 2H, d)
            slots, _ = self.aid.refine(feats, torch.cat((k, v), dim=2))  # (B, T, 2H, d)
            k, v = slots.split(self.n_head, dim=2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, H, T, d_head)
        q, k = feature_map(q, self.phi), feature_map(k, self.phi)
        out = causal_linear_attention(q, k, v) / math.sqrt(self.d_head)  # official scale
        x = self.norm1(x + self.drop(self.o(out.transpose(1, 2).reshape(B, T, -1))))
        return self.norm2(x + self.ff(x))


def _init_weights(module: nn.Module) -> None:
    """Transformer-XL's initialisation (official ``--init normal --init_std 0.02``): weights and
    embeddings N(0, 0.02), biases 0, LayerNorm gains N(1, 0.02)."""
    if isinstance(module, nn.Linear | nn.Embedding):
        nn.init.normal_(module.weight, 0.0, 0.02)
        if getattr(module, "bias", None) is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.LayerNorm):
        nn.init.normal_(module.weight, 1.0, 0.02)
        nn.init.zeros_(module.bias)


def sinusoid(T: int, d: int, device=None) -> torch.Tensor:
    """Absolute sinusoidal position encoding (T, d)."""
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, device=device, dtype=torch.float32) / d))
    ang = torch.arange(T, device=device, dtype=torch.float32)[:, None] * inv
    return torch.cat((ang.sin(), ang.cos()), dim=-1)


class LinearTransformerLM(nn.Module):
    """Causal linear Transformer LM; ``decomposition="aid"`` puts AID in layers 0,
    ``aid_every``, 2 ``aid_every``... Defaults are the official ``run.sh`` (16 layers, d_model
    128, 8 heads of 16, d_inner 2048, dropout 0.1). ``cutoffs`` (e.g. WikiText-103's
    (20000, 40000, 200000)) switch to an adaptive softmax; otherwise the softmax is tied to the
    input embedding (official ``tie_weight``)."""

    def __init__(
        self,
        vocab_size: int,
        decomposition: str = "aid",
        n_layer: int = 16,
        d_model: int = 128,
        n_head: int = 8,
        d_head: int = 16,
        d_inner: int = 2048,
        dropout: float = 0.1,
        aid_every: int = 4,
        phi: str = "elu",
        cutoffs: tuple[int, ...] = (),
    ):
        super().__init__()
        if decomposition not in DECOMPOSITIONS:
            raise ValueError(
                f"decomposition must be one of {DECOMPOSITIONS}, got {decomposition!r}"
            )
        if phi not in FEATURE_MAPS:
            raise ValueError(f"phi must be one of {FEATURE_MAPS}, got {phi!r}")
        self.decomposition_name, self.d_model = decomposition, d_model
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.drop = nn.Dropout(dropout)
        self.layers = nn.ModuleList(
            LinearAttentionLayer(
                d_model, n_head, d_head, d_inner, dropout,
                aid=decomposition == "aid" and i % aid_every == 0, phi=phi,
            )
            for i in range(n_layer)
        )  # fmt: skip
        self.adaptive = (
            nn.AdaptiveLogSoftmaxWithLoss(d_model, vocab_size, list(cutoffs), div_value=1.0)
            if cutoffs
            else None
        )
        self.apply(_init_weights)

    def hidden(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens: (B, T) ids -> the last layer's states (B, T, d_model)."""
        x = self.embedding(tokens) * math.sqrt(self.d_model)  # official emb_scale
        x = self.drop(x + sinusoid(tokens.shape[1], self.d_model, x.device))
        for layer in self.layers:
            x = layer(x)
        return self.drop(x)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-token logits (B, T, vocab) (tied softmax only)."""
        if self.adaptive is not None:
            raise ValueError("an adaptive-softmax model gives losses: call nll(tokens, targets)")
        return self.hidden(tokens) @ self.embedding.weight.T

    def nll(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean negative log-likelihood (nats per token) of ``targets`` (B, T)."""
        h = self.hidden(tokens)
        if self.adaptive is not None:
            return self.adaptive(h.flatten(0, 1), targets.flatten()).loss
        return F.cross_entropy((h @ self.embedding.weight.T).flatten(0, 1), targets.flatten())

    def token_nll(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Negative log-likelihood (nats) of each target token: (B, T); its mean is ``nll``."""
        h = self.hidden(tokens)
        if self.adaptive is not None:
            return -self.adaptive(h.flatten(0, 1), targets.flatten()).output.view(targets.shape)
        logits = (h @ self.embedding.weight.T).flatten(0, 1)
        return F.cross_entropy(logits, targets.flatten(), reduction="none").view(targets.shape)

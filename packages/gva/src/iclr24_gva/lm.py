"""The autoregressive part (paper Section 4, "GVA in language generation"): a tiny
character-level transformer trained with a constant learning rate and a final linear
cool-down, the validation loss of every checkpoint measured for the raw iterate and its
EMA. The text is CPython's bundled documentation (``pydoc_data.topics``): offline, always
installed, ~0.5 MB of English prose and code."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .gva import EMA, EMASchedule


def pydoc_text() -> str:
    """The help topics of CPython's ``pydoc`` (sorted by topic name: deterministic)."""
    from pydoc_data.topics import topics

    return "\n\n".join(topics[k] for k in sorted(topics))


def encode(text: str, vocab: list[str] | None = None) -> tuple[torch.Tensor, list[str]]:
    """Characters to ids over the text's own sorted alphabet."""
    vocab = vocab or sorted(set(text))
    index = {c: i for i, c in enumerate(vocab)}
    return torch.tensor([index[c] for c in text if c in index], dtype=torch.long), vocab


class CharTransformer(nn.Module):
    """A GPT-style decoder: token + position embeddings, pre-LN blocks, tied output."""

    def __init__(
        self, vocab: int, context: int = 64, dim: int = 64, layers: int = 2, heads: int = 4
    ):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(context, dim)
        block = nn.TransformerEncoderLayer(
            dim, heads, 4 * dim, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
        )
        self.blocks = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(context))

    def forward(self, idx: torch.Tensor) -> torch.Tensor:  # (batch, seq) -> (batch, seq, vocab)
        T = idx.shape[1]
        h = self.tok(idx) + self.pos.weight[:T]
        h = self.blocks(h, mask=self.mask[:T, :T], is_causal=True)
        return self.norm(h) @ self.tok.weight.T


@dataclass(frozen=True)
class LMConfig:
    steps: int = 1500
    batch_size: int = 32
    context: int = 64
    dim: int = 64
    layers: int = 2
    heads: int = 4
    lr: float = 3e-3
    """AdamW, constant until the cool-down (nanoGPT's char-level config uses 1e-3 for a
    6-layer model; a 2-layer one tolerates more)."""
    cooldown: float = 0.2
    """Fraction of the steps at the end over which the lr decays linearly to 0."""
    eval_every: int = 50
    val_batches: int = 8
    ema: EMASchedule = EMASchedule.power_law(0.75, 1.0, 0.01)


def batches(data: torch.Tensor, n: int, context: int, g: torch.Generator):
    starts = torch.randint(len(data) - context - 1, (n,), generator=g)
    rows = starts[:, None] + torch.arange(context + 1)
    chunk = data[rows]
    return chunk[:, :-1], chunk[:, 1:]


def lm_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(model(x).flatten(0, 1), y.flatten())


def sequence_losses(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """Per sequence, the mean loss over its positions (nats/char): (batch,)."""
    per_token = F.cross_entropy(model(x).flatten(0, 1), y.flatten(), reduction="none")
    return per_token.view(y.shape).mean(-1).double().numpy()


def train_lm(config: LMConfig, seed: int, text: str | None = None, progress=None) -> dict:
    """Train, and return per checkpoint the validation loss (nats/char) of the raw and the
    EMA model, on the same held-out batches at every checkpoint (common random numbers),
    and its value per validation sequence (``val_items``, ``val_ema_items``)."""
    data, vocab = encode(text if text is not None else pydoc_text())
    cut = int(0.9 * len(data))
    train, val = data[:cut], data[cut:]
    torch.manual_seed(seed)
    model = CharTransformer(len(vocab), config.context, config.dim, config.layers, config.heads)
    ema = EMA(model, config.ema)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.0)
    g = torch.Generator().manual_seed(20_000 + seed)
    vg = torch.Generator().manual_seed(1)
    val_set = [
        batches(val, config.batch_size, config.context, vg) for _ in range(config.val_batches)
    ]
    decay_from = int(config.steps * (1 - config.cooldown))
    out = {"step": [], "val": [], "val_ema": [], "val_items": [], "val_ema_items": [],
           "decay_from": decay_from}  # fmt: skip
    for t in range(1, config.steps + 1):
        lr = config.lr * min(1.0, (config.steps - t + 1) / max(1, config.steps - decay_from))
        for group in opt.param_groups:
            group["lr"] = lr
        model.train()
        opt.zero_grad(set_to_none=True)
        lm_loss(model, *batches(train, config.batch_size, config.context, g)).backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        ema.update(model)
        if t % config.eval_every == 0:
            model.eval()
            with torch.no_grad():
                out["step"].append(t)
                for net, key in ((model, "val"), (ema.module, "val_ema")):
                    # every sequence has `context` positions: their mean is the batch loss
                    items = np.concatenate([sequence_losses(net, *b) for b in val_set])
                    out[f"{key}_items"].append(items.tolist())
                    out[key].append(float(items.mean()))
            if progress is not None:
                progress()
    return out

"""Sparse autoencoders: "Sparse Autoencoders Find Highly Interpretable Features in Language
Models" (Cunningham, Ewart, Riggs, Huben & Sharkey, ICLR 2024), https://arxiv.org/abs/2309.08600.

The model (paper Sec. 2, eqs. 1-3; official ``autoencoders/sae_ensemble.py``):

    c     = ReLU(E (x - b_dec) + b_enc)          # (batch, n_dict) feature activations
    x_hat = D^T c + b_dec                        # rows of D normalised to unit norm
    loss  = mean_{batch, d} (x - x_hat)^2 + alpha * mean_batch ||c||_1

Loss scaling (alphas do not carry across repositories): the reconstruction term is the mean
squared error over batch *and* activation dimensions, the sparsity term the L1 norm of ``c``
summed over features and averaged over the batch: the official ensemble code's scaling, the
one behind the paper's alpha = 8.6e-4 for Pythia-70M. (SAELens sums the squared error over
d, so its alpha is ours / d; the official toy script divides the L1 term by n_dict.)

``b_dec`` (the pre-encoder/decoder bias) is an option the peers (SAELens, openai/
sparse_autoencoder) have; the paper's SAE has none (``pre_bias=False`` gives it exactly).
``tied=True`` is the paper's tied SAE: the encoder is the normalised dictionary itself.

Several alphas train at once: every parameter has a leading ``k`` axis (one member per
alpha), the members never interact, and ``loss`` sums their losses so one optimizer step
updates each member with its own gradient.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn

FORMAT = "iclr24-sae/1"


def unit_rows(w: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """``w`` with every row (last axis) scaled to unit L2 norm."""
    return w / w.norm(dim=-1, keepdim=True).clamp_min(eps)


class SparseAutoencoder(nn.Module):
    """One SAE per alpha, ``k = len(alphas)`` members trained side by side.

    Shapes: ``x`` is ``(batch, d)`` (shared by every member) or ``(k, batch, d)``; codes are
    ``(k, batch, n_dict)``; reconstructions ``(k, batch, d)``.
    """

    def __init__(
        self,
        d: int,
        n_dict: int,
        alphas: float | Sequence[float] = 8.6e-4,
        *,
        tied: bool = False,
        pre_bias: bool = True,
        seed: int | None = None,
    ):
        super().__init__()
        alphas = [float(alphas)] if isinstance(alphas, int | float) else [float(a) for a in alphas]
        if d < 1 or n_dict < 1 or not alphas or min(alphas) < 0:
            raise ValueError("need d >= 1, n_dict >= 1 and non-negative alphas")
        self.d, self.n_dict, self.tied, self.pre_bias = d, n_dict, tied, pre_bias
        k = len(alphas)
        gen = torch.Generator().manual_seed(seed) if seed is not None else None
        # official init: xavier_uniform_ on (n_dict, d) encoder and decoder, zero biases
        bound = math.sqrt(6.0 / (n_dict + d))
        init = lambda: (torch.rand(k, n_dict, d, generator=gen) * 2 - 1) * bound  # noqa: E731
        self.W_enc = nn.Parameter(init())  # (k, n_dict, d)
        self.b_enc = nn.Parameter(torch.zeros(k, n_dict))
        self.W_dec = None if tied else nn.Parameter(unit_rows(init()))  # (k, n_dict, d)
        self.b_dec = nn.Parameter(torch.zeros(k, d)) if pre_bias else None
        self.register_buffer("alphas", torch.tensor(alphas))
        # dead-feature tracking: optimizer steps since each feature last fired (train.py)
        self.register_buffer("steps_since_fired", torch.zeros(k, n_dict, dtype=torch.long))

    @property
    def k(self) -> int:
        return len(self.alphas)

    def config(self) -> dict:
        return {"d": self.d, "n_dict": self.n_dict, "alphas": self.alphas.tolist(),
                "tied": self.tied, "pre_bias": self.pre_bias}  # fmt: skip

    # ------------------------------------------------------------------ the model
    def dictionary(self) -> torch.Tensor:
        """The unit-norm dictionary atoms ``D``, ``(k, n_dict, d)``."""
        return unit_rows(self.W_enc if self.tied else self.W_dec)

    def _centre(self, x: torch.Tensor) -> torch.Tensor:
        x = x.expand(self.k, *x.shape) if x.dim() == 2 else x  # (k, batch, d)
        return x - self.b_dec[:, None, :] if self.pre_bias else x

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """Feature activations ``c = ReLU(E (x - b_dec) + b_enc)``, ``(k, batch, n_dict)``."""
        enc = self.dictionary() if self.tied else self.W_enc
        return torch.relu(torch.einsum("kbd,knd->kbn", self._centre(x), enc) + self.b_enc[:, None])

    def decode(self, c: torch.Tensor) -> torch.Tensor:
        """``x_hat = D^T c + b_dec``, ``(k, batch, d)``."""
        x_hat = torch.einsum("kbn,knd->kbd", c, self.dictionary())
        return x_hat + self.b_dec[:, None, :] if self.pre_bias else x_hat

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        c = self.encode(x)
        return self.decode(c), c

    def losses(self, x: torch.Tensor, alpha_scale: float = 1.0) -> dict[str, torch.Tensor]:
        """Per-member ``(k,)`` terms: ``mse`` (mean over batch and d), ``l1`` (mean over the
        batch of ||c||_1), ``loss = mse + alpha_scale * alpha * l1``, and the codes ``c``."""
        x_hat, c = self(x)
        target = x.expand(self.k, *x.shape) if x.dim() == 2 else x
        mse = (x_hat - target).pow(2).mean(dim=(1, 2))
        l1 = c.abs().sum(-1).mean(-1)
        return {"loss": mse + alpha_scale * self.alphas * l1, "mse": mse, "l1": l1, "c": c}

    @torch.no_grad()
    def normalise_decoder_(self) -> None:
        """Rescale the stored decoder rows to unit norm (the forward pass already uses unit
        rows; this keeps the parameters themselves on the sphere after each step)."""
        w = self.W_enc if self.tied else self.W_dec
        w.copy_(unit_rows(w))

    def member(self, i: int) -> SparseAutoencoder:
        """Member ``i`` as its own single-alpha SAE (a copy)."""
        one = SparseAutoencoder(self.d, self.n_dict, [float(self.alphas[i])], tied=self.tied,
                                pre_bias=self.pre_bias)  # fmt: skip
        one.load_state_dict({name: t[i : i + 1].clone() for name, t in self.state_dict().items()})
        return one

    # ------------------------------------------------------------------ save / load
    def save(self, path: str | Path) -> Path:
        """Weights and config in one file (``torch.save``); :meth:`load` rebuilds the SAE."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.save({"format": FORMAT, "config": self.config(), "state": self.state_dict()}, path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> SparseAutoencoder:
        try:
            blob = torch.load(Path(path), map_location="cpu", weights_only=True)
        except (OSError, RuntimeError, ValueError, EOFError, struct.error) as e:
            raise ValueError(f"{path}: not a readable torch file ({e})") from None
        if not isinstance(blob, dict) or blob.get("format") != FORMAT:
            raise ValueError(f"{path}: not an iclr24-sae file (format {FORMAT})")
        cfg = blob["config"]
        sae = cls(cfg["d"], cfg["n_dict"], cfg["alphas"], tied=cfg["tied"],
                  pre_bias=cfg["pre_bias"])  # fmt: skip
        sae.load_state_dict(blob["state"])
        return sae

    def __repr__(self) -> str:
        return f"SparseAutoencoder({json.dumps(self.config())})"

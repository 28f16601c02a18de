"""The baselines of the Point2SSM benchmark (Adams & Elhabian, ICLR 2024, Sec. 4).

* DG-AE / PN-AE: a DGCNN or PointNet encoder, a global max-pooled latent and a fully
  connected decoder (official models/ae.py). The decoder's output order is the
  correspondence: output point i is the same decoder unit on every shape.
* The "no correspondence" floor: each shape resampled independently, in random order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn as nn

from .point2ssm import EncoderConfig, chamfer_distance, make_encoder


@dataclass
class AutoEncoderConfig:
    """DG-AE / PN-AE: encoder, global latent, fully connected decoder (official models/ae.py)."""

    num_output: int = 1024
    """Number of output points M."""
    encoder: str = "dgcnn"
    """'dgcnn' (DG-AE) or 'pn' (PN-AE)."""
    enc: EncoderConfig = field(default_factory=EncoderConfig)
    """Encoder sizes."""
    reduction: str = "sum"
    """Chamfer reduction (official: cd_t, the sum)."""


class AutoEncoder(nn.Module):
    """x: (B, N, 3) -> (B, M, 3) decoded from the global latent; point order is the
    decoder's output order, which is what makes it a correspondence model."""

    def __init__(self, cfg: AutoEncoderConfig | None = None):
        super().__init__()
        cfg = cfg or AutoEncoderConfig()
        self.cfg = cfg
        d, m = cfg.enc.latent_dim, cfg.num_output
        hidden = max(d, m // 2)  # official FC_decoder: inter_dim = max(latent_dim, num_output // 2)
        self.encoder = make_encoder(cfg.encoder, cfg.enc)
        self.decoder = nn.Sequential(
            nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, m), nn.ReLU(), nn.Linear(m, 3 * m)
        )

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:
        z, _ = self.encoder(x)
        # official decoder reshapes to (B, 3, M) and transposes
        return self.decoder(z).view(-1, 3, self.cfg.num_output).transpose(1, 2), None

    def loss(self, x: torch.Tensor, gt: torch.Tensor) -> torch.Tensor:
        return chamfer_distance(self(x)[0], gt, self.cfg.reduction).mean()


def no_correspondence(x: torch.Tensor, m: int, generator: torch.Generator | None = None):
    """The floor: M points drawn independently from each input cloud, in random order.
    x: (B, N, 3) -> (B, M, 3)."""
    b, n, _ = x.shape
    if m > n:
        raise ValueError(f"cannot draw M={m} points from N={n} input points")
    order = torch.rand(b, n, generator=generator, device=x.device).argsort(dim=1)[:, :m]
    return torch.gather(x, 1, order[..., None].expand(-1, -1, 3))


__all__ = ["AutoEncoder", "AutoEncoderConfig", "no_correspondence"]

"""The baselines of the Point2SSM benchmark (Adams & Elhabian, ICLR 2024, Sec. 4).

* DG-AE / PN-AE: a DGCNN or PointNet encoder, a global max-pooled latent and a fully
  connected decoder (official models/ae.py). The decoder's output order is the
  correspondence: output point i is the same decoder unit on every shape.
* CPAE (Cheng et al., NeurIPS 2021, "Learning 3D Dense Correspondence via Canonical Point
  Autoencoder"), as ported by the official Point2SSM code (models/cpae.py): an encoder, an
  "unfold" network mapping every input point to a canonical sphere and a "fold" network
  mapping canonical points back to the shape. Its correspondences here are the fold of one
  fixed canonical template (M points on the sphere) with each shape's latent: the same
  canonical point is the same correspondence on every shape (CanonicalPAE's dense
  correspondence). The official Point2SSM test.py instead reports the self-reconstruction,
  which keeps the *input's* random point order (see the README).
* The "no correspondence" floor: each shape resampled independently, in random order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from scipy.optimize import linear_sum_assignment

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


# ----------------------------------------------------------------------------- CPAE


def fibonacci_sphere(n: int) -> torch.Tensor:
    """n nearly uniform points on the sphere of radius 1/2 (official SphereTemplate:
    golden-angle spiral, divided by 2). -> (n, 3)"""
    i = torch.arange(n, dtype=torch.float64)
    y = 1 - 2 * i / max(n - 1, 1)
    r = (1 - y * y).clamp_min(0).sqrt()
    theta = math.pi * (math.sqrt(5.0) - 1.0) * i
    return (torch.stack([theta.cos() * r, y, theta.sin() * r], 1) / 2).float()


def chamfer_sqrt(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """CPAE's CD_loss: mean_i min_j |a_i - b_j| + mean_j min_i |a_i - b_j|, averaged over the
    batch. a: (B, M, 3), b: (B, G, 3) -> scalar. (The eps keeps sqrt differentiable at 0.)"""
    d = torch.cdist(a, b).square()
    return (
        (d.min(2).values + 1e-12).sqrt().mean(1) + (d.min(1).values + 1e-12).sqrt().mean(1)
    ).mean()


def emd_loss(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Earth mover's distance between equal-size clouds: the mean distance under the optimal
    bijection, averaged over the batch. The official code approximates the bijection with an
    auction CUDA kernel (eps 0.005, 50 iterations); here it is exact (Hungarian, on CPU),
    and the gradient flows through the matched distances. a, b: (B, N, 3) -> scalar."""
    d2 = torch.cdist(a, b).square()  # (B, N, N)
    cost = d2.detach().cpu().numpy()
    match = np.stack([linear_sum_assignment(c)[1] for c in cost])  # (B, N)
    idx = torch.as_tensor(match, device=a.device)[..., None]
    return (d2.gather(2, idx).squeeze(2) + 1e-12).sqrt().mean()


class _PointMLP(nn.Module):
    """Official mlpAdj: 1x1 convolutions c -> c -> c/2 -> c/4 -> 3 with BN + ReLU, tanh out.
    (B, P, c) -> (B, P, 3)."""

    def __init__(self, c: int):
        super().__init__()
        dims = [c, c, c // 2, c // 4]
        layers: list[nn.Module] = []
        for a, b in zip(dims[:-1], dims[1:], strict=True):
            layers += [nn.Conv1d(a, b, 1), nn.BatchNorm1d(b), nn.ReLU()]
        self.net = nn.Sequential(*layers, nn.Conv1d(dims[-1], 3, 1), nn.Tanh())

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.net(h.transpose(1, 2)).transpose(1, 2)


class _ImplicitFun(nn.Module):
    """Official ImplicitFun: points (B, P, 3) and a latent (B, L) -> new points (B, P, 3),
    two mlpAdj stages, the latent concatenated to every point before each."""

    def __init__(self, z_dim: int):
        super().__init__()
        self.stage1, self.stage2 = _PointMLP(z_dim + 3), _PointMLP(z_dim + 3)

    def forward(self, z: torch.Tensor, points: torch.Tensor) -> torch.Tensor:
        zz = z[:, None, :].expand(-1, points.shape[1], -1)
        return self.stage2(torch.cat([self.stage1(torch.cat([points, zz], 2)), zz], 2))


class _CPAEEncoder(nn.Module):
    """Official PointNetfeat: 3 -> 64 -> 128 -> L (BN; ReLU but the last), max-pool, then a
    linear L -> L with BN and ReLU. (B, N, 3) -> (B, L)."""

    def __init__(self, latent: int):
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv1d(3, 64, 1), nn.BatchNorm1d(64), nn.ReLU(),
            nn.Conv1d(64, 128, 1), nn.BatchNorm1d(128), nn.ReLU(),
            nn.Conv1d(128, latent, 1), nn.BatchNorm1d(latent),
        )  # fmt: skip
        self.head = nn.Sequential(nn.Linear(latent, latent), nn.BatchNorm1d(latent), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.convs(x.transpose(1, 2)).max(dim=-1).values)


@dataclass
class CPAEConfig:
    """CPAE sizes and loss weights (official cfgs/cpae.yaml and models/cpae.py)."""

    num_output: int = 1024
    """M: points of the canonical template folded into each shape (official: 1024)."""
    latent_dim: int = 128
    """Latent width (official cfgs: latent_dim 128)."""
    unfold_weight: tuple[float, float] = (10.0, 20.0)
    """Weight of the unfold loss before / after ``cross_after_epochs`` (official: 10, 20)."""
    mse_weight: float = 1000.0
    """Self-reconstruction MSE weight (official: 1000)."""
    cd_weight: float = 10.0
    """Self-reconstruction Chamfer weight (official: 10)."""
    emd_weight: float = 1.0
    """Self-reconstruction EMD weight (official: 1)."""
    cross_weight: float = 10.0
    """Cross-reconstruction Chamfer weight (official: 10)."""
    cross_after_epochs: int = 100
    """Epoch from which the cross-reconstruction loss is on (official: 100)."""


class CPAE(nn.Module):
    """x: (B, N, 3) -> correspondences (B, M, 3): the canonical template folded with each
    shape's latent (and None, for the same interface as Point2SSM)."""

    def __init__(self, cfg: CPAEConfig | None = None):
        super().__init__()
        cfg = cfg or CPAEConfig()
        self.cfg = cfg
        self.encoder = _CPAEEncoder(cfg.latent_dim)
        self.unfold = _ImplicitFun(cfg.latent_dim)
        self.fold = _ImplicitFun(cfg.latent_dim)
        self.register_buffer("template", fibonacci_sphere(cfg.num_output), persistent=False)
        self.epoch = 0  # set by the training loop: the loss changes at cross_after_epochs

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:
        z = self.encoder(x)
        return self.fold(z, self.template[None].expand(len(x), -1, -1)), None

    def loss(self, x: torch.Tensor, gt: torch.Tensor) -> torch.Tensor:
        """The official training loss (it reconstructs the input; ``gt`` is not used)."""
        cfg = self.cfg
        z = self.encoder(x)
        unfolded = self.unfold(z, x)  # (B, N, 3) on the canonical sphere
        rec = self.fold(z, unfolded)  # (B, N, 3) back on the shape, in the input's order
        late = self.epoch >= cfg.cross_after_epochs
        grid = fibonacci_sphere(x.shape[1]).to(x)[None].expand(len(x), -1, -1)
        loss = cfg.unfold_weight[late] * chamfer_sqrt(unfolded, grid)
        loss = loss + cfg.mse_weight * F.mse_loss(rec, x) + cfg.cd_weight * chamfer_sqrt(rec, x)
        loss = loss + cfg.emd_weight * emd_loss(rec, x)
        if late:  # fold each shape's latent with the next shape's canonical points
            cross = self.fold(z, unfolded.roll(-1, dims=0))
            loss = loss + cfg.cross_weight * chamfer_sqrt(cross, x)
        return loss


def no_correspondence(x: torch.Tensor, m: int, generator: torch.Generator | None = None):
    """The floor: M points drawn independently from each input cloud, in random order
    (without replacement; with replacement when M > N, e.g. sparse input).
    x: (B, N, 3) -> (B, M, 3)."""
    b, n, _ = x.shape
    if m > n:
        order = torch.randint(n, (b, m), generator=generator, device=x.device)
    else:
        order = torch.rand(b, n, generator=generator, device=x.device).argsort(dim=1)[:, :m]
    return torch.gather(x, 1, order[..., None].expand(-1, -1, 3))


__all__ = [
    "CPAE",
    "AutoEncoder",
    "AutoEncoderConfig",
    "CPAEConfig",
    "chamfer_sqrt",
    "emd_loss",
    "fibonacci_sphere",
    "no_correspondence",
]

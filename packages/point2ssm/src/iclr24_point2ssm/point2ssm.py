"""Point2SSM: Learning Morphological Variations of Anatomies from Point Clouds.

Adams & Elhabian, ICLR 2024, https://arxiv.org/abs/2305.14486
Official code: https://github.com/jadie1/Point2SSM (read for its defaults; this is our own code).

The model maps an input point cloud X (N x 3) to M ordered correspondence points:

    F   = DGCNN(X)                              per-point features, (B, L, N)   (Sec. 3.1)
    A   = softmax_N(SA3(SA2(SA1(F))))           attention map, (B, M, N)        (Sec. 3.2)
    Y   = A X                                   correspondences, (B, M, 3)      (Eq. 1)

Every output point is a convex combination of input points, so it lies in their convex hull.
Training minimises (Sec. 3.3, Eq. 2-3)

    L = CD(Y, X_gt) + alpha * L_map(Y),        alpha = 0.1  (official cfgs/point2ssm.yaml)

where L_map is DPC's neighbourhood-consistency ("mapping") loss computed over every ordered
pair of shapes in the batch: the k-NN neighbourhood of point i in shape s, weighted by a heat
kernel of its size in s, must stay small in shape t.

The baselines of the paper's benchmark are in ``baselines.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F

# ----------------------------------------------------------------------------- helpers


def knn_indices(x: torch.Tensor, k: int, include_self: bool = True) -> torch.Tensor:
    """Indices of the k nearest neighbours of every point. x: (B, N, 3) -> (B, N, k).

    Pure torch (cdist + topk) so it runs on CPU and GPU alike. With ``include_self`` the
    point itself is neighbour 0 (as torch_cluster.knn in the official code)."""
    d = torch.cdist(x, x)  # (B, N, N)
    if not include_self:
        d = d + torch.diag_embed(torch.full(d.shape[:2], float("inf"), device=x.device))
    return d.topk(k, dim=-1, largest=False).indices


def gather_neighbours(feat: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """feat: (B, N, C), idx: (B, N, k) -> (B, N, k, C)."""
    b = torch.arange(feat.shape[0], device=feat.device)[:, None, None]
    return feat[b, idx]


def edge_features(feat: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """EdgeConv input [x_j - x_i, x_i]: feat (B, C, N), idx (B, N, k) -> (B, 2C, N, k)."""
    f = feat.transpose(1, 2)  # (B, N, C)
    nb = gather_neighbours(f, idx)  # (B, N, k, C)
    centre = f[:, :, None, :].expand_as(nb)
    return torch.cat([nb - centre, centre], dim=-1).permute(0, 3, 1, 2).contiguous()


# ----------------------------------------------------------------------------- encoders


@dataclass
class EncoderConfig:
    """DGCNN / PointNet encoder sizes."""

    latent_dim: int = 128
    """Per-point and global latent width (official cfgs: latent_dim 128)."""
    k: int = 27
    """Neighbours of the xyz k-NN graph (official models/dgcnn.py: num_neighs = 27)."""
    bb_size: int = 24
    """DGCNN building-block width; layer widths are 4, 8, 16, 32 x bb_size (official: 24)."""
    depth: int = 4
    """Number of EdgeConv layers (official: 4)."""


class EdgeConv(nn.Module):
    """h_i' = max_j LeakyReLU(BN(W [h_j - h_i, h_i])) over the k graph neighbours j of i.

    W [h_j - h_i, h_i] = W_n h_j + (W_c - W_n) h_i, so the 1x1 convolution is applied to the
    N points before gathering instead of to the N*k edges: the same function as the official
    Conv2d on edge features, k times fewer multiplications. h: (B, N, C_in) -> (B, N, C_out)."""

    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(c_out, 2 * c_in))  # same layout as Conv2d 1x1
        nn.init.kaiming_uniform_(self.weight, a=5**0.5)  # Conv2d's default initialisation
        self.bn = nn.BatchNorm1d(c_out)
        self.c_in = c_in

    def forward(self, h: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        w_n, w_c = self.weight[:, : self.c_in], self.weight[:, self.c_in :]
        e = gather_neighbours(h @ w_n.T, idx) + (h @ (w_c - w_n).T)[:, :, None]  # (B,N,k,C)
        e = F.leaky_relu(self.bn(e.reshape(-1, e.shape[-1])).view_as(e), 0.2)
        return e.max(dim=2).values


class DGCNNEncoder(nn.Module):
    """DGCNN with the k-NN graph on xyz computed once and reused by every EdgeConv layer
    (official ``only_true_neighs=True``). x: (B, N, 3) -> global (B, L), per-point (B, L, N)."""

    def __init__(self, cfg: EncoderConfig | None = None):
        super().__init__()
        cfg = cfg or EncoderConfig()
        self.cfg = cfg
        widths = [cfg.bb_size * 2 ** (i + 2) for i in range(cfg.depth)]  # 4bb, 8bb, 16bb, ...
        ins = [3] + widths[:-1]
        self.convs = nn.ModuleList(EdgeConv(a, b) for a, b in zip(ins, widths, strict=True))
        self.head = nn.Sequential(
            nn.Conv1d(sum(widths), cfg.latent_dim, kernel_size=1, bias=False),
            nn.BatchNorm1d(cfg.latent_dim),
            nn.LeakyReLU(0.2),
        )

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        idx = knn_indices(x, min(self.cfg.k, x.shape[1]))  # (B, N, k), fixed for all layers
        h, outs = x, []
        for conv in self.convs:
            h = conv(h, idx)  # (B, N, C)
            outs.append(h)
        per_point = self.head(torch.cat(outs, dim=-1).transpose(1, 2))  # (B, L, N)
        return per_point.max(dim=-1).values, per_point


class PointNetEncoder(nn.Module):
    """PointNet encoder (official models/ae.py: 64-128-128-256-latent, BN + ReLU)."""

    def __init__(self, cfg: EncoderConfig | None = None):
        super().__init__()
        cfg = cfg or EncoderConfig()
        dims = [3, 64, 128, 128, 256, cfg.latent_dim]
        layers: list[nn.Module] = []
        for a, b in zip(dims[:-1], dims[1:], strict=True):
            layers += [nn.Conv1d(a, b, 1), nn.BatchNorm1d(b), nn.ReLU()]
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        per_point = self.net(x.transpose(1, 2))  # (B, L, N)
        return per_point.max(dim=-1).values, per_point


def make_encoder(name: str, cfg: EncoderConfig) -> nn.Module:
    if name == "dgcnn":
        return DGCNNEncoder(cfg)
    if name == "pn":
        return PointNetEncoder(cfg)
    raise ValueError(f"unknown encoder {name!r} (use 'dgcnn' or 'pn')")


# ----------------------------------------------------------------------------- attention module


class SelfAttentionBlock(nn.Module):
    """One PointAttN-style block over the N points (official ``cross_transformer`` used as
    self-attention): 1x1 projection to width M, LayerNorm, 4-head attention + residual,
    LayerNorm, GELU feed-forward + residual. (B, C_in, N) -> (B, M, N)."""

    def __init__(self, d_in: int, d_out: int, n_heads: int = 4, d_ff: int = 1024):
        super().__init__()
        self.proj = nn.Conv1d(d_in, d_out, kernel_size=1)
        self.norm_in = nn.LayerNorm(d_out)
        self.attn = nn.MultiheadAttention(d_out, n_heads, batch_first=True)
        self.norm_mid = nn.LayerNorm(d_out)
        self.ff = nn.Sequential(nn.Linear(d_out, d_ff), nn.GELU(), nn.Linear(d_ff, d_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm_in(self.proj(x).transpose(1, 2))  # (B, N, M)
        h = self.norm_mid(h + self.attn(h, h, h, need_weights=False)[0])
        h = h + self.ff(h)
        return h.transpose(1, 2)  # (B, M, N)


@dataclass
class Point2SSMConfig:
    """Point2SSM architecture and loss."""

    num_output: int = 1024
    """M, the number of correspondence points (official cfgs/point2ssm.yaml: 1024)."""
    encoder: str = "dgcnn"
    """Per-point feature extractor: 'dgcnn' (paper) or 'pn'."""
    enc: EncoderConfig = field(default_factory=EncoderConfig)
    """Encoder sizes."""
    n_heads: int = 4
    """Attention heads (official cross_transformer: nhead=4)."""
    d_ff: int = 1024
    """Feed-forward width of each attention block (official: dim_feedforward=1024)."""
    alpha: float = 0.1
    """Weight of the mapping loss (official cfgs/point2ssm.yaml: alpha 0.1)."""
    map_k: int = 10
    """k of the mapping loss's neighbourhoods, self included (official get_neighbor_loss(pred, 10))."""
    heat_t: float = 8.0
    """Heat-kernel bandwidth of the mapping loss (official GAUSSIAN_HEAT_KERNEL_T = 8.0)."""
    reduction: str = "sum"
    """Chamfer reduction: 'sum' (official cd_t), 'mean', or 'sqrt_mean' (official cd_p)."""


class Point2SSM(nn.Module):
    """x: (B, N, 3) -> correspondences (B, M, 3) and the attention map (B, M, N)."""

    def __init__(self, cfg: Point2SSMConfig | None = None):
        super().__init__()
        cfg = cfg or Point2SSMConfig()
        self.cfg = cfg
        m, d = cfg.num_output, cfg.enc.latent_dim
        self.encoder = make_encoder(cfg.encoder, cfg.enc)
        self.blocks = nn.ModuleList(
            SelfAttentionBlock(c_in, m, cfg.n_heads, cfg.d_ff) for c_in in (d, m, m)
        )

    def attention_map(self, x: torch.Tensor) -> torch.Tensor:
        _, h = self.encoder(x)  # (B, L, N)
        for block in self.blocks:
            h = block(h)  # (B, M, N)
        return h.softmax(dim=-1)  # rows over the N input points sum to 1

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a = self.attention_map(x)  # (B, M, N)
        return a @ x, a  # Eq. 1: Y = A X, (B, M, 3)

    def loss(self, x: torch.Tensor, gt: torch.Tensor) -> torch.Tensor:
        y, _ = self(x)
        cd = chamfer_distance(y, gt, self.cfg.reduction).mean()
        if self.cfg.alpha == 0:
            return cd
        return cd + self.cfg.alpha * mapping_loss(y, self.cfg.map_k, self.cfg.heat_t)


# ----------------------------------------------------------------------------- losses


def chamfer_distance(a: torch.Tensor, b: torch.Tensor, reduction: str = "sum") -> torch.Tensor:
    """Chamfer distance per batch element. a: (B, M, 3), b: (B, G, 3) -> (B,).

    'sum'       sum_i min_j |a_i-b_j|^2 + sum_j min_i |a_i-b_j|^2  (official cd_t, the default)
    'mean'      the same with means instead of sums
    'sqrt_mean' (mean_i min_j |a_i-b_j| + mean_j min_i |a_i-b_j|) / 2  (official cd_p)
    """
    d = torch.cdist(a, b).square()  # (B, M, G)
    d_ab, d_ba = d.min(dim=2).values, d.min(dim=1).values
    if reduction == "sum":
        return d_ab.sum(1) + d_ba.sum(1)
    if reduction == "mean":
        return d_ab.mean(1) + d_ba.mean(1)
    if reduction == "sqrt_mean":
        return (d_ab.clamp_min(0).sqrt().mean(1) + d_ba.clamp_min(0).sqrt().mean(1)) / 2
    raise ValueError(f"unknown reduction {reduction!r}")


def mapping_loss(y: torch.Tensor, k: int = 10, heat_t: float = 8.0) -> torch.Tensor:
    """DPC's neighbourhood-consistency loss over all ordered pairs (s, t), s != t, of a batch.

        L_map = mean_{s != t} sum_i sum_{j in N_s(i)} exp(-|y_s^j - y_s^i|^2 / T) |y_t^j - y_t^i|^2

    N_s(i): the k-1 nearest neighbours of point i in shape s (k counts the point itself, as
    in the official code). y: (B, M, 3) -> scalar. Vectorised over all B^2 pairs."""
    b = y.shape[0]
    if b < 2:
        return y.new_zeros(())
    with torch.no_grad():  # neighbourhoods are indices: no gradient (torch_cluster.knn in official)
        idx = knn_indices(y, k, include_self=False)[:, :, : k - 1]  # (B, M, k-1)
    src = gather_neighbours(y, idx) - y[:, :, None, :]  # (B, M, k-1, 3)
    w = torch.exp(-src.square().sum(-1) / heat_t)  # (B, M, k-1) heat kernel in source
    # target t read through source s's neighbourhoods: (B_s, B_t, M, k-1, 3)
    tgt = y[torch.arange(b, device=y.device)[None, :, None, None], idx[:, None]]
    tgt = tgt - y[None, :, :, None, :]
    per_pair = (w[:, None] * tgt.square().sum(-1)).sum(dim=(2, 3))  # (B, B)
    off = ~torch.eye(b, dtype=torch.bool, device=y.device)
    return per_pair[off].mean()


__all__ = [
    "DGCNNEncoder",
    "EdgeConv",
    "EncoderConfig",
    "Point2SSM",
    "Point2SSMConfig",
    "PointNetEncoder",
    "SelfAttentionBlock",
    "chamfer_distance",
    "edge_features",
    "knn_indices",
    "mapping_loss",
    "make_encoder",
]

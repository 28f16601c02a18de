"""Parametric Augmentation for Time Series Contrastive Learning (AutoTCL).

Zheng, Zhang, Ding, Chen, Cai, Liu & Zhao, ICLR 2024. https://arxiv.org/abs/2402.10434
Official code: https://github.com/AslanDing/AutoTCL (``AutoTCL_CoST.py``, ``models/losses.py``).

An augmentation network factorises a series x (B x T x C) into an informative part and a
task-irrelevant part and builds the positive view from the informative part (Sec. 3-4):

    e = A(x)                                  shared trunk, (B, T, aug_dim)
    h(x) = sigmoid(W_h e)                     mask "logits" per element, (B, T, C)
    g(x) = sigmoid(W_g e)                     a positive scale per element, (B, T, C)
    m    = hard-concrete(h(x))                binary mask, straight-through gradient
    x'   = g(x) * m * x                       the augmented view

The augmentation network is trained to keep the view's information ("PRI", Sec. 4.2): the MMD
between the max-pooled representations f(x) and f(x'), plus ``reg_weight`` * ReLU(sum_C h - 0.4)
and ``regular_weight`` * a time-smoothness term on h. The encoder f is trained, alternately,
with InfoNCE between max-pooled f(x) and f(x') plus ``local_weight`` * a local InfoNCE that
contrasts adjacent crops of f(x). An averaged copy of f (SWA) is used for inference.

The encoder is TS2Vec's dilated convolution network (Yue et al., AAAI 2022); the official
AutoTCL forecasting script uses the same network with CoST's trend head on top
(``encoder="cost"`` here).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

# ----------------------------------------------------------------------------- encoder
FFT_MIN_DIMS = 64
"""From this many representation channels on, CoST's trend head is computed as one causal
convolution by FFT (see :meth:`TSEncoder.trend`)."""


class SamePadConv(nn.Module):
    """A 1-d convolution whose output has the input's length (TS2Vec ``SamePadConv``)."""

    def __init__(self, c_in: int, c_out: int, kernel_size: int, dilation: int = 1):
        super().__init__()
        receptive_field = (kernel_size - 1) * dilation + 1
        self.conv = nn.Conv1d(c_in, c_out, kernel_size, padding=receptive_field // 2,
                              dilation=dilation)  # fmt: skip
        self.remove = 1 if receptive_field % 2 == 0 else 0

    def forward(self, x):  # (B, C_in, T) -> (B, C_out, T)
        out = self.conv(x)
        return out[:, :, : -self.remove] if self.remove else out


class ConvBlock(nn.Module):
    """GELU -> conv -> GELU -> conv, plus a residual (1x1-projected where shapes differ)."""

    def __init__(self, c_in: int, c_out: int, kernel_size: int, dilation: int, final=False):
        super().__init__()
        self.conv1 = SamePadConv(c_in, c_out, kernel_size, dilation)
        self.conv2 = SamePadConv(c_out, c_out, kernel_size, dilation)
        self.projector = nn.Conv1d(c_in, c_out, 1) if c_in != c_out or final else None

    def forward(self, x):
        residual = x if self.projector is None else self.projector(x)
        return self.conv2(F.gelu(self.conv1(F.gelu(x)))) + residual


class DilatedConvEncoder(nn.Module):
    """Residual blocks of kernel 3 with dilation 2^i (TS2Vec)."""

    def __init__(self, c_in: int, channels: list[int], kernel_size: int = 3):
        super().__init__()
        self.net = nn.Sequential(*[
            ConvBlock(channels[i - 1] if i else c_in, c, kernel_size, dilation=2**i,
                      final=i == len(channels) - 1)
            for i, c in enumerate(channels)
        ])  # fmt: skip

    def forward(self, x):
        return self.net(x)


def timestamp_mask(kind: str, B: int, T: int, device) -> torch.Tensor:
    """TS2Vec's timestamp masks on the projected input: True keeps a timestep. (B, T)"""
    if kind == "binomial":  # TS2Vec default, p = 0.5
        return torch.rand(B, T, device=device) < 0.5
    if kind == "all_true":
        return torch.ones(B, T, dtype=torch.bool, device=device)
    if kind == "mask_last":
        mask = torch.ones(B, T, dtype=torch.bool, device=device)
        mask[:, -1] = False
        return mask
    raise ValueError(f"unknown mask {kind!r}: binomial, all_true or mask_last")


class TSEncoder(nn.Module):
    """TS2Vec's encoder: per-timestep representations ``(B, T, output_dims)``.

    ``input_fc`` (C -> hidden), a timestamp mask in training (``mask_mode``), ``depth``
    dilated residual blocks and a final block to ``output_dims``, dropout 0.1. Parameter names
    match the official ``models/encoder.py`` so its state dicts load. With ``trend_head=True``
    it is the official AutoTCL ``CoSTEncoder`` (``models/CoTs_encoder.py``, AslanDing/AutoTCL
    2ca0060): CoST's trend head (causal convolutions of kernels 1..128 on the dilated network's
    output, averaged) and, as there, no dropout on the trend path (``repr_dropout`` unused).
    """

    def __init__(self, input_dims: int, output_dims: int = 320, hidden_dims: int = 64,
                 depth: int = 10, mask_mode: str = "binomial", dropout: float = 0.1,
                 trend_head: bool = False, kernels=(1, 2, 4, 8, 16, 32, 64, 128)):  # fmt: skip
        super().__init__()
        self.input_dims, self.output_dims, self.mask_mode = input_dims, output_dims, mask_mode
        self.input_fc = nn.Linear(input_dims, hidden_dims)
        self.feature_extractor = DilatedConvEncoder(
            hidden_dims, [hidden_dims] * depth + [output_dims], kernel_size=3
        )
        self.repr_dropout = nn.Dropout(p=dropout)
        self.kernels = tuple(kernels) if trend_head else ()
        self.tfd = nn.ModuleList(
            [nn.Conv1d(output_dims, output_dims, k, padding=k - 1) for k in self.kernels]
        )

    def forward(self, x, mask: str | None = None, last: int | None = None):
        """(B, T, C) -> (B, T, output_dims); with ``last``, only the last ``last`` steps'
        representations (B, last, output_dims): the causal sliding encoding keeps no other,
        and the trend head then computes no other."""
        observed = ~torch.isnan(x).any(dim=-1)  # (B, T)
        h = self.input_fc(torch.nan_to_num(x))
        kind = mask or (self.mask_mode if self.training else "all_true")
        keep = timestamp_mask(kind, h.size(0), h.size(1), h.device) & observed
        h = h * keep.unsqueeze(-1)
        z = self.feature_extractor(h.transpose(1, 2))  # (B, D, T)
        if self.kernels:  # CoST trend head: causal convolutions, averaged; no dropout (official)
            return self.trend(z, last).transpose(1, 2)
        z = z if last is None else z[..., -last:]
        return self.repr_dropout(z.transpose(1, 2))

    def trend(self, z, last: int | None = None):
        """CoST's trend head on the dilated network's output z (B, D, T) -> (B, D, T), or the
        last ``last`` steps. Official: a convolution per kernel k with padding k - 1 on both
        sides, the last k - 1 outputs cut, averaged; here the same outputs from a left padding
        alone, without computing the cut ones. From ``FFT_MIN_DIMS`` channels on (the official
        320), the average of the causal convolutions is one causal convolution (their kernels
        right-aligned and averaged: a linear identity), computed by FFT over the whole
        sequence or directly over the ``last`` steps: the same outputs to float rounding
        (tested), at a fraction of the cost on a CPU (32 x 257 steps: ~80x fewer products)."""
        if self.output_dims < FFT_MIN_DIMS:
            if last is not None:
                z = z[..., -(last + max(self.kernels) - 1) :]
            out = torch.stack([F.conv1d(F.pad(z, (k - 1, 0)), conv.weight, conv.bias)
                               for k, conv in zip(self.kernels, self.tfd)]).mean(0)  # fmt: skip
            return out if last is None else out[..., -last:]
        K = max(self.kernels)
        weight = z.new_zeros(self.output_dims, self.output_dims, K)  # (out, in, K)
        for k, conv in zip(self.kernels, self.tfd):
            weight = weight + F.pad(conv.weight, (K - k, 0))
        weight, bias = weight / len(self.kernels), torch.stack([c.bias for c in self.tfd]).mean(0)
        if last is not None:  # the last steps only: a direct convolution over their window
            z = F.pad(z, (K - 1, 0))[..., -(last + K - 1) :]
            return F.conv1d(z, weight, bias)
        T = z.size(-1)
        n = T + K - 1  # linear (not circular) convolution: pad the transform to T + K - 1
        zf = torch.fft.rfft(z, n=n)  # (B, in, F)
        wf = torch.fft.rfft(weight.flip(-1), n=n)  # cross-correlation = convolution, flipped
        out = torch.fft.irfft(torch.einsum("bif,oif->bof", zf, wf), n=n)
        return out[..., :T] + bias[:, None]


# ----------------------------------------------------------------------------- augmentation
def hard_concrete(logits, gumbel_bias=0.05, gamma=-0.05, zeta=1.0, training=True, hard=True):
    """The official ``_sample_graph``: logistic noise (uniform u in [bias, 1 - bias]),
    sigmoid, stretched to (gamma, zeta) and clipped to [0, 1]; with ``hard`` the mask is
    thresholded at 0.5 and the gradient passes straight through the soft value."""
    if training:
        u = torch.rand_like(logits) * (1 - 2 * gumbel_bias) + gumbel_bias
        logits = logits + torch.log(u) - torch.log(1 - u)
    soft = (torch.sigmoid(logits) * (zeta - gamma) + gamma).clamp(0.0, 1.0)
    if not hard:
        return soft
    return soft + ((soft > 0.5).to(soft.dtype) - soft).detach()


def hard_concrete_keep_probability(logits, gumbel_bias=0.05, gamma=-0.05, zeta=1.0):
    """The exact probability that :func:`hard_concrete` (hard, with noise) keeps an element:
    kept when sigmoid(l + log(u / (1 - u))) * (zeta - gamma) + gamma > 0.5, i.e. when the
    uniform u in [bias, 1 - bias] exceeds sigmoid(t - l), t = logit((0.5 - gamma) / (zeta -
    gamma)). With the official quirk (l = h in (0, 1)) and the ETTh1 config (bias 0.05, gamma
    -0.05) this lies in [0.4735, 0.7355] whatever h is."""
    p = (0.5 - gamma) / (zeta - gamma)
    t = math.log(p / (1 - p))
    u = torch.sigmoid(t - logits)
    return ((1 - gumbel_bias - u) / (1 - 2 * gumbel_bias)).clamp(0.0, 1.0)


# quadrature nodes of soft_concrete_mean: midpoints of equal slices of the noise's range
SOFT_NODES = 256


def soft_concrete_mean(logits, gumbel_bias=0.05, gamma=-0.05, zeta=1.0, nodes=SOFT_NODES):
    """The expected value of :func:`hard_concrete`'s soft mask (``hard=False``, with noise): the
    mean over the uniform u in [bias, 1 - bias] of the stretched, clipped sigmoid of
    l + log(u / (1 - u)), by the midpoint rule on ``nodes`` slices (deterministic; monotone in
    l). What a soft mask keeps of each element on average (config_etth2_uni's mask)."""
    u = (torch.arange(nodes, dtype=logits.dtype) + 0.5) / nodes * (1 - 2 * gumbel_bias)
    u = u + gumbel_bias
    noisy = logits[..., None] + torch.log(u) - torch.log(1 - u)
    return (torch.sigmoid(noisy) * (zeta - gamma) + gamma).clamp(0.0, 1.0).mean(-1)


def quirk_keep_range(gumbel_bias=0.05, gamma_zeta=0.05, hard=True) -> tuple[float, float]:
    """The keep probabilities (``hard``; the soft mask: its expected value) the official quirk
    allows: a logit in (0, 1) (h's sigmoid output) -> (at 0, at 1); (0.4735, 0.7355) for the
    ETTh1 config."""
    keep = hard_concrete_keep_probability if hard else soft_concrete_mean
    ends = keep(torch.tensor([0.0, 1.0]), gumbel_bias, -gamma_zeta)
    return float(ends[0]), float(ends[1])


class AugmentationNet(nn.Module):
    """The parametric augmentation: x' = g(x) * m(h(x)) * x.

    ``trunk`` is the official ``augsharenet`` (``AutoTCL_CoST.py``, AslanDing/AutoTCL 2ca0060): a
    shallow CoST encoder with the trend head to ``aug_dim`` features, never timestamp-masked and
    without dropout (official run: aug_dim 16, hidden 64, depth 3, AutoTCL's default
    ``aug_depth=3``: the training script does not pass the config's ``aug_depth``); ``h`` and
    ``g`` one linear layer each to the input's channels with a sigmoid (official
    ``factor_augnet``, ``augmentation_projector``; ``agu_channel`` = the channels). With
    ``faithful_quirks`` h's sigmoid output in (0, 1) is used as the mask logit, as the official
    code does; otherwise h is a free logit."""

    def __init__(self, input_dims: int, aug_dim: int = 16, hidden_dims: int = 64,
                 depth: int = 3, gumbel_bias: float = 0.05, gamma_zeta: float = 0.05,
                 hard_mask: bool = True, faithful_quirks: bool = False):  # fmt: skip
        super().__init__()
        self.trunk = TSEncoder(input_dims, aug_dim, hidden_dims, depth, "all_true", dropout=0.0,
                               trend_head=True)  # fmt: skip
        self.h = nn.Linear(aug_dim, input_dims)
        self.g = nn.Linear(aug_dim, input_dims)
        self.gumbel_bias, self.gamma, self.hard = gumbel_bias, -gamma_zeta, hard_mask
        self.faithful_quirks = faithful_quirks

    def forward(self, x, sample: bool = True):
        """-> (x', mask, h, g), each (B, T, C); h = sigmoid(W_h e). Missing values (NaN: the
        padding of shorter series) stay missing in x', for the encoder to mask them."""
        e = self.trunk(x)  # (B, T, aug_dim)
        logit = self.h(e)
        h = torch.sigmoid(logit)
        g = torch.sigmoid(self.g(e))
        mask = hard_concrete(self.mask_logit(logit), self.gumbel_bias, self.gamma,
                             training=sample, hard=self.hard)  # fmt: skip
        xa = g * mask * torch.nan_to_num(x)
        return torch.where(torch.isnan(x), x, xa), mask, h, g

    def mask_logit(self, logit):
        """What the hard-concrete sampler reads: the free logit (the paper), or h = its sigmoid
        (the official code's quirk, ``faithful_quirks``)."""
        return torch.sigmoid(logit) if self.faithful_quirks else logit

    @torch.no_grad()
    def keep_probability(self, x):
        """Each element's exact probability of being kept by the sampled hard mask; for the
        soft mask (``hard_mask=False``) the expected mask value (:func:`soft_concrete_mean`),
        the share of the element it keeps on average. (B, T, C)"""
        logit = self.mask_logit(self.h(self.trunk(x)))
        keep = hard_concrete_keep_probability if self.hard else soft_concrete_mean
        return keep(logit, self.gumbel_bias, self.gamma)


# ----------------------------------------------------------------------------- losses
def max_pool_time(z):  # (B, T, D) -> (B, D)
    return z.max(dim=1).values


def info_nce(z1, z2, temperature: float = 1.0):
    """InfoNCE between instance vectors (B, D): positives on the diagonal of the cosine
    similarities, the other rows' views as negatives (official ``InfoNCE``)."""
    sim = F.normalize(z1, dim=-1) @ F.normalize(z2, dim=-1).T / temperature  # (B, B)
    return F.cross_entropy(sim, torch.arange(len(sim), device=sim.device))


def global_info_nce(out1, out2, temperature: float = 1.0):
    """InfoNCE between the max-pooled representations of two views (official ``infoNCE``)."""
    return info_nce(max_pool_time(out1), max_pool_time(out2), temperature)


def local_info_nce(z, k: int = 16, temperature: float = 1.0, first_only: bool = True):
    """The local InfoNCE (official ``local_infoNCE``): cut f(x) into k crops, max-pool each,
    and contrast each crop with its right neighbour (the last with its left) against the
    crops that are not adjacent. The official code scores the first series of the batch only
    (``first_only``). z: (B, T, D)."""
    B, T, D = z.shape
    size = T // k
    if size < 1:
        return z.new_zeros(())
    z = F.normalize(z, dim=-1)
    start = int(torch.randint(0, T - size * k + 1, ()))
    crops = z[:, start : start + size * k].reshape(B, k, size, D).max(dim=2).values  # (B, k, D)
    if first_only:
        crops = crops[:1]
    sim = crops @ crops.transpose(1, 2) / temperature  # (b, k, k)
    i = torch.arange(k, device=z.device)
    pos = torch.where(i < k - 1, i + 1, k - 2)
    excluded = (i[:, None] - i[None, :]).abs() <= 1  # self and both neighbours
    excluded[0, 2] = excluded[-1, -3] = True  # the ends drop one more: k - 3 negatives each
    negatives = sim[:, ~excluded].reshape(len(sim), k, k - 3)
    logits = torch.cat([sim[:, i, pos].unsqueeze(-1), negatives], dim=-1)
    return -F.log_softmax(logits, dim=-1)[..., 0].mean()


def gaussian_mmd(a, b, kernel_mul: float = 2.0, kernel_num: int = 5):
    """Squared MMD between samples a, b (n, D) with a sum of ``kernel_num`` Gaussian kernels,
    bandwidths the mean pairwise squared distance times kernel_mul^(i - kernel_num // 2)
    (official ``mmdx``; the bandwidth carries no gradient)."""
    n = len(a)
    total = torch.cat([a, b])
    d2 = torch.cdist(total, total).pow(2)  # (2n, 2n)
    bandwidth = d2.detach().sum() / (len(total) ** 2 - len(total))
    bandwidth = bandwidth.clamp_min(1e-12) / kernel_mul ** (kernel_num // 2)
    kernel = sum(torch.exp(-d2 / (bandwidth * kernel_mul**i)) for i in range(kernel_num))
    return (kernel[:n, :n] + kernel[n:, n:] - kernel[:n, n:] - kernel[n:, :n]).mean()


def time_smoothness(h):
    """Mean absolute change of h between adjacent timesteps. (B, T, C) -> ()"""
    return (h[:, 1:] - h[:, :-1]).abs().mean()


# ----------------------------------------------------------------------------- encoding
@torch.no_grad()
def encode_series(net, data, *, causal=False, sliding_length=None, sliding_padding=0,
                  full_series=False, batch_size=256):  # fmt: skip
    """TS2Vec's ``encode``: representations of ``data`` (N, T, C) -> (N, T, D), or (N, D)
    with ``full_series`` (max-pooled over time). With ``sliding_length`` each block of
    ``sliding_length`` steps is encoded from a window reaching ``sliding_padding`` steps back
    (and forward unless ``causal``); ``causal=True, sliding_length=1`` gives every timestep a
    representation of its past only (the forecasting protocol)."""
    device = next(net.parameters()).device
    x = torch.as_tensor(np.asarray(data), dtype=torch.float32)
    was_training = net.training
    net.eval()
    try:
        if sliding_length is None:
            out = torch.cat([net(b.to(device)).cpu() for b in x.split(batch_size)])
        else:
            N, T, C = x.shape
            L, P = sliding_length, sliding_padding
            right = 0 if causal else P
            n_win = math.ceil(T / L)
            pad_right = n_win * L - T + right
            padded = F.pad(x.transpose(1, 2), (P, pad_right), value=float("nan"))  # (N, C, T')
            windows = padded.unfold(2, P + L + right, L)  # (N, C, n_win, W)
            windows = windows.permute(0, 2, 3, 1).reshape(N * n_win, -1, C)
            if causal:  # the window ends with the L steps kept: compute those only
                outs = [net(w.to(device), last=L).cpu() for w in windows.split(batch_size)]
            else:
                outs = [net(w.to(device))[:, P : P + L].cpu() for w in windows.split(batch_size)]
            out = torch.cat(outs).reshape(N, n_win * L, -1)[:, :T]
        if full_series:
            out = out.max(dim=1).values
        return out.numpy()
    finally:
        net.train(was_training)


def centerize_vary_length_series(x: np.ndarray) -> np.ndarray:
    """Shift each series so that its observed steps sit in the middle of the window (official
    ``centerize_vary_length_series`` of TS2Vec and AutoTCL, applied when padding lies at the
    start or end). (N, T, C)"""
    observed = ~np.isnan(x).all(axis=-1)  # (N, T)
    first = observed.argmax(axis=1)
    last = x.shape[1] - observed[:, ::-1].argmax(axis=1)
    shift = (x.shape[1] - last - first) // 2  # centre: equal padding either side
    rows, cols = np.ogrid[: x.shape[0], : x.shape[1]]
    return x[rows, (cols - shift[:, None]) % x.shape[1]]


def split_into_windows(
    data: np.ndarray, max_length: int | None, fill_nan: bool = False
) -> np.ndarray:
    """The official data loaders (TS2Vec's and AutoTCL's ``get_dataloader``): a long series is
    cut into ``T // max_length`` near-equal sections (NaN-padded to one length); series padded
    at the start or end (variable lengths) are centred; all-NaN instances are dropped. NaNs are
    kept for the encoder to mask (TS2Vec's convention, used here for every method) or
    zero-filled (``fill_nan=True``: AutoTCL's CoST-based official loader)."""
    data = np.asarray(data, dtype=np.float32)
    if max_length is not None and data.shape[1] // max_length >= 2:
        parts = np.array_split(data, data.shape[1] // max_length, axis=1)
        width = max(p.shape[1] for p in parts)
        parts = [np.pad(p, ((0, 0), (0, width - p.shape[1]), (0, 0)), constant_values=np.nan)
                 for p in parts]  # fmt: skip
        data = np.concatenate(parts, axis=0)
    missing = np.isnan(data).all(axis=-1).any(axis=0)  # (T,) padded steps, in any series
    if missing[0] or missing[-1]:  # variable-length series (official, both loaders)
        data = centerize_vary_length_series(data)
    data = data[~np.isnan(data).all(axis=(1, 2))]
    return np.nan_to_num(data) if fill_nan else data


def random_window(x, max_length: int | None, generator=None):
    """A random crop of ``max_length`` steps, the same offset for the whole batch (official)."""
    if max_length is None or x.size(1) <= max_length:
        return x
    offset = int(torch.randint(0, x.size(1) - max_length + 1, (), generator=generator))
    return x[:, offset : offset + max_length]


# ----------------------------------------------------------------------------- optimiser
class AdamW:
    """torch.optim.AdamW with its defaults (betas 0.9/0.999, eps 1e-8, weight decay 0.01,
    decoupled, bias-corrected), as the official code uses it. Written out because
    torch.optim's constructor imports torch._dynamo: seconds of start-up a CPU smoke run
    cannot spare."""

    def __init__(self, params, lr: float, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        for p, m, v in zip(self.params, self.m, self.v):
            if p.grad is None:
                continue
            p.mul_(1 - self.lr * self.weight_decay)
            m.lerp_(p.grad, 1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            p.addcdiv_(m, (v / c2).sqrt_().add_(self.eps), value=-self.lr / c1)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None


# ----------------------------------------------------------------------------- the model
class Encodes:
    """``encode`` for a model whose averaged encoder is ``self.net`` (AutoTCL and the TS2Vec
    baseline share it)."""

    net: torch.optim.swa_utils.AveragedModel

    def encode(self, data, causal: bool = False, sliding_length: int | None = None,
               sliding_padding: int = 0, full_series: bool = False, batch_size: int = 256):  # fmt: skip
        """Representations from the averaged encoder (see :func:`encode_series`)."""
        return encode_series(self.net.module, data, causal=causal, sliding_length=sliding_length,
                             sliding_padding=sliding_padding, full_series=full_series,
                             batch_size=batch_size)  # fmt: skip


class AutoTCL(Encodes):
    """AutoTCL with the TS2Vec-like API: ``fit(train)`` then ``encode(data, causal=True,
    sliding_length=1, sliding_padding=200)``.

    Defaults are the official ETTh1-univariate config (``config.py`` at AslanDing/AutoTCL
    2ca0060, 2024-03-23: batch 32, lr 3e-5, meta_lr 0.01, max_train_length 257, aug_dim 16,
    hidden 64, depth 10,
    gumbel_bias 0.05, gamma_zeta 0.05, hard mask, local_weight 0.3, reg_weight 0.003,
    regular_weight 0, 115 epochs), the training script (repr_dims 320, iters 4000) and
    ``AutoTCL``'s own default aug_depth 3 (the script does not pass the config's aug_depth 1).
    ``augmentation="random"`` replaces the learned view with a fixed random mask keeping each
    element with probability ``keep_ratio`` (an ablation; nothing else changes).
    ``faithful_quirks=True`` is the official code's behaviour: h's sigmoid output is the mask's
    logit (so each element is kept with probability in [0.4735, 0.7355] whatever h is) and the
    local InfoNCE scores the first series of the batch only; ``False`` (the default) is the
    method as the paper describes it: h a free logit, the local loss over the whole batch.
    Missing values (NaN) are kept and masked by the encoder, as TS2Vec does (the official
    CoST-based loader zero-fills them).
    """

    def __init__(self, input_dims: int, output_dims: int = 320, hidden_dims: int = 64,
                 depth: int = 10, encoder: str = "ts2vec", aug_dim: int = 16,
                 aug_depth: int = 3, aug_hidden_dims: int = 64, lr: float = 3e-5,
                 meta_lr: float = 0.01, batch_size: int = 32, max_train_length: int = 257,
                 gumbel_bias: float = 0.05, gamma_zeta: float = 0.05, hard_mask: bool = True,
                 local_weight: float = 0.3, reg_weight: float = 0.003,
                 regular_weight: float = 0.0, reg_threshold: float = 0.4, ratio_step: int = 1,
                 augmentation: str = "learned", keep_ratio: float = 0.5,
                 faithful_quirks: bool = False, device: str = "cpu"):  # fmt: skip
        if encoder not in ("ts2vec", "cost"):
            raise ValueError("encoder must be ts2vec or cost")
        if augmentation not in ("learned", "random"):
            raise ValueError("augmentation must be learned or random")
        if not 0 < keep_ratio <= 1:
            raise ValueError("keep_ratio must be in (0, 1]")
        self.device = torch.device(device)
        self.batch_size, self.max_train_length = batch_size, max_train_length
        self.lr, self.meta_lr, self.ratio_step = lr, meta_lr, ratio_step
        self.local_weight, self.reg_weight = local_weight, reg_weight
        self.regular_weight, self.reg_threshold = regular_weight, reg_threshold
        self.augmentation, self.keep_ratio = augmentation, keep_ratio
        self.faithful_quirks = faithful_quirks
        # the official encoder is never timestamp-masked (its forward's mask defaults to all_true)
        self._net = TSEncoder(input_dims, output_dims, hidden_dims, depth, "all_true",
                              trend_head=encoder == "cost").to(self.device)  # fmt: skip
        self.net = torch.optim.swa_utils.AveragedModel(self._net)
        self.net.update_parameters(self._net)  # the official code averages the init in too
        self.aug = AugmentationNet(input_dims, aug_dim, aug_hidden_dims, aug_depth, gumbel_bias,
                                   gamma_zeta, hard_mask, faithful_quirks).to(self.device)  # fmt: skip
        self.n_epochs = self.n_iters = 0

    def view(self, x):
        """The augmented view of x (B, T, C) -> (x', mask, h)."""
        if self.augmentation == "random":
            mask = (torch.rand_like(x) < self.keep_ratio).to(x.dtype)
            return mask * x, mask, None
        xa, mask, h, _ = self.aug(x)
        return xa, mask, h

    def _augmentation_step(self, x, optimizer):
        """PRI: keep f(x') close to f(x) in distribution (MMD), the mask small and smooth."""
        self._net.eval()  # the official code: encoder in eval mode, its weights not stepped
        xa, _, h = self.view(x)
        loss = gaussian_mmd(max_pool_time(self._net(x)), max_pool_time(self._net(xa)))
        loss = loss + self.reg_weight * F.relu(h.sum(-1).mean() - self.reg_threshold)
        if self.regular_weight:
            loss = loss + self.regular_weight * time_smoothness(h)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return float(loss.detach())

    def _encoder_step(self, x, optimizer):
        self._net.train()
        with torch.no_grad():
            xa, _, _ = self.view(x)
        out1, out2 = self._net(x), self._net(xa)
        local = local_info_nce(out1, first_only=self.faithful_quirks)
        loss = global_info_nce(out1, out2) + self.local_weight * local
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        self.net.update_parameters(self._net)
        return float(loss.detach())

    def fit(self, train_data, n_epochs: int | None = 115, n_iters: int | None = 4000,
            progress=None) -> list[float]:  # fmt: skip
        """Alternating updates over windows of ``train_data`` (N, T, C); stops at
        ``n_epochs`` or ``n_iters``, whichever comes first. -> the encoder loss per epoch."""
        if np.asarray(train_data).ndim != 3:
            raise ValueError("train_data must be (n_instances, n_timesteps, n_channels)")
        data = torch.from_numpy(split_into_windows(train_data, self.max_train_length))
        batch = min(self.batch_size, len(data))  # the official script shrinks the batch
        opt = AdamW(self._net.parameters(), lr=self.lr)
        meta_opt = AdamW(self.aug.parameters(), lr=self.meta_lr)
        log = []
        while n_epochs is None or self.n_epochs < n_epochs:
            order, losses = torch.randperm(len(data)), []
            for s in range(0, len(data) - batch + 1, batch):  # drop_last=True
                if n_iters is not None and self.n_iters >= n_iters:
                    return log
                x = random_window(data[order[s : s + batch]], self.max_train_length).to(self.device)
                if self.augmentation == "learned" and self.n_iters % self.ratio_step == 0:
                    self._augmentation_step(x, meta_opt)
                losses.append(self._encoder_step(x, opt))
                self.n_iters += 1
            self.n_epochs += 1
            log.append(float(np.mean(losses)))
            if progress is not None:
                progress(self)
        return log

    @torch.no_grad()
    def mask_keep_rate(self, data, samples: int = 8) -> np.ndarray:
        """Mean of ``samples`` sampled masks over the series (N, T, C) -> (N, T, C)."""
        x = torch.as_tensor(np.nan_to_num(np.asarray(data, dtype=np.float32))).to(self.device)
        self.aug.eval()
        return torch.stack([self.view(x)[1] for _ in range(samples)]).mean(0).cpu().numpy()

    @torch.no_grad()
    def keep_probability(self, data) -> np.ndarray:
        """Each element's exact probability of being kept by the view's mask (the learned hard
        mask's, from its logit; ``keep_ratio`` for the random mask). (N, T, C) -> (N, T, C)"""
        x = torch.as_tensor(np.asarray(data, dtype=np.float32)).to(self.device)
        if self.augmentation == "random":
            return np.full(x.shape, self.keep_ratio, dtype=np.float32)
        self.aug.eval()
        return self.aug.keep_probability(x).cpu().numpy()

    def save(self, path: str | Path) -> None:
        torch.save({"net": self.net.state_dict(), "_net": self._net.state_dict(),
                    "aug": self.aug.state_dict()}, path)  # fmt: skip

    def load(self, path: str | Path) -> None:
        state = torch.load(path, map_location=self.device, weights_only=True)
        self.net.load_state_dict(state["net"])
        self._net.load_state_dict(state["_net"])
        self.aug.load_state_dict(state["aug"])

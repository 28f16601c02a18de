"""The baselines: TS2Vec with its own augmentation (random overlapping crops + timestamp
masking, hierarchical contrastive loss), at its official budget, and raw lagged values.

TS2Vec: Yue et al., "TS2Vec: Towards Universal Representation of Time Series", AAAI 2022;
official code https://github.com/yuezhihan/ts2vec (``ts2vec.py``, ``models/losses.py``).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from .autotcl import (
    AdamW,
    Encodes,
    TSEncoder,
    centerize_vary_length_series,  # noqa: F401  (re-exported: the official rule)
    random_window,
    split_into_windows,
)


def instance_contrastive_loss(z1, z2):
    """Each timestep's two views against the other series' at that timestep. (B, T, D)"""
    B = z1.size(0)
    if B == 1:
        return z1.new_zeros(())
    z = torch.cat([z1, z2]).transpose(0, 1)  # (T, 2B, D)
    sim = z @ z.transpose(1, 2)  # (T, 2B, 2B)
    logits = torch.tril(sim, diagonal=-1)[:, :, :-1] + torch.triu(sim, diagonal=1)[:, :, 1:]
    logits = -F.log_softmax(logits, dim=-1)
    i = torch.arange(B, device=z1.device)
    return (logits[:, i, B + i - 1].mean() + logits[:, B + i, i].mean()) / 2


def temporal_contrastive_loss(z1, z2):
    """Each timestep's two views against the series' other timesteps. (B, T, D)"""
    T = z1.size(1)
    if T == 1:
        return z1.new_zeros(())
    z = torch.cat([z1, z2], dim=1)  # (B, 2T, D)
    sim = z @ z.transpose(1, 2)  # (B, 2T, 2T)
    logits = torch.tril(sim, diagonal=-1)[:, :, :-1] + torch.triu(sim, diagonal=1)[:, :, 1:]
    logits = -F.log_softmax(logits, dim=-1)
    t = torch.arange(T, device=z1.device)
    return (logits[:, t, T + t - 1].mean() + logits[:, T + t, t].mean()) / 2


def hierarchical_contrastive_loss(z1, z2, alpha: float = 0.5, temporal_unit: int = 0):
    """TS2Vec's loss: instance and temporal contrast at every scale of max-pooling by 2."""
    loss, d = z1.new_zeros(()), 0
    while z1.size(1) > 1:
        loss = loss + alpha * instance_contrastive_loss(z1, z2)
        if d >= temporal_unit:
            loss = loss + (1 - alpha) * temporal_contrastive_loss(z1, z2)
        d += 1
        z1 = F.max_pool1d(z1.transpose(1, 2), kernel_size=2).transpose(1, 2)
        z2 = F.max_pool1d(z2.transpose(1, 2), kernel_size=2).transpose(1, 2)
    if z1.size(1) == 1:
        loss = loss + alpha * instance_contrastive_loss(z1, z2)
        d += 1
    return loss / d


def take_per_row(x, starts, length: int):
    """x[i, starts[i] : starts[i] + length] for every row i. (B, T, C) -> (B, length, C)"""
    idx = starts[:, None] + torch.arange(length)
    return x[torch.arange(len(x))[:, None], idx]


class TS2Vec(Encodes):
    """TS2Vec with the official defaults (``ts2vec.py`` / ``train.py``): repr 320, hidden 64,
    depth 10, lr 0.001 (AdamW), batch 8, max_train_length 3000, temporal_unit 0, 200 iterations
    for data of <= 100,000 values (600 otherwise); binomial timestamp masks (p = 0.5)."""

    def __init__(self, input_dims: int, output_dims: int = 320, hidden_dims: int = 64,
                 depth: int = 10, lr: float = 1e-3, batch_size: int = 8,
                 max_train_length: int | None = 3000, temporal_unit: int = 0,
                 device: str = "cpu"):  # fmt: skip
        self.device = torch.device(device)
        self.lr, self.batch_size, self.max_train_length = lr, batch_size, max_train_length
        self.temporal_unit = temporal_unit
        self._net = TSEncoder(input_dims, output_dims, hidden_dims, depth, "binomial").to(device)
        self.net = torch.optim.swa_utils.AveragedModel(self._net)
        self.net.update_parameters(self._net)  # as the official ts2vec.py
        self.n_iters = 0

    def _views(self, x):
        """Two overlapping random crops; returns the representations of their overlap."""
        T = x.size(1)

        def randint(low, high, size=()):  # numpy's randint(low, high), drawn from torch's RNG
            return torch.randint(low, high, size) if size else int(torch.randint(low, high, ()))

        crop_l = randint(2 ** (self.temporal_unit + 1), T + 1)
        left = randint(0, T - crop_l + 1)
        right = left + crop_l
        eleft = randint(0, left + 1)
        eright = randint(right, T + 1)
        offset = randint(-eleft, T - eright + 1, (len(x),))
        out1 = self._net(take_per_row(x, offset + eleft, right - eleft))[:, -crop_l:]
        out2 = self._net(take_per_row(x, offset + left, eright - left))[:, :crop_l]
        return out1, out2

    def fit(self, train_data, n_iters: int | None = None, progress=None) -> list[float]:
        """Train for ``n_iters`` steps (default: 200, or 600 beyond 100,000 values)."""
        if n_iters is None:
            n_iters = 200 if np.asarray(train_data).size <= 100_000 else 600
        # sections, centred variable-length series, NaNs kept (official ts2vec.py)
        data = torch.from_numpy(split_into_windows(train_data, self.max_train_length))
        batch = min(self.batch_size, len(data))
        opt = AdamW(self._net.parameters(), lr=self.lr)
        self._net.train()
        log = []
        while self.n_iters < n_iters:
            order = torch.randperm(len(data))
            for s in range(0, len(data) - batch + 1, batch):
                if self.n_iters >= n_iters:
                    break
                x = random_window(data[order[s : s + batch]], self.max_train_length)
                out1, out2 = self._views(x.to(self.device))
                loss = hierarchical_contrastive_loss(out1, out2, temporal_unit=self.temporal_unit)
                opt.zero_grad()
                loss.backward()
                opt.step()
                self.net.update_parameters(self._net)
                log.append(float(loss.detach()))
                self.n_iters += 1
            if progress is not None:
                progress(self)
        return log


def lag_features(data: np.ndarray, n_covariates: int, lags: int) -> np.ndarray:
    """Raw-lag features at each t: the last ``lags`` target values (zero before the start)
    and the covariates at t. (N, T, C) -> (N, T, lags * K + n_covariates)"""
    target = data[..., n_covariates:]
    N, T, K = target.shape
    padded = np.concatenate([np.zeros((N, lags - 1, K), target.dtype), target], axis=1)
    windows = np.lib.stride_tricks.sliding_window_view(padded, lags, axis=1)  # (N, T, K, lags)
    return np.concatenate([windows.reshape(N, T, K * lags), data[..., :n_covariates]], axis=-1)

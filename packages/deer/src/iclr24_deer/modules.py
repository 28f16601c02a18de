"""Drop-in ``nn.GRU`` / ``nn.LSTM`` replacements evaluated (and trained) with DEER.

They subclass the torch modules, so parameters, initialisation and ``state_dict`` are the
same as ``nn.GRU`` / ``nn.LSTM``: load a trained nn.GRU into a DEERGRU and vice versa.
"""

from __future__ import annotations

import torch
from torch import nn

from .deer import GRUCellFn, LSTMCellFn, deer_rnn, sequential_rnn


class _DEERMixin:
    def _deer_setup(self, method, jacobian, atol, rtol, max_iter):
        if self.bidirectional:
            raise NotImplementedError("bidirectional DEER RNNs are not implemented")
        if getattr(self, "proj_size", 0):
            raise NotImplementedError("proj_size is not supported by DEERLSTM")
        if method not in ("deer", "sequential", "native"):
            raise ValueError(f"method must be 'deer', 'sequential' or 'native', got {method!r}")
        self.method, self.jacobian = method, jacobian
        self.atol, self.rtol, self.max_iter = atol, rtol, max_iter
        self.last_iterations: list[int] = []
        """Newton iterations per layer in the last forward pass."""
        self.last_converged: list[bool] = []

    def _run_layer(self, cell, h0, x):
        if self.method == "sequential":
            return sequential_rnn(cell, h0, x)
        res = deer_rnn(
            cell, h0, x, jacobian=self.jacobian, atol=self.atol, rtol=self.rtol,
            max_iter=self.max_iter,
        )  # fmt: skip
        self.last_iterations.append(res.iterations)
        self.last_converged.append(res.converged)
        return res.y

    def _layers(self, x, states, cell_cls):
        """x: (B, T, m); states: (L, B, s) -> (B, T, n) output, (L, B, s) final states."""
        self.last_iterations, self.last_converged = [], []
        finals = []
        for layer in range(self.num_layers):
            y = self._run_layer(cell_cls.from_module(self, layer), states[layer], x)
            finals.append(y[:, -1])
            x = y[..., : self.hidden_size]
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = nn.functional.dropout(x, self.dropout, training=True)
        return x, torch.stack(finals, 0)


def _to_batch_first(module, inp):
    unbatched = inp.dim() == 2
    if unbatched:
        inp = inp.unsqueeze(0 if module.batch_first else 1)
    if not module.batch_first:
        inp = inp.transpose(0, 1)
    return inp, unbatched


def _from_batch_first(module, out, unbatched):
    if not module.batch_first:
        out = out.transpose(0, 1)
    return out.squeeze(0 if module.batch_first else 1) if unbatched else out


class DEERGRU(_DEERMixin, nn.GRU):
    """``nn.GRU`` evaluated in parallel over time by DEER (same arguments, plus):

    method: "deer" (default), "sequential" (the same cell, one Python step at a time) or
        "native" (torch's own nn.GRU kernel: cuDNN on GPU), for comparisons.
    jacobian: "full" (DEER) or "diag" (quasi-DEER, cheaper per iteration for large hidden).
    atol, rtol, max_iter: the Newton convergence test (None = official defaults by dtype).

    ``out, h_n = gru(x, h0)`` with x (T, B, input) or (B, T, input) if batch_first.
    """

    def __init__(self, *args, method="deer", jacobian="full", atol=None, rtol=None,
                 max_iter=100, **kwargs):  # fmt: skip
        super().__init__(*args, **kwargs)
        self._deer_setup(method, jacobian, atol, rtol, max_iter)

    def forward(self, input, hx=None):  # noqa: A002 (nn.GRU's name)
        if self.method == "native":
            return super().forward(input, hx)
        x, unbatched = _to_batch_first(self, input)
        B = x.shape[0]
        if hx is None:
            hx = x.new_zeros(self.num_layers, B, self.hidden_size)
        elif unbatched:
            hx = hx.unsqueeze(1)
        out, h_n = self._layers(x, hx, GRUCellFn)
        out = _from_batch_first(self, out, unbatched)
        return out, (h_n.squeeze(1) if unbatched else h_n)


class DEERLSTM(_DEERMixin, nn.LSTM):
    """``nn.LSTM`` evaluated in parallel over time by DEER; the DEER state is [h, c].

    Same extra arguments as :class:`DEERGRU`. ``out, (h_n, c_n) = lstm(x, (h0, c0))``.
    """

    def __init__(self, *args, method="deer", jacobian="full", atol=None, rtol=None,
                 max_iter=100, **kwargs):  # fmt: skip
        super().__init__(*args, **kwargs)
        self._deer_setup(method, jacobian, atol, rtol, max_iter)

    def forward(self, input, hx=None):  # noqa: A002
        if self.method == "native":
            return super().forward(input, hx)
        x, unbatched = _to_batch_first(self, input)
        B, n = x.shape[0], self.hidden_size
        if hx is None:
            states = x.new_zeros(self.num_layers, B, 2 * n)
        else:
            h0, c0 = hx
            if unbatched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
            states = torch.cat([h0, c0], -1)
        out, finals = self._layers(x, states, LSTMCellFn)
        h_n, c_n = finals[..., :n], finals[..., n:]
        if unbatched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return _from_batch_first(self, out, unbatched), (h_n, c_n)

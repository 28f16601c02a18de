"""Parallelizing non-linear sequential models over the sequence length (DEER).

Lim, Zhu, Selfridge & Kasim, ICLR 2024, https://arxiv.org/abs/2309.12252
Official JAX code: https://github.com/machine-discovery/deer

A recurrence y_t = f(y_{t-1}, x_t) is solved for all t at once by Newton's method on the
whole sequence (paper Sec. 3, eq. 5-7). Around the current guess y^(k) each step is linearised

    y_t = J_t y_{t-1} + b_t,   J_t = df/dy (y^(k)_{t-1}, x_t),   b_t = f(y^(k)_{t-1}, x_t) - J_t y^(k)_{t-1}

and this *linear* recurrence is solved exactly by a parallel associative scan over the pairs
(J_t, b_t) with the operator (J', b') o (J, b) = (J' J, J' b + b')  (paper eq. 9), which has
O(log T) depth. The fixed point of the iteration is the sequential solution; convergence is
quadratic once close. Gradients use the implicit-function / adjoint identity (paper Sec. 3.3):
lambda_t = g_t + J_{t+1}^T lambda_{t+1} is one more (reverse-time) scan, then a single batched
vector-Jacobian product of f gives the gradients of the inputs, parameters and y_0.

"quasi-DEER" (jacobian="diag") keeps only the diagonal of J_t: the scan becomes element-wise,
O(n) instead of O(n^3) per step, at the price of more (linearly converging) iterations; the
fixed point is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import torch

Tensor = torch.Tensor
Cell = Callable[[Tensor, Tensor], Tensor]

# Official deer_iter.py (clip_ytnext=True, "workaround for rnn"): clip the new iterate to
# +-1e8 and replace NaNs by 0 so one diverging Newton step cannot poison the whole sequence.
CLIP_VALUE = 1e8


def default_tolerances(dtype: torch.dtype) -> tuple[float, float]:
    """(atol, rtol) of the convergence test, as the official deer_iter.py:
    1e-6 / 1e-4 in float64, 1e-4 / 1e-3 otherwise."""
    return (1e-6, 1e-4) if dtype == torch.float64 else (1e-4, 1e-3)


# ----------------------------------------------------------------------------------------
# The parallel scan for y_t = A_t y_{t-1} + b_t
# ----------------------------------------------------------------------------------------


def _apply(A: Tensor, v: Tensor, diag: bool) -> Tensor:
    """A v for a batch of (..., n, n) matrices or (..., n) diagonals."""
    return A * v if diag else (A @ v.unsqueeze(-1)).squeeze(-1)


def _compose(A2: Tensor, A1: Tensor, diag: bool) -> Tensor:
    return A2 * A1 if diag else A2 @ A1


def _scan_prefix(A: Tensor, b: Tensor, diag: bool) -> Tensor:
    """States s_t = A_t s_{t-1} + b_t with s_0 = b_0 (A_0 unused), over dim 1.

    Work-efficient odd/even reduction: combine neighbouring pairs (paper eq. 9), solve the
    half-length problem recursively (log2 T levels), then fill in the other half with one
    affine step each. Total work O(T), depth O(log T); every level is one batched op.
    """
    T = b.shape[1]
    if T == 1:
        return b
    half = T // 2
    A_even, A_odd = A[:, 0 : 2 * half : 2], A[:, 1 : 2 * half : 2]
    b_even, b_odd = b[:, 0 : 2 * half : 2], b[:, 1 : 2 * half : 2]
    # pair k = (element 2k, element 2k+1) -> one affine map; its prefix is s_{2k+1}
    s_odd = _scan_prefix(
        _compose(A_odd, A_even, diag), _apply(A_odd, b_even, diag) + b_odd, diag
    )  # (B, half, n): s_1, s_3, ...
    n_fill = (T - 1) // 2  # positions 2, 4, ... < T
    s_rest = _apply(A[:, 2::2], s_odd[:, :n_fill], diag) + b[:, 2::2]
    s = torch.empty_like(b)
    s[:, 0] = b[:, 0]
    s[:, 1::2] = s_odd
    s[:, 2::2] = s_rest
    return s


def linear_recurrence(A: Tensor, b: Tensor, h0: Tensor, *, diag: bool | None = None) -> Tensor:
    """Solve y_t = A_t y_{t-1} + b_t, t = 1..T, with y_0 = h0, by a parallel scan.

    A: (B, T, n, n) matrices or (B, T, n) diagonals; b: (B, T, n); h0: (B, n).
    Returns y_1..y_T as (B, T, n).
    """
    if diag is None:
        diag = A.dim() == b.dim()
    b = torch.cat([(_apply(A[:, 0], h0, diag) + b[:, 0]).unsqueeze(1), b[:, 1:]], dim=1)
    return _scan_prefix(A, b, diag)


def linear_recurrence_sequential(A: Tensor, b: Tensor, h0: Tensor, *, diag: bool | None = None):
    """Reference loop for :func:`linear_recurrence` (same shapes)."""
    if diag is None:
        diag = A.dim() == b.dim()
    ys, y = [], h0
    for t in range(b.shape[1]):
        y = _apply(A[:, t], y, diag) + b[:, t]
        ys.append(y)
    return torch.stack(ys, dim=1)


def reverse_linear_recurrence(J: Tensor, g: Tensor, *, diag: bool | None = None) -> Tensor:
    """The adjoint scan lambda_t = g_t + J_{t+1}^T lambda_{t+1}, lambda_T = g_T (paper Sec. 3.3).

    J: (B, T, n, n) or (B, T, n) with J_t = df/dy(y_{t-1}, x_t); g: (B, T, n) = dL/dy_t.
    """
    if diag is None:
        diag = J.dim() == g.dim()
    Jt = J[:, 1:] if diag else J[:, 1:].transpose(-1, -2)
    Jt = torch.cat([Jt, torch.zeros_like(J[:, :1])], dim=1)  # index t holds J_{t+1}^T
    lam = _scan_prefix(Jt.flip(1), g.flip(1), diag)  # reversed time: s_0 = g_T
    return lam.flip(1)


# ----------------------------------------------------------------------------------------
# Jacobians of the cell
# ----------------------------------------------------------------------------------------


def cell_value_and_jacobian(cell, h: Tensor, x: Tensor, diag: bool) -> tuple[Tensor, Tensor]:
    """f(h, x) and df/dh over any leading dims: h (..., n), x (..., m).

    Cells with an analytic ``value_and_jacobian`` (GRU, LSTM, Elman below) use it; any other
    function of (h, x) goes through ``torch.func.jacfwd`` vmapped over the leading dims
    (quasi-DEER then takes the diagonal of the full Jacobian).
    """
    if hasattr(cell, "value_and_jacobian"):
        return cell.value_and_jacobian(h, x, diag=diag)
    lead, n = h.shape[:-1], h.shape[-1]
    hf = h.reshape(-1, n)
    xf = x.reshape(hf.shape[0], *x.shape[len(lead) :])

    def f_aux(hi, xi):
        out = cell(hi, xi)
        return out, out

    jac, val = torch.func.vmap(torch.func.jacfwd(f_aux, argnums=0, has_aux=True))(hf, xf)
    if diag:
        jac = torch.diagonal(jac, dim1=-2, dim2=-1)
        return val.reshape(*lead, n), jac.reshape(*lead, n)
    return val.reshape(*lead, n), jac.reshape(*lead, n, n)


# ----------------------------------------------------------------------------------------
# DEER for discrete recurrences
# ----------------------------------------------------------------------------------------


class DEERResult(NamedTuple):
    """Output of :func:`deer_rnn`."""

    y: Tensor
    """(B, T, n) the states y_1..y_T."""
    iterations: int
    """Newton iterations run (each one scan)."""
    converged: bool
    """Whether |y^(k+1) - y^(k)| <= atol + rtol |y^(k+1)| everywhere at the end."""
    max_change: float
    """max |y^(k+1) - y^(k)| of the last iteration."""


class _AdjointScan(torch.autograd.Function):
    """Identity forward; backward replaces dL/dy by the adjoint lambda (one reverse scan).

    Applied to y* + (f(y*_{t-1}, x_t) - f.detach()), autograd then runs the single batched
    VJP of f with lambda: d/dx_t = df/dx^T lambda_t, d/dtheta = sum_t df/dtheta^T lambda_t,
    d/dy_0 = J_1^T lambda_1 (paper Sec. 3.3).
    """

    @staticmethod
    def forward(ctx, y: Tensor, J: Tensor, diag: bool) -> Tensor:
        ctx.save_for_backward(J)
        ctx.diag = diag
        return y.view_as(y)

    @staticmethod
    def backward(ctx, g: Tensor):
        (J,) = ctx.saved_tensors
        return reverse_linear_recurrence(J, g.contiguous(), diag=ctx.diag), None, None


def _call_flat(cell, h: Tensor, x: Tensor) -> Tensor:
    """cell over (B, T) leading dims; generic cells (e.g. nn.GRUCell) may accept 2-D only."""
    if hasattr(cell, "value_and_jacobian"):
        return cell(h, x)
    B, T = h.shape[:2]
    return cell(h.reshape(B * T, -1), x.reshape(B * T, *x.shape[2:])).reshape(B, T, -1)


def _shift(y: Tensor, h0: Tensor) -> Tensor:
    """(y_0, y_1, ..., y_{T-1}) from y_1..y_T and y_0: the argument of f at each step."""
    return torch.cat([h0.unsqueeze(1), y[:, :-1]], dim=1)


def deer_rnn(
    cell,
    h0: Tensor,
    xs: Tensor,
    *,
    jacobian: str = "full",
    atol: float | None = None,
    rtol: float | None = None,
    max_iter: int = 100,
    init: Tensor | None = None,
    grad_jacobian: str = "full",
) -> DEERResult:
    """Evaluate y_t = cell(y_{t-1}, x_t), t = 1..T, in parallel over T with DEER.

    cell: a function of (h (..., n), x (..., m)) -> (..., n), or one of the analytic cells
        (:class:`GRUCellFn`, :class:`LSTMCellFn`, :class:`ElmanCellFn`); a cell with a
        ``prepare(xs)`` method gets its input projection computed once for all steps.
    h0: (B, n) or (n,); xs: (B, T, m) or (T, m).
    jacobian: "full" (DEER) or "diag" (quasi-DEER, element-wise scan).
    atol, rtol: convergence test |dy| <= atol + rtol |y|; None = official defaults by dtype.
    max_iter: Newton iteration cap (official seq1d default is 10000; 100 is ample here).
    init: (B, T, n) warm start, e.g. the solution for the previous parameters; default y_0
        repeated (official fseq1d.DEER).
    grad_jacobian: the Jacobian used by the adjoint scan in backward; "full" gives exact
        gradients also for jacobian="diag".
    Returns a :class:`DEERResult` (y (B, T, n), iterations, converged, max_change).
    """
    if jacobian not in ("full", "diag"):
        raise ValueError(f"jacobian must be 'full' or 'diag', got {jacobian!r}")
    unbatched = h0.dim() == 1
    if unbatched:
        h0, xs = h0.unsqueeze(0), xs.unsqueeze(0)
        init = None if init is None else init.unsqueeze(0)
    if xs.shape[0] != h0.shape[0]:
        raise ValueError(f"batch of xs {tuple(xs.shape)} and h0 {tuple(h0.shape)} differ")
    B, T, n = xs.shape[0], xs.shape[1], h0.shape[-1]
    d_atol, d_rtol = default_tolerances(h0.dtype)
    atol, rtol = (d_atol if atol is None else atol), (d_rtol if rtol is None else rtol)
    diag = jacobian == "diag"
    if hasattr(cell, "prepare"):
        xs = cell.prepare(xs)  # with grad: the input projection is part of the graph

    with torch.no_grad():
        h0d, xsd = h0.detach(), xs.detach()
        y = h0d.unsqueeze(1).expand(B, T, n).clone() if init is None else init.detach().clone()
        converged, change, it = False, float("inf"), 0
        for it in range(1, max_iter + 1):  # noqa: B007 (returned)
            y_prev = _shift(y, h0d)
            f, J = cell_value_and_jacobian(cell, y_prev, xsd, diag)
            b = f - _apply(J, y_prev, diag)
            y_new = linear_recurrence(J, b, h0d, diag=diag)
            y_new = torch.nan_to_num(y_new, nan=0.0).clamp_(-CLIP_VALUE, CLIP_VALUE)
            delta = (y_new - y).abs()
            change = float(delta.max())
            y = y_new
            if bool((delta <= atol + rtol * y_new.abs()).all()):
                converged = True
                break

    if torch.is_grad_enabled():
        y_prev = _shift(y, h0)  # h0 with grad, the rest detached
        f = _call_flat(cell, y_prev, xs)
        if f.requires_grad:
            gdiag = grad_jacobian == "diag"
            with torch.no_grad():
                _, Jg = cell_value_and_jacobian(cell, y_prev.detach(), xs.detach(), gdiag)
            y = _AdjointScan.apply(y + (f - f.detach()), Jg, gdiag)
    if unbatched:
        y = y.squeeze(0)
    return DEERResult(y, it, converged, change)


def sequential_rnn(cell, h0: Tensor, xs: Tensor) -> Tensor:
    """The reference: y_t = cell(y_{t-1}, x_t) one step after the other. Same shapes as
    :func:`deer_rnn`."""
    unbatched = h0.dim() == 1
    if unbatched:
        h0, xs = h0.unsqueeze(0), xs.unsqueeze(0)
    if hasattr(cell, "prepare"):
        xs = cell.prepare(xs)
    ys, h = [], h0
    for t in range(xs.shape[1]):
        h = cell(h, xs[:, t])
        ys.append(h)
    y = torch.stack(ys, dim=1)
    return y.squeeze(0) if unbatched else y


# ----------------------------------------------------------------------------------------
# Analytic cells (PyTorch gate conventions, so nn.GRU / nn.LSTM weights plug in)
# ----------------------------------------------------------------------------------------


def _rowwise_combination(coef: Tensor, Ws: Tensor) -> Tensor:
    """J[..., i, j] = sum_k coef[..., i, k] Ws[k, i, j]: a Jacobian whose row i mixes row i
    of K weight matrices, built with one batched matmul (no (..., n, n) temporaries).

    coef: (..., n, K); Ws: (K, n, n) -> (..., n, n).
    """
    lead, n, K = coef.shape[:-2], coef.shape[-2], coef.shape[-1]
    Wp = Ws.permute(1, 0, 2)  # (n, K, n)
    J = coef.reshape(-1, n, 1, K) @ Wp  # (N, n, 1, n)
    return J.reshape(*lead, n, n)


def _linear(v: Tensor, W: Tensor, b: Tensor | None) -> Tensor:
    out = v @ W.transpose(0, 1)
    return out if b is None else out + b


class _TorchCellFn:
    """A torch recurrent cell's weights as a function of (h, gi); gi = W_ih x + b_ih is
    computed for all steps at once by ``prepare`` (it does not depend on h)."""

    cell_type: type[torch.nn.Module]
    """The nn cell whose parameters ``from_module`` reads (nn.GRU etc. use the _l<k> names)."""

    def __init__(self, weight_ih, weight_hh, bias_ih=None, bias_hh=None):
        self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh = (
            weight_ih, weight_hh, bias_ih, bias_hh,
        )  # fmt: skip
        self.hidden_size = weight_hh.shape[1]

    @classmethod
    def from_module(cls, m: torch.nn.Module, layer: int = 0):
        """From the cell module, or layer ``layer`` of the matching multi-layer module."""
        sfx = "" if isinstance(m, cls.cell_type) else f"_l{layer}"
        get = lambda name: getattr(m, name + sfx, None)  # noqa: E731
        return cls(get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"))

    def prepare(self, xs: Tensor) -> Tensor:
        return _linear(xs, self.weight_ih, self.bias_ih)  # (B, T, gates * n)


class GRUCellFn(_TorchCellFn):
    """nn.GRUCell as a function of (h, gi) with gi = W_ih x + b_ih precomputed by ``prepare``.

    r = s(gi_r + W_hr h + b_hr), z = s(gi_z + W_hz h + b_hz),
    c = tanh(gi_n + r * (W_hn h + b_hn)), h' = (1 - z) * c + z * h.
    """

    cell_type = torch.nn.GRUCell

    def _gates(self, h, gi):
        gh = _linear(h, self.weight_hh, self.bias_hh)
        ir, iz, i_n = gi.chunk(3, -1)
        hr, hz, hn = gh.chunk(3, -1)
        r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
        c = torch.tanh(i_n + r * hn)
        return r, z, c, hn

    def __call__(self, h: Tensor, gi: Tensor) -> Tensor:
        _, z, c, _ = self._gates(h, gi)
        return (1 - z) * c + z * h

    def value_and_jacobian(self, h, gi, diag=False):
        r, z, c, hn = self._gates(h, gi)
        out = (1 - z) * c + z * h
        Wr, Wz, Wn = self.weight_hh.chunk(3, 0)  # (n, n) each
        dr, dz, dc = r * (1 - r), z * (1 - z), 1 - c * c
        if diag:
            Wr, Wz, Wn = (torch.diagonal(W) for W in (Wr, Wz, Wn))
            dcdh = dc * (hn * dr * Wr + r * Wn)
            return out, (1 - z) * dcdh + z + (h - c) * dz * Wz
        # dh'/dh = (1-z) dc/dh + diag(z) + diag(h-c) dz/dh, with
        # dc/dh = diag(dc hn dr) W_hr + diag(dc r) W_hn and dz/dh = diag(dz) W_hz
        coef = torch.stack([(1 - z) * dc * hn * dr, (1 - z) * dc * r, (h - c) * dz], -1)
        J = _rowwise_combination(coef, torch.stack([Wr, Wn, Wz], 0))
        J.diagonal(dim1=-2, dim2=-1).add_(z)
        return out, J


class LSTMCellFn(_TorchCellFn):
    """nn.LSTMCell on the state s = [h, c] (2n), with gi = W_ih x + b_ih from ``prepare``.

    i, f, o = s(.), g = tanh(.) of gi + W_hh h + b_hh; c' = f c + i g; h' = o tanh(c').
    ``from_module`` takes an nn.LSTMCell or an nn.LSTM without proj_size.
    """

    cell_type = torch.nn.LSTMCell

    def _gates(self, s, gi):
        h, c = s.chunk(2, -1)
        gates = gi + _linear(h, self.weight_hh, self.bias_hh)
        i, f, g, o = gates.chunk(4, -1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c2 = f * c + i * g
        tc = torch.tanh(c2)
        return c, i, f, g, o, c2, tc

    def __call__(self, s: Tensor, gi: Tensor) -> Tensor:
        _, _, _, _, o, c2, tc = self._gates(s, gi)
        return torch.cat([o * tc, c2], -1)

    def value_and_jacobian(self, s, gi, diag=False):
        c, i, f, g, o, c2, tc = self._gates(s, gi)
        out = torch.cat([o * tc, c2], -1)
        Wi, Wf, Wg, Wo = self.weight_hh.chunk(4, 0)
        di, df, dg, do = i * (1 - i), f * (1 - f), 1 - g * g, o * (1 - o)
        dtc = o * (1 - tc * tc)  # dh'/dc'
        if diag:
            Wi, Wf, Wg, Wo = (torch.diagonal(W) for W in (Wi, Wf, Wg, Wo))
            dc2dh = c * df * Wf + g * di * Wi + i * dg * Wg
            return out, torch.cat([tc * do * Wo + dtc * dc2dh, f], -1)
        # dc'/dh = diag(c df) W_hf + diag(g di) W_hi + diag(i dg) W_hg, dc'/dc = diag(f)
        # dh'/dh = diag(tc do) W_ho + diag(dtc) dc'/dh,              dh'/dc = diag(dtc f)
        Ws = torch.stack([Wf, Wi, Wg, Wo], 0)
        cc = torch.stack([c * df, g * di, i * dg], -1)  # (..., n, 3)
        ch = torch.cat([dtc.unsqueeze(-1) * cc, (tc * do).unsqueeze(-1)], -1)  # (..., n, 4)
        n = f.shape[-1]
        J = f.new_zeros(*f.shape[:-1], 2 * n, 2 * n)
        J[..., :n, :n] = _rowwise_combination(ch, Ws)
        J[..., n:, :n] = _rowwise_combination(cc, Ws[:3])
        J[..., :n, n:].diagonal(dim1=-2, dim2=-1).copy_(dtc * f)
        J[..., n:, n:].diagonal(dim1=-2, dim2=-1).copy_(f)
        return out, J


class ElmanCellFn(_TorchCellFn):
    """nn.RNNCell (tanh): h' = tanh(gi + W_hh h + b_hh), gi = W_ih x + b_ih from ``prepare``."""

    cell_type = torch.nn.RNNCell

    def __call__(self, h: Tensor, gi: Tensor) -> Tensor:
        return torch.tanh(gi + _linear(h, self.weight_hh, self.bias_hh))

    def value_and_jacobian(self, h, gi, diag=False):
        out = self(h, gi)
        d = 1 - out * out
        if diag:
            return out, d * torch.diagonal(self.weight_hh)
        return out, d.unsqueeze(-1) * self.weight_hh

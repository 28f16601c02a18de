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

"quasi-DEER" (jacobian="diag"; Gonzalez et al. 2024, arXiv 2407.19115) keeps only the
diagonal D_t of J_t: the scan becomes element-wise, O(n) instead of O(n^3) per step, at the
price of more (linearly converging) iterations; the fixed point is unchanged. Its backward
stays O(B T n) in memory too: the adjoint is solved with the same diagonal scan, each pass
corrected by a vector-Jacobian product with the true J_t (never formed), which converges to
the exact adjoint; one pass alone is the diagonal adjoint of the quasi-DEER paper.
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


# Layout: inside the solver every tensor is *state-major* with time last: states (n, B, T),
# Jacobians (n, n, B, T) or diagonals (n, B, T). Each matrix entry is then one contiguous
# (B, T) plane, so a product of n x n matrices is n fused multiply-adds over long vectors
# (C_ij = sum_k A2_ik A1_kj) instead of B*T tiny batched matmuls: measured 3-10x faster on
# CPU at n = 4 (profile in the README). The public functions take and return (B, T, ...).
# Above n = 4 the full scan runs on a matrix-last copy with batched matmuls (n^3 work per
# step outgrows the n memory passes of the multiply-adds; measured 3x slower at n = 16).
SM_COMPOSE_MAX_N = 4


def _apply(A: Tensor, v: Tensor, diag: bool, sm: bool = True) -> Tensor:
    """A v for (n, n, *S) matrices (sm) or (*S, n, n) ones (not sm), or diagonals like v."""
    if diag:
        return A * v
    if not sm:
        return torch.matmul(A, v.unsqueeze(-1)).squeeze(-1)
    out = A[:, 0] * v[0]
    for k in range(1, A.shape[1]):
        out = out.addcmul_(A[:, k], v[k])
    return out


def _apply_add(A, v, b, diag: bool, out: Tensor | None = None, sm: bool = True) -> Tensor:
    """A v + b, written into ``out`` (any strides) when given; one kernel when diagonal."""
    if out is not None and torch.is_grad_enabled() and any(t.requires_grad for t in (A, v, b)):
        return out.copy_(_apply_add(A, v, b, diag, sm=sm))  # out= does not record autograd
    if diag:
        return torch.addcmul(b, A, v, out=out)
    if not sm:
        return torch.add(b, _apply(A, v, False, False), out=out)
    res = torch.addcmul(b, A[:, 0], v[0], out=out)
    for k in range(1, A.shape[1]):
        res = res.addcmul_(A[:, k], v[k])
    return res


def _compose(A2: Tensor, A1: Tensor, diag: bool, sm: bool = True) -> Tensor:
    """A2 A1: n multiply-adds of (n, n, *S) planes (sm), else a batched matmul."""
    if diag:
        return A2 * A1
    if not sm:
        return torch.matmul(A2, A1)
    C = A2[:, 0].unsqueeze(1) * A1[0].unsqueeze(0)
    for k in range(1, A2.shape[1]):
        C = C.addcmul_(A2[:, k].unsqueeze(1), A1[k].unsqueeze(0))
    return C


def _scan_prefix(A: Tensor, b: Tensor, diag: bool, out: Tensor | None = None,
                 sm: bool = True) -> Tensor:  # fmt: skip
    """States s_t = A_t s_{t-1} + b_t with s_0 = b_0 (A_0 unused), over time: the last dim
    when ``sm`` (A (n, n, B, T) or (n, B, T), b (n, B, T)), else dim 1 (A (B, T, n, n),
    b (B, T, n): the matrix-last layout for n > SM_COMPOSE_MAX_N).

    Work-efficient odd/even reduction: combine neighbouring pairs (paper eq. 9), solve the
    half-length problem recursively (log2 T levels), then fill in the even positions with
    one affine step each. Total work O(T), depth O(log T); every level is a few batched ops.
    Without autograd the half-length problem is solved straight into the odd positions of
    the output (no copies).
    """
    tix = (lambda sl: (Ellipsis, sl)) if sm else (lambda sl: (slice(None), sl))  # noqa: E731
    T = b.shape[-1] if sm else b.shape[1]
    s = torch.empty_like(b) if out is None else out
    if T == 1:
        return s.copy_(b)
    inplace = not (torch.is_grad_enabled() and (A.requires_grad or b.requires_grad))
    half = T // 2
    A_even, A_odd = A[tix(slice(0, 2 * half, 2))], A[tix(slice(1, 2 * half, 2))]
    # pair k = (element 2k, element 2k+1) -> one affine map; its prefix is s_{2k+1}
    pairs_b = _apply_add(A_odd, b[tix(slice(0, 2 * half, 2))], b[tix(slice(1, None, 2))], diag,
                         sm=sm)  # fmt: skip
    s_odd = _scan_prefix(_compose(A_odd, A_even, diag, sm), pairs_b, diag,
                         out=s[tix(slice(1, None, 2))] if inplace else None, sm=sm)  # fmt: skip
    s[tix(0)] = b[tix(0)]
    if not inplace:
        s[tix(slice(1, None, 2))] = s_odd
    if T > 2:  # positions 2, 4, ... < T: one affine step from their odd neighbour
        _apply_add(A[tix(slice(2, None, 2))], s_odd[tix(slice(0, (T - 1) // 2))],
                   b[tix(slice(2, None, 2))], diag, out=s[tix(slice(2, None, 2))],
                   sm=sm)  # fmt: skip
    return s


def _solve(J: Tensor, b: Tensor, diag: bool) -> Tensor:
    """:func:`_scan_prefix` on state-major J, b; above SM_COMPOSE_MAX_N the full scan runs on
    matrix-last copies (one copy of J; batched matmuls beat n multiply-adds there)."""
    if diag or J.shape[0] <= SM_COMPOSE_MAX_N:
        return _scan_prefix(J, b, diag)
    y = _scan_prefix(J.permute(2, 3, 0, 1).contiguous(), b.permute(1, 2, 0).contiguous(), False,
                     sm=False)  # fmt: skip
    return y.permute(2, 0, 1)


def _to_sm(t: Tensor, matrix: bool) -> Tensor:
    """(B, T, n) -> (n, B, T), (B, T, n, n) -> (n, n, B, T) (views)."""
    return t.permute(2, 3, 0, 1) if matrix else t.permute(2, 0, 1)


def _from_sm(t: Tensor, matrix: bool) -> Tensor:
    return t.permute(2, 3, 0, 1) if matrix else t.permute(1, 2, 0)


def linear_recurrence(A: Tensor, b: Tensor, h0: Tensor, *, diag: bool | None = None) -> Tensor:
    """Solve y_t = A_t y_{t-1} + b_t, t = 1..T, with y_0 = h0, by a parallel scan.

    A: (B, T, n, n) matrices or (B, T, n) diagonals; b: (B, T, n); h0: (B, n).
    Returns y_1..y_T as (B, T, n).
    """
    if diag is None:
        diag = A.dim() == b.dim()
    A, b = (
        _to_sm(A, not diag).contiguous(),
        _to_sm(b, False).clone(memory_format=torch.contiguous_format),
    )
    b[..., 0] = _apply_add(A[..., 0], h0.T, b[..., 0], diag)
    return _from_sm(_solve(A, b, diag), False)


def linear_recurrence_sequential(A: Tensor, b: Tensor, h0: Tensor, *, diag: bool | None = None):
    """Reference loop for :func:`linear_recurrence` (same shapes)."""
    if diag is None:
        diag = A.dim() == b.dim()
    ys, y = [], h0
    for t in range(b.shape[1]):
        y = (A[:, t] * y if diag else torch.matmul(A[:, t], y.unsqueeze(-1)).squeeze(-1)) + b[:, t]
        ys.append(y)
    return torch.stack(ys, dim=1)


def _reverse_scan(J: Tensor, g: Tensor, diag: bool) -> Tensor:
    """State-major adjoint scan lambda_t = g_t + J_{t+1}^T lambda_{t+1}, lambda_T = g_T."""
    # reversed time: position k holds J_{T-k}^T (k >= 1; position 0 is never used)
    A = torch.empty_like(J, memory_format=torch.contiguous_format)
    A[..., 0] = 0
    A[..., 1:] = J[..., 1:].flip(-1) if diag else J[..., 1:].flip(-1).transpose(0, 1)
    return _solve(A, g.flip(-1), diag).flip(-1)


def reverse_linear_recurrence(J: Tensor, g: Tensor, *, diag: bool | None = None) -> Tensor:
    """The adjoint scan lambda_t = g_t + J_{t+1}^T lambda_{t+1}, lambda_T = g_T (paper Sec. 3.3).

    J: (B, T, n, n) or (B, T, n) with J_t = df/dy(y_{t-1}, x_t); g: (B, T, n) = dL/dy_t.
    """
    if diag is None:
        diag = J.dim() == g.dim()
    return _from_sm(_reverse_scan(_to_sm(J, not diag), _to_sm(g, False), diag), False)


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


def _cell_input(cell, xs: Tensor) -> Tensor:
    """xs (B, T, m) in the layout :func:`_value_and_jacobian_sm` passes to the cell: state-major
    (m, B, T) for cells with ``value_and_jacobian_sm``, else unchanged."""
    return xs.permute(2, 0, 1).contiguous() if hasattr(cell, "value_and_jacobian_sm") else xs


def _value_and_jacobian_sm(cell, h: Tensor, x: Tensor, diag: bool) -> tuple[Tensor, Tensor]:
    """f and df/dh state-major: h (n, B, T), x from :func:`_cell_input`; returns (n, B, T) and
    (n, n, B, T) or (n, B, T). Cells without a state-major method go through
    :func:`cell_value_and_jacobian` on (B, T, n) views."""
    if hasattr(cell, "value_and_jacobian_sm"):
        return cell.value_and_jacobian_sm(h, x, diag=diag)
    f, J = cell_value_and_jacobian(cell, _from_sm(h, False), x, diag)
    return _to_sm(f, False), _to_sm(J, not diag)


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


def _diag_adjoint(D: Tensor, g: Tensor, vjp, max_iter: int, atol: float, rtol: float):
    """The adjoint lambda_t = g_t + J_{t+1}^T lambda_{t+1} with only the diagonals D_t of J_t
    stored: lambda <- reverse_scan(D, g + shift((J - D)^T lambda)), where vjp(v)_t = J_t^T v_t
    (all state-major, (n, B, T)).

    The correction couples t to t+1 only, so the error shrinks like quasi-DEER's forward
    iteration (exact after at most T passes); one pass is the plain diagonal adjoint. The
    test is |change| <= atol max|lambda| + rtol |lambda| (atol relative: gradients have any scale).
    """
    lam = _reverse_scan(D, g, True)
    for _ in range(max_iter - 1):
        corr = vjp(lam).addcmul_(D, lam, value=-1)  # (J_t - D_t)^T lambda_t
        rhs = g.clone()
        rhs[..., :-1] += corr[..., 1:]
        new = _reverse_scan(D, rhs, True)
        new = torch.nan_to_num_(new, nan=0.0).clamp_(-CLIP_VALUE, CLIP_VALUE)
        delta = (new - lam).abs_()
        lam = new
        if bool((delta <= atol * float(lam.abs().max()) + rtol * lam.abs()).all()):
            break
    return lam


class _Adjoint(torch.autograd.Function):
    """Identity forward; backward replaces dL/dy by the adjoint lambda (reverse scans).

    Applied to y* + (f(y*_{t-1}, x_t) - f.detach()), autograd then runs the single batched
    VJP of f with lambda: d/dx_t = df/dx^T lambda_t, d/dtheta = sum_t df/dtheta^T lambda_t,
    d/dy_0 = J_1^T lambda_1 (paper Sec. 3.3).

    J is the full Jacobian (n, n, B, T) (one exact scan), or its diagonal (n, B, T): exact
    when n = 1, else refined by VJPs of the cell at (y_prev, x) (:func:`_diag_adjoint`), so
    that nothing of size n^2 per step is ever stored.
    """

    @staticmethod
    def forward(ctx, y, J, y_prev, xs, cell, refine: int, atol: float, rtol: float):
        ctx.save_for_backward(J, y_prev, xs)
        ctx.cell, ctx.refine, ctx.atol, ctx.rtol = cell, refine, atol, rtol
        return y.view_as(y)

    @staticmethod
    def backward(ctx, g):
        J, y_prev, xs = ctx.saved_tensors  # J state-major
        g = _to_sm(g, False).contiguous()
        if J.dim() == g.dim() + 1 or ctx.refine <= 1:
            lam = _reverse_scan(J, g, J.dim() == g.dim())
        else:
            with torch.enable_grad():
                h = y_prev.detach().requires_grad_()
                f = _call_flat(ctx.cell, h, xs.detach())

            def vjp(v):
                v = _from_sm(v, False)
                return _to_sm(torch.autograd.grad(f, h, v, retain_graph=True)[0], False)

            lam = _diag_adjoint(J, g, vjp, ctx.refine, ctx.atol, ctx.rtol)
        return _from_sm(lam, False), *([None] * 7)


def _call_flat(cell, h: Tensor, x: Tensor) -> Tensor:
    """cell over (B, T) leading dims; generic cells (e.g. nn.GRUCell) may accept 2-D only."""
    if hasattr(cell, "value_and_jacobian"):
        return cell(h, x)
    B, T = h.shape[:2]
    return cell(h.reshape(B * T, -1), x.reshape(B * T, *x.shape[2:])).reshape(B, T, -1)


def _shift(y: Tensor, h0: Tensor, out: Tensor | None = None) -> Tensor:
    """(y_0, y_1, ..., y_{T-1}) from y_1..y_T and y_0: the argument of f at each step."""
    if out is None:
        return torch.cat([h0.unsqueeze(1), y[:, :-1]], dim=1)
    out[:, 0] = h0
    out[:, 1:] = y[:, :-1]
    return out


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
    grad_jacobian: str | None = None,
    grad_max_iter: int | None = None,
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
    grad_jacobian: the Jacobian of the adjoint scan in backward (None: as ``jacobian``).
        "full" stores (B, T, n, n); "diag" stores (B, T, n) and refines the diagonal adjoint
        with VJPs of the cell until it meets the tolerances (exact gradients, O(B T n) memory).
    grad_max_iter: cap on those diagonal adjoint passes (None: max_iter); 1 gives the plain
        diagonal adjoint of the quasi-DEER paper (approximate gradients, one scan).
    Returns a :class:`DEERResult` (y (B, T, n), iterations, converged, max_change).
    """
    if jacobian not in ("full", "diag") or grad_jacobian not in (None, "full", "diag"):
        raise ValueError(f"jacobian and grad_jacobian must be 'full' or 'diag', got "
                         f"{jacobian!r}, {grad_jacobian!r}")  # fmt: skip
    unbatched = h0.dim() == 1
    if unbatched:
        h0, xs = h0.unsqueeze(0), xs.unsqueeze(0)
        init = None if init is None else init.unsqueeze(0)
    if xs.shape[0] != h0.shape[0]:
        raise ValueError(f"batch of xs {tuple(xs.shape)} and h0 {tuple(h0.shape)} differ")
    B, T, n = xs.shape[0], xs.shape[1], h0.shape[-1]
    d_atol, d_rtol = default_tolerances(h0.dtype)
    atol, rtol = (d_atol if atol is None else atol), (d_rtol if rtol is None else rtol)
    # with one state the Jacobian *is* its diagonal: the element-wise scan is exact DEER
    diag = jacobian == "diag" or n == 1
    if hasattr(cell, "prepare"):
        xs = cell.prepare(xs)  # with grad: the input projection is part of the graph

    with torch.no_grad():
        h0d, xin = h0.detach().T, _cell_input(cell, xs.detach())  # state-major (n, B), ...
        if init is None:
            y = h0d.unsqueeze(-1).expand(n, B, T).contiguous()
        else:
            y = _to_sm(init.detach(), False).contiguous()
        y_prev = torch.empty_like(y)
        converged, change, it = False, float("inf"), 0
        for it in range(1, max_iter + 1):  # noqa: B007 (returned)
            y_prev[..., 0] = h0d  # (y_0, y_1, ..., y_{T-1}): the argument of f at each step
            y_prev[..., 1:] = y[..., :-1]
            b, J = _value_and_jacobian_sm(cell, y_prev, xin, diag)
            # b_t = f_t - J_t y_{t-1}; at t = 1 the known y_0 folds in: y_1 = f_1 exactly
            if diag:
                b[..., 1:].addcmul_(J[..., 1:], y_prev[..., 1:], value=-1)
            else:
                for k in range(n):
                    b[..., 1:].addcmul_(J[:, k, ..., 1:], y_prev[k, ..., 1:], value=-1)
            y_new = _solve(J, b, diag)
            torch.nan_to_num_(y_new, nan=0.0).clamp_(-CLIP_VALUE, CLIP_VALUE)
            delta = y.sub_(y_new).abs_()  # y is not needed any more: reuse its memory
            change = float(delta.max())
            y = y_new
            if bool((delta <= torch.abs(y_new).mul_(rtol).add_(atol)).all()):
                converged = True
                break
        y = _from_sm(y, False).contiguous()

    if torch.is_grad_enabled():
        y_prev = _shift(y, h0)  # h0 with grad, the rest detached
        f = _call_flat(cell, y_prev, xs)
        if f.requires_grad:
            gdiag = (grad_jacobian or jacobian) == "diag" or n == 1
            refine = 1 if n == 1 else (max_iter if grad_max_iter is None else grad_max_iter)
            with torch.no_grad():
                _, Jg = _value_and_jacobian_sm(cell, _to_sm(y_prev.detach(), False), xin, gdiag)
            y = _Adjoint.apply(y + (f - f.detach()), Jg, y_prev.detach(), xs.detach(), cell,
                               refine, atol, rtol)  # fmt: skip
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
    of K weight matrices. coef: (..., n, K); Ws: (K, n, n) -> (..., n, n).

    For n <= 4 one batched matmul over the rows is fastest on CPU; above, K fused
    multiply-adds over (..., n, n) (measured: 2-6x faster than a broadcast matmul at n >= 8).
    """
    lead, n, K = coef.shape[:-2], coef.shape[-2], coef.shape[-1]
    if n <= 4:
        rows = torch.bmm(coef.reshape(-1, n, K).transpose(0, 1), Ws.transpose(0, 1))
        return rows.transpose(0, 1).reshape(*lead, n, n)  # (n, N, n) -> (..., n, n)
    J = torch.mul(coef[..., 0, None], Ws[0])
    for k in range(1, K):
        J.addcmul_(coef[..., k, None], Ws[k])
    return J


def _linear(v: Tensor, W: Tensor, b: Tensor | None) -> Tensor:
    """v W^T + b over any leading dims (one addmm; a broadcast multiply-add for one input,
    3x faster than a matmul with an inner dimension of 1)."""
    if W.shape[1] == 1:
        return v * W.T if b is None else torch.addcmul(b, v, W.T)
    return torch.nn.functional.linear(v, W, b)


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
        n = h.shape[-1]
        gh = _linear(h, self.weight_hh, self.bias_hh)  # (..., 3n): W_hr h, W_hz h, W_hn h (+ b)
        # one op per gate keeps r, z, c contiguous for the element-wise Jacobian below
        r = torch.sigmoid(gi[..., :n] + gh[..., :n])
        z = torch.sigmoid(gi[..., n : 2 * n] + gh[..., n : 2 * n])
        hn = gh[..., 2 * n :]
        c = torch.tanh(torch.addcmul(gi[..., 2 * n :], r, hn))
        return r, z, c, hn

    def __call__(self, h: Tensor, gi: Tensor) -> Tensor:
        _, z, c, _ = self._gates(h, gi)
        return torch.lerp(c, h, z)  # (1 - z) c + z h in one kernel

    def value_and_jacobian(self, h, gi, diag=False):
        r, z, c, hn = self._gates(h, gi)
        out = torch.lerp(c, h, z)
        Wr, Wz, Wn = self.weight_hh.chunk(3, 0)  # (n, n) each
        # dh'/dh = (1-z) dc/dh + diag(z) + diag((h-c) dz) W_hz with dz = z (1-z), dc = 1 - c^2,
        # dc/dh = diag(dc r) (diag(hn (1-r)) W_hr + W_hn): three row-scaled weight matrices
        a = (1 - z).mul_(1 - c * c).mul_(r)  # coefficient of W_hn: (1-z) dc r
        p = (1 - r).mul_(hn).mul_(a)  # of W_hr: (1-z) dc dr hn
        q = (h - c).mul_(z).mul_(1 - z)  # of W_hz: (h-c) dz
        if diag:
            J = p.mul_(torch.diagonal(Wr)).addcmul_(a, torch.diagonal(Wn))
            return out, J.addcmul_(q, torch.diagonal(Wz)).add_(z)
        J = _rowwise_combination(torch.stack([p, a, q], -1), torch.stack([Wr, Wn, Wz], 0))
        J.diagonal(dim1=-2, dim2=-1).add_(z)
        return out, J

    def value_and_jacobian_sm(self, h, gi, diag=False):
        """State-major :meth:`value_and_jacobian`: h (n, *S), gi (3n, *S) -> f (n, *S) and
        J (n, n, *S) (entry i, j is one plane) or its diagonal (n, *S)."""
        n, S = h.shape[0], h.shape[1:]
        gh = torch.addmm(self.bias_hh[:, None], self.weight_hh, h.reshape(n, -1)) if (
            self.bias_hh is not None) else torch.mm(self.weight_hh, h.reshape(n, -1))  # fmt: skip
        gh = gh.view(3 * n, *S)
        r = torch.sigmoid(gi[:n] + gh[:n])
        z = torch.sigmoid(gi[n : 2 * n] + gh[n : 2 * n])
        hn = gh[2 * n :]
        c = torch.tanh(torch.addcmul(gi[2 * n :], r, hn))
        out = torch.lerp(c, h, z)
        a = (1 - z).mul_(1 - c * c).mul_(r)  # the same coefficients as value_and_jacobian
        p = (1 - r).mul_(hn).mul_(a)
        q = (h - c).mul_(z).mul_(1 - z)
        Ws = [W.reshape(n, n, *([1] * len(S))) for W in self.weight_hh.chunk(3, 0)]  # r, z, n
        if diag:
            Wr, Wz, Wn = (torch.diagonal(W).reshape(n, *([1] * len(S))) for W in
                          self.weight_hh.chunk(3, 0))  # fmt: skip
            return out, p.mul_(Wr).addcmul_(a, Wn).addcmul_(q, Wz).add_(z)
        J = torch.mul(p.unsqueeze(1), Ws[0])
        J.addcmul_(a.unsqueeze(1), Ws[2]).addcmul_(q.unsqueeze(1), Ws[1])
        J.diagonal(dim1=0, dim2=1).add_(z.movedim(0, -1))
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

    def value_and_jacobian_sm(self, h, gi, diag=False):
        """State-major :meth:`value_and_jacobian`: h (n, *S), gi (n, *S)."""
        n, S = h.shape[0], h.shape[1:]
        one = [1] * len(S)
        pre = gi + torch.mm(self.weight_hh, h.reshape(n, -1)).view(n, *S)
        out = torch.tanh(pre if self.bias_hh is None else pre.add_(self.bias_hh.view(n, *one)))
        d = 1 - out * out
        if diag:
            return out, d.mul_(torch.diagonal(self.weight_hh).view(n, *one))
        return out, d.unsqueeze(1) * self.weight_hh.view(n, n, *one)

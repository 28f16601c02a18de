"""DEER for ordinary differential equations (paper Sec. 3.2; official deer/fsolve_ivp.py).

dy/dt = f(y, x(t)) is linearised around the current guess on the time grid,
dy/dt = G_i y + z_i with G_i = df/dy(y_i, x_i), z_i = f(y_i, x_i) - G_i y_i, and the linear
ODE is integrated exactly over each interval with the mid-point values
G = (G_i + G_{i+1}) / 2, z = (z_i + z_{i+1}) / 2 (as the official code):

    y_{i+1} = exp(G dt) y_i + phi_1(G dt) z dt,   phi_1(M) = M^{-1}(exp(M) - I)

which is again y_{i+1} = A_i y_i + b_i, solved by the same parallel scan.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .deer import CLIP_VALUE, DEERResult, default_tolerances, linear_recurrence

Tensor = torch.Tensor


def _expm_affine(G: Tensor, z: Tensor, dt: Tensor) -> tuple[Tensor, Tensor]:
    """exp(G dt) and phi_1(G dt) z dt from one matrix exponential of the augmented
    [[G dt, z dt], [0, 0]] (no inverse of G needed, exact also for singular G)."""
    n = G.shape[-1]
    M = G.new_zeros(*G.shape[:-2], n + 1, n + 1)
    M[..., :n, :n] = G * dt[..., None, None]
    M[..., :n, n] = z * dt[..., None]
    E = torch.linalg.matrix_exp(M)
    return E[..., :n, :n], E[..., :n, n]


def _value_and_jac(func, y: Tensor, x: Tensor | None):
    lead, n = y.shape[:-1], y.shape[-1]
    yf = y.reshape(-1, n)

    def f_aux(yi, *xi):
        out = func(yi, *xi)
        return out, out

    args = (yf,) if x is None else (yf, x.reshape(yf.shape[0], *x.shape[len(lead) :]))
    jac, val = torch.func.vmap(torch.func.jacfwd(f_aux, argnums=0, has_aux=True))(*args)
    return val.reshape(*lead, n), jac.reshape(*lead, n, n)


def deer_ode(
    func: Callable[..., Tensor],
    y0: Tensor,
    ts: Tensor,
    xs: Tensor | None = None,
    *,
    atol: float | None = None,
    rtol: float | None = None,
    max_iter: int = 100,
    init: Tensor | None = None,
) -> DEERResult:
    """Solve dy/dt = func(y[, x]) on the grid ts with y(ts[0]) = y0, in parallel over time.

    func: f(y (n,)[, x (m,)]) -> (n,) for one point (it is vmapped); y0: (B, n) or (n,);
    ts: (N,) increasing; xs: optional (B, N, m) inputs sampled on ts.
    Returns a DEERResult with y (B, N, n) including y0 at ts[0].
    """
    unbatched = y0.dim() == 1
    if unbatched:
        y0 = y0.unsqueeze(0)
        xs = None if xs is None else xs.unsqueeze(0)
        init = None if init is None else init.unsqueeze(0)
    B, n, N = y0.shape[0], y0.shape[-1], ts.shape[0]
    d_atol, d_rtol = default_tolerances(y0.dtype)
    atol, rtol = (d_atol if atol is None else atol), (d_rtol if rtol is None else rtol)
    dt = (ts[1:] - ts[:-1]).to(y0.dtype).expand(B, N - 1)
    y = y0.unsqueeze(1).expand(B, N, n).clone() if init is None else init.clone()
    converged, change, it = False, float("inf"), 0
    for it in range(1, max_iter + 1):  # noqa: B007 (returned)
        f, G = _value_and_jac(func, y, xs)
        z = f - (G @ y.unsqueeze(-1)).squeeze(-1)
        A, b = _expm_affine(0.5 * (G[:, 1:] + G[:, :-1]), 0.5 * (z[:, 1:] + z[:, :-1]), dt)
        y_new = torch.cat([y0.unsqueeze(1), linear_recurrence(A, b, y0)], 1)
        y_new = torch.nan_to_num(y_new, nan=0.0).clamp(-CLIP_VALUE, CLIP_VALUE)
        delta = (y_new - y).abs()
        change = float(delta.max())
        y = y_new
        if bool((delta <= atol + rtol * y_new.abs()).all()):
            converged = True
            break
    return DEERResult(y.squeeze(0) if unbatched else y, it, converged, change)

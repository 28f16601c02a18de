"""The losses of the experiment, batched over parameter points and examples, in float64.

``problem.losses(W, X, y)``: parameter points ``W (..., Q, d)``, examples ``X (..., b, p)``,
labels ``y (..., b)`` -> per-example losses ``(..., Q, b)``. Leading dimensions are runs (the
coupled pairs of the stability harness), so one call serves every run and every query point.

- least squares (convex):  f(w; x, y) = (x.w - y)^2 / 2;  Hessian x x^T, beta = max ||x||^2
- logistic + ridge (strongly convex for lam > 0, convex for lam = 0), labels +-1:
  f(w; x, y) = log(1 + exp(-y x.w)) + lam/2 ||w||^2;  beta = max ||x||^2 / 4 + lam, alpha = lam
- tanh MLP (non-convex), one hidden layer of h units, labels +-1:
  f(theta; x, y) = log(1 + exp(-y s)),  s = w2 . tanh(W1 x + b1) + b2,
  theta = [W1 (h x p), b1 (h), w2 (h), b2 (1)]; beta has no closed form: the per-example
  Hessians are computed exactly at checkpoints of the trajectory (``hessian_spectra``: their
  spectral norms, and the Frobenius norms, an upper estimate of them); ``hessian_norms``
  (power iteration, a lower estimate) sets the step size at the start.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

CONVEXITY = ("convex", "strongly-convex", "nonconvex")


@dataclass(frozen=True)
class Problem:
    name: str
    """least-squares, logistic or mlp."""
    lam: float = 0.0
    """Ridge penalty inside every example's loss (its strong-convexity constant alpha)."""
    hidden: int = 0
    """Hidden units (mlp only)."""

    def __post_init__(self):
        if self.name not in ("least-squares", "logistic", "mlp"):
            raise ValueError(f"unknown problem {self.name!r}")
        if self.lam < 0:
            raise ValueError("lam must be >= 0")
        if self.name == "mlp" and self.hidden < 1:
            raise ValueError("the mlp needs hidden >= 1")

    @property
    def convexity(self) -> str:
        if self.name == "mlp":
            return "nonconvex"
        return "strongly-convex" if self.lam > 0 else "convex"

    @property
    def alpha(self) -> float:
        """Strong-convexity constant of every example's loss (0 unless ridge)."""
        return self.lam if self.name != "mlp" else 0.0

    def dim(self, p: int) -> int:
        """Parameters for p input features."""
        return self.hidden * (p + 2) + 1 if self.name == "mlp" else p

    def beta(self, X: torch.Tensor) -> float | None:
        """sup_i ||Hessian of f_i|| over the examples X (..., n, p); None for the MLP."""
        sq = float((X**2).sum(-1).max())
        if self.name == "least-squares":
            return sq
        if self.name == "logistic":
            return sq / 4 + self.lam
        return None

    def init(self, p: int, generator: torch.Generator) -> torch.Tensor:
        """The starting point (d,), shared by both runs of a coupled pair: zero for the linear
        models, PyTorch's default uniform(+-1/sqrt(fan_in)) layer init for the MLP."""
        d = self.dim(p)
        if self.name != "mlp":
            return torch.zeros(d, dtype=torch.float64)
        h = self.hidden
        a, b = 1 / p**0.5, 1 / h**0.5
        scale = torch.cat([torch.full((h * p + h,), a), torch.full((h + 1,), b)]).double()
        return (2 * torch.rand(d, generator=generator, dtype=torch.float64) - 1) * scale

    def losses(self, W: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if self.name == "mlp":
            return self._mlp(W, X, y)
        z = torch.einsum("...qd,...bd->...qb", W, X)  # (..., Q, b)
        if self.name == "least-squares":
            return 0.5 * (z - y.unsqueeze(-2)) ** 2
        out = F.softplus(-y.unsqueeze(-2) * z)
        if self.lam:
            out = out + 0.5 * self.lam * (W**2).sum(-1, keepdim=True)
        return out

    def _mlp(self, W, X, y):
        h, p = self.hidden, X.shape[-1]
        W1 = W[..., : h * p].unflatten(-1, (h, p))  # (..., Q, h, p)
        b1 = W[..., h * p : h * p + h]  # (..., Q, h)
        w2 = W[..., h * p + h : h * p + 2 * h]  # (..., Q, h)
        b2 = W[..., -1:]  # (..., Q, 1)
        pre = torch.einsum("...qhp,...bp->...qbh", W1, X)  # (..., Q, b, h)
        z = torch.tanh(pre + b1.unsqueeze(-2))
        s = (z * w2.unsqueeze(-2)).sum(-1) + b2  # (..., Q, b)
        return F.softplus(-y.unsqueeze(-2) * s)

    def mean_loss(self, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Empirical risk of ``w (..., d)`` on ``X (..., n, p)`` -> ``(...)``."""
        return self.losses(w.unsqueeze(-2), X, y).mean(-1).squeeze(-1)


def _per_example(problem: Problem, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor):
    """One copy of w per example, so that autograd through the summed loss gives every
    example's own gradient: copies (..., n, 1, d) and the summed loss."""
    Wc = w.unsqueeze(-2).unsqueeze(-2).expand(*X.shape[:-1], 1, w.shape[-1]).clone()
    Wc.requires_grad_(True)
    total = problem.losses(Wc, X.unsqueeze(-2), y.unsqueeze(-1)).sum()
    return Wc, total


def per_example_grads(problem: Problem, w, X, y) -> torch.Tensor:
    """Gradients of every example's loss: ``w (..., d)``, ``X (..., n, p)`` -> ``(..., n, d)``."""
    with torch.enable_grad():
        Wc, total = _per_example(problem, w.detach(), X, y)
        (g,) = torch.autograd.grad(total, Wc)
    return g.squeeze(-2)


def hessian_norms(problem: Problem, w, X, y, iters: int = 30, generator=None) -> torch.Tensor:
    """||Hessian of f_i at w|| for every example by power iteration on Hessian-vector products
    (``iters`` steps from a random start): ``(..., n)``. A lower estimate of the true norm."""
    with torch.enable_grad():
        Wc, total = _per_example(problem, w.detach(), X, y)
        (g,) = torch.autograd.grad(total, Wc, create_graph=True)
        v = torch.randn(Wc.shape, generator=generator, dtype=Wc.dtype).to(Wc.device)
        lam = torch.zeros(Wc.shape[:-1], dtype=Wc.dtype, device=Wc.device)
        for _ in range(iters):
            v = v / v.norm(dim=-1, keepdim=True).clamp_min(1e-300)
            (hv,) = torch.autograd.grad((g * v).sum(), Wc, retain_graph=True)
            lam = hv.norm(dim=-1)
            v = hv
    return lam.squeeze(-1).detach()


def mlp_hessians(
    problem: Problem, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor
) -> torch.Tensor:
    """Exact per-example Hessians of the MLP's loss in closed form: ``w (..., d)``, ``X (..., n,
    p)``, ``y (..., n)`` -> ``(..., n, d, d)``. With s the output, f = softplus(-y s):
    H = f''(s) grad s grad s^T + f'(s) Hess s, f' = -y sigmoid(-y s), f'' = sigmoid(s)
    sigmoid(-s); Hess s has, per hidden unit j (x~ = [x, 1] its inputs and bias), the block
    w2_j tanh''(a_j) x~ x~^T and the cross term tanh'(a_j) x~ with w2_j."""
    h, p = problem.hidden, X.shape[-1]
    W1 = w[..., : h * p].unflatten(-1, (h, p))  # (..., h, p)
    b1, w2 = w[..., h * p : h * p + h], w[..., h * p + h : h * p + 2 * h]  # (..., h)
    a = torch.einsum("...hp,...np->...nh", W1, X) + b1.unsqueeze(-2)  # (..., n, h)
    z = torch.tanh(a)
    z1 = 1 - z**2  # tanh'
    z2 = -2 * z * z1  # tanh''
    s = (z * w2.unsqueeze(-2)).sum(-1) + w[..., -1:]  # (..., n)
    g1 = -y * torch.sigmoid(-y * s)
    g2 = torch.sigmoid(s) * torch.sigmoid(-s)
    xt = torch.cat([X, torch.ones_like(X[..., :1])], -1)  # (..., n, p + 1)
    u = (w2.unsqueeze(-2) * z1).unsqueeze(-1) * xt.unsqueeze(
        -2
    )  # d s / d(W1_j, b1_j): (..., n, h, p+1)
    grad = torch.cat([u[..., :p].flatten(-2), u[..., p], z, torch.ones_like(s).unsqueeze(-1)], -1)
    H = g2[..., None, None] * grad.unsqueeze(-1) * grad.unsqueeze(-2)  # (..., n, d, d)
    # parameter index of W1[j, i] is j p + i, of b1[j] h p + j, of w2[j] h p + h + j
    j = torch.arange(h, device=X.device)
    idx = torch.cat(
        [(j[:, None] * p + torch.arange(p, device=X.device)).T, (h * p + j)[None]]
    )  # (p + 1, h)
    blk = (g1.unsqueeze(-1) * w2.unsqueeze(-2) * z2).unsqueeze(-1).unsqueeze(-1) * (
        xt.unsqueeze(-1) * xt.unsqueeze(-2)
    ).unsqueeze(-3)  # (..., n, h, p+1, p+1)
    cross = (g1.unsqueeze(-1) * z1).unsqueeze(-1) * xt.unsqueeze(-2)  # (..., n, h, p+1)
    for jj in range(h):
        rows = idx[:, jj]
        H[..., rows[:, None], rows[None, :]] += blk[..., jj, :, :]
        col = h * p + h + jj
        H[..., rows, col] += cross[..., jj, :]
        H[..., col, rows] += cross[..., jj, :]
    return H


def hessian_spectra(problem: Problem, w: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
                    chunk: int = 8) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Exact per-example Hessians of the MLP (``mlp_hessians``) at ``w (R, d)`` on ``X (R, n,
    p)``, ``y (R, n)``, ``chunk`` runs at a time: their spectral norms (largest |eigenvalue|)
    and their Frobenius norms (>= the spectral norm: an upper estimate of it), each ``(R, n)``;
    NaN where a run overflowed."""
    spec, frob = [], []
    for i in range(0, w.shape[0], chunk):
        H = mlp_hessians(problem, w[i : i + chunk].detach(), X[i : i + chunk], y[i : i + chunk])
        ok = torch.isfinite(H).all(-1).all(-1)  # an overflowed run: NaN, not an eigh error
        H = torch.where(ok[..., None, None], H, torch.zeros_like(H))
        nan = torch.full_like(ok, float("nan"), dtype=H.dtype)
        spec.append(torch.where(ok, torch.linalg.eigvalsh(H).abs().amax(-1), nan))
        frob.append(torch.where(ok, torch.linalg.matrix_norm(H), nan))
    return torch.cat(spec), torch.cat(frob)

"""Statistical shape model of correspondence points and the ShapeWorks evaluation metrics.

Given S shapes of M ordered points, the SSM is PCA of the flattened (S, 3M) matrix. The
metrics follow ShapeWorks (and Sec. 4 of the paper):

    compactness(m)    = sum_{k<=m} lambda_k / sum_k lambda_k
    generalization(m) = mean_s  d(x_s, recon_m(x_s | PCA fitted without s))   (leave-one-out)
    specificity(m)    = mean_j  min_s d(sample_j, x_s),  sample_j ~ N(mean, sum_{k<=m} lambda_k v_k v_k^T)

with d the mean Euclidean distance between corresponding points. Surface accuracy is the
point-to-surface distance to the true mesh, from open3d's RaycastingScene.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from iclr24_common import pyplot

from .data import open3d


def _flat(points) -> np.ndarray:
    x = np.asarray(points, dtype=np.float64)
    if x.ndim != 3 or x.shape[-1] != 3:
        raise ValueError(f"expected correspondences of shape (S, M, 3), got {x.shape}")
    return x.reshape(len(x), -1)


def _point_dist(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Mean Euclidean distance between corresponding points of flattened shapes (..., 3M)."""
    d = (a - b).reshape(*np.broadcast_shapes(a.shape, b.shape)[:-1], -1, 3)
    return np.linalg.norm(d, axis=-1).mean(-1)


def pca(centred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """PCA of centred shapes, batched over leading axes. (..., S, D) -> variances (..., S),
    components (..., S, D), largest first. Uses the S x S Gram matrix (S << D = 3M), which is
    much faster than an SVD of the S x D matrix; modes of zero variance come out as zeros."""
    gram = centred @ np.swapaxes(centred, -1, -2)  # (..., S, S)
    eig, u = np.linalg.eigh(gram)
    eig, u = eig[..., ::-1].clip(min=0), u[..., ::-1]
    tol = eig[..., :1] * 1e-10 + 1e-300
    inv = np.where(eig > tol, 1 / np.sqrt(np.maximum(eig, tol)), 0.0)
    comps = (np.swapaxes(u, -1, -2) @ centred) * inv[..., None]  # (..., S, D) orthonormal rows
    return eig / (centred.shape[-2] - 1), comps


class ShapeModel:
    """PCA shape model. ``ShapeModel().fit(y)`` with y: (S, M, 3) correspondence points."""

    def fit(self, points) -> ShapeModel:
        x = _flat(points)
        if len(x) < 2:
            raise ValueError("a shape model needs at least 2 shapes")
        self.n_points = x.shape[1] // 3
        self.train = x  # (S, 3M)
        self.mean = x.mean(0)  # (3M,)
        self.variances, self.components = pca(x - self.mean)  # (S,), (S, 3M)
        return self

    @property
    def mean_shape(self) -> np.ndarray:
        return self.mean.reshape(-1, 3)  # (M, 3)

    def compactness(self, max_modes: int | None = None) -> np.ndarray:
        """Cumulative explained variance for m = 1..max_modes, (max_modes,)."""
        ratio = np.cumsum(self.variances) / max(self.variances.sum(), 1e-300)
        return ratio[:max_modes]

    def modes_needed(self, fraction: float = 0.99) -> int:
        """Fewest modes explaining ``fraction`` of the variance."""
        return int(np.searchsorted(self.compactness(), fraction - 1e-12) + 1)

    def scores(self, points) -> np.ndarray:
        """PCA coordinates of shapes, (S, K)."""
        return (_flat(points) - self.mean) @ self.components.T

    def sample(self, n: int, n_modes: int | None = None, rng=None) -> np.ndarray:
        """n shapes drawn from the Gaussian model restricted to the first n_modes, (n, M, 3)."""
        rng = np.random.default_rng(rng)
        k = n_modes or len(self.variances)
        z = rng.standard_normal((n, k)) * np.sqrt(self.variances[:k])
        return (self.mean + z @ self.components[:k]).reshape(n, -1, 3)

    def mode_shapes(self, mode: int, sigmas=(-2.0, 0.0, 2.0)) -> np.ndarray:
        """mean + s * sqrt(lambda_mode) * v_mode for each s, (len(sigmas), M, 3). mode is 0-based."""
        sd = np.sqrt(self.variances[mode])
        return np.stack([self.mean + s * sd * self.components[mode] for s in sigmas]).reshape(
            len(sigmas), -1, 3
        )

    def export_modes(self, out_dir, n_modes: int = 3, sigmas=(-2.0, 0.0, 2.0)) -> list[Path]:
        """Write mode_<k>_<+/-s>sd.ply point clouds (open3d); returns the paths."""
        o3d = open3d()
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for k in range(min(n_modes, len(self.variances))):
            for s, pts in zip(sigmas, self.mode_shapes(k, sigmas), strict=True):
                pc = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(pts))
                path = out / f"mode_{k + 1}_{s:+.1f}sd.ply"
                if not o3d.io.write_point_cloud(str(path), pc):
                    raise OSError(f"open3d could not write {path}")
                paths.append(path)
        return paths

    def figure(self, n_modes: int = 3, sigmas=(-2.0, 0.0, 2.0), title: str = ""):
        """A matplotlib figure: rows = modes, columns = mean + s sd (x-z projection, coloured
        by displacement from the mean)."""
        plt = pyplot()
        n_modes = min(n_modes, len(self.variances))
        fig, axes = plt.subplots(n_modes, len(sigmas), figsize=(2.4 * len(sigmas), 2.6 * n_modes))
        axes = np.atleast_2d(axes)
        mean = self.mean_shape
        for k in range(n_modes):
            for j, (s, pts) in enumerate(zip(sigmas, self.mode_shapes(k, sigmas), strict=True)):
                ax = axes[k, j]
                disp = np.linalg.norm(pts - mean, axis=1)
                ax.scatter(pts[:, 0], pts[:, 2], c=disp, s=4, cmap="viridis")
                ax.set_aspect("equal")
                ax.set_xticks([])
                ax.set_yticks([])
                ax.set_title(f"mode {k + 1}, {s:+.0f} sd", fontsize=8)
        if title:
            fig.suptitle(title, fontsize=9)
        fig.tight_layout()
        return fig


# ----------------------------------------------------------------------------- metrics


def compactness(points, max_modes: int = 10) -> np.ndarray:
    """Cumulative variance ratio for m = 1..max_modes, (max_modes,)."""
    return ShapeModel().fit(points).compactness(max_modes)


def generalization(points, max_modes: int = 10) -> np.ndarray:
    """Leave-one-out reconstruction error for m = 1..max_modes, (max_modes,). All S
    leave-one-out PCAs are one batched eigendecomposition."""
    x = _flat(points)
    s = len(x)
    if s < 3:
        raise ValueError("generalization needs at least 3 shapes")
    others = np.array([[j for j in range(s) if j != i] for i in range(s)])  # (S, S-1)
    train = x[others]  # (S, S-1, D)
    mean = train.mean(1)  # (S, D)
    _, vt = pca(train - mean[:, None])  # (S, S-1, D): S leave-one-out PCAs
    coef = np.einsum("skd,sd->sk", vt, x - mean)  # (S, S-1)
    errs, recon = [], mean.copy()
    for m in range(min(max_modes, vt.shape[1])):
        recon = recon + coef[:, m, None] * vt[:, m]
        errs.append(_point_dist(recon, x).mean())
    return np.asarray(errs)


def specificity(points, max_modes: int = 10, n_samples: int = 200, rng=0) -> np.ndarray:
    """Mean distance from model samples to their nearest training shape, (max_modes,)."""
    model = ShapeModel().fit(points)
    rng = np.random.default_rng(rng)
    z = rng.standard_normal((n_samples, len(model.variances))) * np.sqrt(model.variances)
    out = []
    for m in range(1, min(max_modes, len(model.variances)) + 1):
        samples = model.mean + z[:, :m] @ model.components[:m]  # (n, D)
        d = _point_dist(samples[:, None], model.train[None])  # (n, S)
        out.append(d.min(1).mean())
    return np.asarray(out)


def mode_r2(points, true_values, mode: int = 0) -> float:
    """R^2 between a PCA mode's scores and a known per-shape variable (squared correlation)."""
    sc = ShapeModel().fit(points).scores(points)[:, mode]
    r = np.corrcoef(sc, np.asarray(true_values, dtype=float))[0, 1]
    return float(r**2)


def mode_recovery(points, true_coeffs, n_modes: int | None = None) -> np.ndarray:
    """How well the shape model's leading modes span the population's known modes: for each
    known coefficient k, the R^2 of its least-squares fit on the scores of the first
    ``n_modes`` PCA modes (default: as many as there are known modes). Invariant to rotations
    and sign flips within that subspace, so modes of similar variance may mix. (K,)"""
    c = np.asarray(true_coeffs, dtype=float)
    k = n_modes or c.shape[1]
    sc = ShapeModel().fit(points).scores(points)[:, :k]
    design = np.column_stack([np.ones(len(sc)), sc])
    fit, *_ = np.linalg.lstsq(design, c, rcond=None)
    resid = ((c - design @ fit) ** 2).sum(0)
    return 1 - resid / ((c - c.mean(0)) ** 2).sum(0)


def point_to_surface(points, vertices, triangles) -> np.ndarray:
    """Mean unsigned distance from each shape's points to its mesh, (S,).

    points: (S, M, 3); vertices: (S, V, 3) or a list of (V_s, 3); triangles: (T, 3) shared or a
    list of (T_s, 3). One open3d RaycastingScene per mesh, vectorised over points."""
    pts = np.asarray(points, dtype=np.float32)
    shared = not isinstance(triangles, list)
    o3d = open3d()
    out = np.empty(len(pts))
    for s in range(len(pts)):  # one scene per mesh; the distance query is batched
        tri = triangles if shared else triangles[s]
        scene = o3d.t.geometry.RaycastingScene()
        scene.add_triangles(
            o3d.core.Tensor(np.asarray(vertices[s], dtype=np.float32)),
            o3d.core.Tensor(np.asarray(tri, dtype=np.uint32)),
        )
        out[s] = scene.compute_distance(o3d.core.Tensor(pts[s])).numpy().mean()
    return out

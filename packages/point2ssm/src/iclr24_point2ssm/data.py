"""Data: a generated anatomy-like population with known modes, the paper's input
perturbations, and the mesh-folder loader of the `paper` preset.

Generated population (default). A template ellipsoid mesh (open3d) is deformed by four known
displacement fields with decreasing variance,

    v_s = v + sum_i a_si f_i(v),   a_si ~ N(0, sigma_i^2) (clipped at 3 sigma)

    f_1 elongation (0, 0, z)     f_2 bending (z^2, 0, 0)     f_3 taper (x z, y z, 0)
    f_4 local indentation  -n(v) exp(-|v - c|^2 / (2 w^2)), c on the +y flank

Coefficients are whitened within each split (sample covariance = diag(sigma^2)), so every
shape is exactly linear in four coefficients: the vertex order is a ground-truth
correspondence and the ground-truth shape space has four modes (elongation first).

Perturbations follow the official dataset.py: partial input drops the X% of surface points
nearest to a random seed point, then N points are drawn, then Gaussian noise is added; sparse
input is a small N. Coordinates are divided by the training set's max |coordinate| (official).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from iclr24_common import MissingDataError, MissingDependencyError

MESH_SUFFIXES = (".vtk", ".ply", ".obj", ".stl", ".off")


def open3d():
    """The open3d module, imported when a mesh function first needs it, so that
    ``import iclr24_point2ssm`` works without it. A missing open3d, or a missing system
    library under it (libusb-1.0 on a bare Linux), is a :class:`MissingDependencyError`
    whose one line names the fix."""
    try:
        import open3d as o3d
    except (ImportError, OSError) as e:  # a missing module, or a shared library it loads
        why = (str(e).strip().splitlines() or [type(e).__name__])[0]
        if "libusb" in why:
            raise MissingDependencyError(
                f"open3d cannot load the system library libusb-1.0 ({why}); install it with: "
                "sudo apt-get install libusb-1.0-0"
            ) from None
        if isinstance(e, ModuleNotFoundError) and (e.name or "").split(".")[0] == "open3d":
            raise MissingDependencyError(
                "open3d is not installed; install it with: pip install open3d-cpu"
            ) from None
        raise MissingDependencyError(
            f"open3d failed to import ({why}); reinstall it with: "
            "pip install --force-reinstall open3d-cpu"
        ) from None
    return o3d


@dataclass
class PopulationConfig:
    """The generated population."""

    n_train: int = 40
    """Training shapes (the official spleen set has 40 meshes in all)."""
    n_test: int = 40
    """Test shapes on which the shape model is evaluated."""
    n_val: int = 0
    """Validation shapes (model selection), placed between the train and test shapes."""
    radii: tuple[float, float, float] = (0.5, 0.35, 1.0)
    """Template ellipsoid semi-axes (x, y, z): elongated, organ-like."""
    resolution: int = 16
    """open3d sphere resolution of the template (16 -> 482 vertices, 960 triangles)."""
    variance_shares: tuple[float, ...] = (0.64, 0.2, 0.1, 0.06)
    """Share of the total vertex variance carried by each known mode (decreasing)."""
    elongation_sd: float = 0.12
    """Standard deviation of the elongation coefficient; sets the overall variance."""
    indent_width: float = 0.3
    """Width w of the local indentation bump."""
    pool_points: int = 2048
    """Uniform surface samples kept per shape, from which inputs are drawn."""
    gt_points: int = 512
    """Surface points per shape used as the Chamfer target."""


@dataclass
class Population:
    """Meshes (shared triangles), ground truth and surface samples, in normalised units."""

    vertices: np.ndarray  # (S, V, 3) ground-truth correspondences
    triangles: np.ndarray  # (T, 3)
    coeffs: np.ndarray  # (S, K) true mode coefficients
    pool: np.ndarray  # (S, P, 3) uniform surface samples
    gt: np.ndarray  # (S, G, 3) Chamfer targets
    scale: float  # the training set's max |coordinate| that was divided out
    names: list[str] = field(default_factory=list)

    def subset(self, idx) -> Population:
        idx = np.asarray(idx)
        pick = lambda a: [a[i] for i in idx] if isinstance(a, list) else a[idx]  # noqa: E731
        return Population(
            pick(self.vertices),  # meshes of different sizes are lists
            pick(self.triangles) if isinstance(self.triangles, list) else self.triangles,
            self.coeffs[idx] if len(self.coeffs) else self.coeffs,
            self.pool[idx],
            self.gt[idx],
            self.scale,
            [self.names[i] for i in idx] if self.names else [],
        )

    def __len__(self) -> int:
        return len(self.pool)


def mode_fields(cfg: PopulationConfig):
    """Template mesh (open3d TriangleMesh) and the four displacement fields, (K=4, V, 3),
    before scaling by sigma."""
    o3d = open3d()
    mesh = o3d.geometry.TriangleMesh.create_sphere(radius=1.0, resolution=cfg.resolution)
    v = np.asarray(mesh.vertices) * np.asarray(cfg.radii)
    mesh.vertices = o3d.utility.Vector3dVector(v)
    mesh.compute_vertex_normals()
    n = np.asarray(mesh.vertex_normals)
    x, y, z = v.T
    zero = np.zeros_like(x)
    centre = np.array([0.0, cfg.radii[1], 0.0])  # indentation on the +y flank, at the equator
    bump = np.exp(-((v - centre) ** 2).sum(1) / (2 * cfg.indent_width**2))
    fields = np.stack(
        [
            np.stack([zero, zero, z], 1),  # elongation
            np.stack([z**2, zero, zero], 1),  # bending
            np.stack([x * z, y * z, zero], 1),  # taper
            -n * bump[:, None],  # local indentation
        ]
    )
    return mesh, fields


def mode_sds(cfg: PopulationConfig, fields: np.ndarray) -> np.ndarray:
    """Per-mode coefficient sds giving each mode its share of the total vertex variance."""
    power = (fields**2).sum(axis=(1, 2))  # vertex variance per unit coefficient variance
    shares = np.asarray(cfg.variance_shares[: len(fields)], dtype=float)
    total = cfg.elongation_sd**2 * power[0] / shares[0]
    return np.sqrt(shares * total / power)


def _whiten(z: np.ndarray) -> np.ndarray:
    """Rows with zero mean and identity sample covariance (ddof=1)."""
    z = z - z.mean(0)
    chol = np.linalg.cholesky(z.T @ z / (len(z) - 1))
    return z @ np.linalg.inv(chol).T


def sample_surface(vertices: np.ndarray, triangles: np.ndarray, n: int, seed: int) -> np.ndarray:
    """n uniform samples on each mesh of a batch sharing one triangle list. (S, V, 3) -> (S, n, 3)."""
    o3d = open3d()
    o3d.utility.random.seed(int(seed))
    tri = o3d.utility.Vector3iVector(triangles.astype(np.int32))
    out = np.empty((len(vertices), n, 3))
    for s, v in enumerate(vertices):  # one open3d call per mesh
        mesh = o3d.geometry.TriangleMesh(o3d.utility.Vector3dVector(v), tri)
        out[s] = np.asarray(mesh.sample_points_uniformly(number_of_points=n).points)
    return out


def make_population(cfg: PopulationConfig | None = None, seed: int = 0) -> Population:
    """The generated population: train shapes first, then validation, then test shapes."""
    cfg = cfg or PopulationConfig()
    rng = np.random.default_rng(seed)
    mesh, fields = mode_fields(cfg)
    sds = mode_sds(cfg, fields)
    sizes = [n for n in (cfg.n_train, cfg.n_val, cfg.n_test) if n]
    s = sum(sizes)
    # standardised per split so each split's sample covariance is exactly diag(sds^2): the
    # known modes are then exactly the PCA modes of the true correspondences
    z = np.concatenate([_whiten(rng.standard_normal((n, len(fields)))) for n in sizes])
    coeffs = np.clip(z, -3.0, 3.0) * sds  # (S, K); the clip (rarely active) avoids fold-overs
    verts = np.asarray(mesh.vertices)[None] + np.einsum("sk,kvd->svd", coeffs, fields)
    scale = float(np.abs(verts[: cfg.n_train]).max())  # official: max |coord| of train set
    verts = verts / scale
    tris = np.asarray(mesh.triangles)
    pool = sample_surface(verts, tris, cfg.pool_points, seed)
    gt = pool[:, rng.permutation(cfg.pool_points)[: cfg.gt_points]]
    names = [f"shape_{i:03d}" for i in range(s)]
    return Population(verts, tris, coeffs, pool, gt, scale, names)


# ----------------------------------------------------------------------------- perturbations


@dataclass
class Perturbation:
    """How input clouds are drawn from the surface samples (official dataset.py)."""

    num_points: int = 1024
    """N input points (official num_input_points 1024; smaller = sparse input)."""
    noise: float = 0.0
    """Gaussian noise sd, in normalised units (official noise_level is in mesh units)."""
    missing: float = 0.0
    """Fraction of points nearest a random seed point that are removed (official 0.05-0.2)."""


def draw_inputs(
    pool: torch.Tensor, pert: Perturbation, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Input clouds for a batch of shapes. pool: (S, P, 3) -> (S, N, 3). Vectorised."""
    s, p, _ = pool.shape
    if pert.missing > 0:
        seed = torch.randint(p, (s,), generator=generator)
        d = (pool - pool[torch.arange(s), seed][:, None]).norm(dim=-1)  # (S, P)
        keep = d.argsort(dim=1)[:, int(p * pert.missing) :]  # drop the nearest X%
        pool = torch.gather(pool, 1, keep[..., None].expand(-1, -1, 3))
    avail = pool.shape[1]
    if pert.num_points <= avail:
        choice = torch.rand(s, avail, generator=generator).argsort(dim=1)[:, : pert.num_points]
    else:  # official: sample with replacement when too few points are left
        choice = torch.randint(avail, (s, pert.num_points), generator=generator)
    x = torch.gather(pool, 1, choice[..., None].expand(-1, -1, 3))
    if pert.noise > 0:
        x = x + pert.noise * torch.randn(x.shape, generator=generator, dtype=x.dtype)
    return x


# ----------------------------------------------------------------------------- mesh loader


def read_vtk_polydata(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Points and triangles of a legacy VTK POLYDATA file (ASCII or BINARY), the format of the
    official spleen meshes; open3d does not read .vtk. Polygons are fan-triangulated."""
    raw = Path(path).read_bytes()
    lines = raw.split(b"\n", 4)  # version, title, ASCII|BINARY, DATASET POLYDATA, body
    if len(lines) < 5 or b"POLYDATA" not in lines[3].upper():
        raise ValueError(f"{path}: not a legacy VTK POLYDATA file")
    fmt, rest = lines[2].strip().upper(), lines[4]
    points = tris = None
    while rest.strip():
        line, _, rest = rest.lstrip().partition(b"\n")
        tok = line.split()
        if not tok:
            continue
        key = tok[0].upper()
        if key == b"POINTS":
            n, dtype = int(tok[1]), tok[2].decode().lower()
            points, rest = _read_block(rest, 3 * n, "float" if dtype == "float" else "double", fmt)
            points = points.reshape(n, 3)
        elif key == b"POLYGONS" and len(tok) == 3:
            n_a, n_b = int(tok[1]), int(tok[2])
            nxt = rest.lstrip().split(maxsplit=2)
            if nxt and nxt[0].upper() == b"OFFSETS":  # VTK >= 5.1: offsets + connectivity
                kind = "int64" if b"64" in nxt[1] else "int"
                rest = rest.lstrip().partition(b"\n")[2]
                offsets, rest = _read_block(rest, n_a, kind, fmt)
                line, _, rest = rest.lstrip().partition(b"\n")  # CONNECTIVITY <type>
                kind = "int64" if b"64" in line else "int"
                conn, rest = _read_block(rest, n_b, kind, fmt)
                tris = _triangulate(offsets.astype(np.int64), conn.astype(np.int64))
            else:  # VTK < 5.1: n, i_1 .. i_n per polygon
                flat, rest = _read_block(rest, n_b, "int", fmt)
                flat = flat.astype(np.int64)
                sizes, starts, i = [], [], 0
                while i < len(flat):
                    sizes.append(flat[i])
                    starts.append(i + 1)
                    i += flat[i] + 1
                keep = np.concatenate([np.arange(a, a + n) for a, n in zip(starts, sizes)])
                tris = _triangulate(np.concatenate([[0], np.cumsum(sizes)]), flat[keep])
        elif key in (b"POINT_DATA", b"CELL_DATA", b"VERTICES", b"LINES", b"OFFSETS"):
            break  # attributes and other cell kinds are not needed
    if points is None or tris is None:
        raise ValueError(f"{path}: not a legacy VTK POLYDATA triangle mesh")
    return points.astype(np.float64), tris


def _read_block(buf: bytes, count: int, kind: str, fmt: bytes):
    if fmt == b"BINARY":  # legacy VTK binary is big-endian
        codes = {"float": (">f4", 4), "double": (">f8", 8), "int": (">i4", 4), "int64": (">i8", 8)}
        code, size = codes[kind]
        arr = np.frombuffer(buf[: count * size], dtype=code)
        return arr.astype(np.int64 if kind.startswith("int") else np.float64), buf[count * size :]
    parts = buf.split(maxsplit=count)
    arr = np.array([float(t) for t in parts[:count]])
    return arr, parts[count] if len(parts) > count else b""


def _triangulate(offsets: np.ndarray, conn: np.ndarray) -> np.ndarray:
    """Fan-triangulate polygons given by offsets into a connectivity array."""
    if len(offsets) > 1 and (np.diff(offsets) == 3).all():  # already triangles
        return conn[: offsets[-1]].reshape(-1, 3)
    tris = [
        [conn[a], conn[a + j], conn[a + j + 1]]
        for a, b in zip(offsets[:-1], offsets[1:])
        for j in range(1, b - a - 1)
    ]
    return np.asarray(tris, dtype=np.int64).reshape(-1, 3)


def read_mesh(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (V, 3), triangles (T, 3)) of a VTK / PLY / OBJ / STL / OFF mesh."""
    path = Path(path)
    if path.suffix.lower() == ".vtk":
        return read_vtk_polydata(path)
    mesh = open3d().io.read_triangle_mesh(str(path))
    if len(mesh.triangles) == 0:
        raise ValueError(f"{path}: open3d read no triangles")
    return np.asarray(mesh.vertices), np.asarray(mesh.triangles)


def mesh_split_dirs(root: str | Path, require: bool = False) -> dict[str, Path]:
    """The official layout ``root/{train,val,test}_meshes``; with ``require``, a
    :class:`MissingDataError` (what, where, how to get it) when train or test is absent."""
    root = Path(root)
    dirs = {s: root / f"{s}_meshes" for s in ("train", "val", "test")}
    if require and not (dirs["train"].is_dir() and dirs["test"].is_dir()):
        raise MissingDataError(
            f"mesh folders of {root.name}",
            [dirs["train"], dirs["test"]],
            f"copy data/{root.name}/{{train,val,test}}_meshes/*.vtk from "
            "https://github.com/jadie1/Point2SSM (the spleen meshes; the other datasets via the "
            "Medical Decathlon and ShapeWorks grooming) into this folder; any "
            "VTK/PLY/OBJ/STL/OFF meshes work",
        )
    return dirs


def load_mesh_split(
    root: str | Path, pool_points: int = 2048, gt_points: int = 1024, seed: int = 0
) -> dict[str, list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]]:
    """The official layout ``root/{train,val,test}_meshes/*``: per split a list of
    (name, vertices, triangles, pool, gt), all divided by the training set's max |coord|."""
    dirs = mesh_split_dirs(root, require=True)
    meshes = {
        s: [
            (p.stem, *read_mesh(p))
            for p in sorted(d.iterdir())
            if p.suffix.lower() in MESH_SUFFIXES
        ]
        for s, d in dirs.items()
        if d.is_dir()
    }
    if not meshes["train"] or not meshes["test"]:
        raise MissingDataError(
            f"meshes in {Path(root)}", [dirs["train"], dirs["test"]],
            f"put VTK/PLY/OBJ/STL/OFF meshes in both folders ({', '.join(MESH_SUFFIXES)})",
        )  # fmt: skip
    scale = max(float(np.abs(v).max()) for _, v, _ in meshes["train"])
    rng = np.random.default_rng(seed)
    out = {}
    for split, items in meshes.items():
        rows = []
        for name, v, t in items:
            v = v / scale
            pool = sample_surface(v[None], t, pool_points, seed)[0]
            rows.append((name, v, t, pool, pool[rng.permutation(pool_points)[:gt_points]]))
        out[split] = rows
    return out

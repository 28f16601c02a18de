"""Data: the generated long-sequence task, the two-body system, and the EigenWorms loaders."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import torch

from iclr24_common import MissingDataError, MissingDependencyError

# ----------------------------------------------------------------------------------------
# EigenWorms-like generated task (default preset)
# ----------------------------------------------------------------------------------------


def make_lowfreq_classification(
    n: int,
    T: int,
    *,
    channels: int = 6,
    n_classes: int = 5,
    noise: float = 1.0,
    phase_jitter: float = 0.3,
    seed: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A 5-class, 6-channel task shaped like EigenWorms (scaled down in T): the class sets the
    amplitudes of the 1-4 cycles-per-sequence Fourier modes of each channel (each sample's
    phases jittered by up to +-phase_jitter rad), buried in white noise of std ``noise``, so
    the class is only visible after integrating over hundreds of steps.
    Returns x (n, T, channels) float32 and y (n,) int64."""
    rng = np.random.default_rng(seed)
    # fixed class templates (seed-independent, so train and test share them)
    templ = np.random.default_rng(12345).uniform(0.0, 1.0, (n_classes, 4, channels))
    y = rng.integers(0, n_classes, n)
    t = np.arange(T) / T
    freqs = np.arange(1, 5)[:, None]  # (4, 1) cycles per sequence
    phase = rng.uniform(-phase_jitter, phase_jitter, (n, 4, 1, channels))
    waves = np.sin(2 * np.pi * freqs[None, :, :, None] * t[None, None, :, None] + phase)
    x = (templ[y][:, :, None, :] * waves).sum(1) + noise * rng.standard_normal((n, T, channels))
    return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y.astype(np.int64))


# ----------------------------------------------------------------------------------------
# Two-body problem (paper Sec. 4.2, the Hamiltonian system of its HNN experiment)
# ----------------------------------------------------------------------------------------


def two_body_rhs(y: torch.Tensor) -> torch.Tensor:
    """d/dt of y = (q1 (2), q2 (2), p1 (2), p2 (2)) for two unit masses with V = -1/|q1-q2|.
    Works on one state (8,) (it is vmapped by deer_ode)."""
    q1, q2, p1, p2 = y[0:2], y[2:4], y[4:6], y[6:8]
    d = q1 - q2
    r3 = (d * d).sum().pow(1.5)
    return torch.cat([p1, p2, -d / r3, d / r3])


def two_body_initial(n: int, seed: int = 0) -> np.ndarray:
    """Random bound orbits: the two bodies at distance ~1 with near-circular velocities
    (eccentricity up to ~0.3). Returns (n, 8)."""
    rng = np.random.default_rng(seed)
    r = rng.uniform(0.8, 1.2, n)
    ang = rng.uniform(0, 2 * np.pi, n)
    d = np.stack([np.cos(ang), np.sin(ang)], 1) * r[:, None] / 2
    v_circ = np.sqrt(1.0 / (2 * r))  # each body, equal masses: v^2 = 1 / (2 r) * ... scaled
    v = v_circ * rng.uniform(0.85, 1.15, n)
    tang = np.stack([-np.sin(ang), np.cos(ang)], 1) * v[:, None]
    return np.concatenate([d, -d, tang, -tang], 1)


def two_body_reference(y0: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """scipy solve_ivp (DOP853, rtol 1e-11) on the same system: (n, N, 8)."""
    from scipy.integrate import solve_ivp

    def rhs(_, y):
        q1, q2, p1, p2 = y[0:2], y[2:4], y[4:6], y[6:8]
        d = q1 - q2
        r3 = (d @ d) ** 1.5
        return np.concatenate([p1, p2, -d / r3, d / r3])

    out = []
    for y in y0:
        sol = solve_ivp(rhs, (ts[0], ts[-1]), y, t_eval=ts, method="DOP853", rtol=1e-11, atol=1e-12)
        out.append(sol.y.T)
    return np.stack(out)


# ----------------------------------------------------------------------------------------
# EigenWorms (paper preset)
# ----------------------------------------------------------------------------------------

EIGENWORMS_DIR = ("deer", "EigenWorms")  # <data-dir>/deer/EigenWorms: aeon's extract layout
EIGENWORMS_HOW = (
    "EigenWorms (UEA archive, 259 series x 17,984 steps x 6 channels): download EigenWorms.zip "
    "from https://www.timeseriesclassification.com/description.php?Dataset=EigenWorms and put "
    "EigenWorms_TRAIN.ts and EigenWorms_TEST.ts in <data-dir>/deer/EigenWorms/ (or the official "
    "DEER split pickles eigenworms_{train,val,test}.pkl, each an (x, y) tuple of tensors), or "
    "run with --download after pip install aeon"
)


def read_ts(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """A UEA/sktime ``.ts`` file with equal-length series and class labels.

    Returns x (n, T, channels) float32 and the label strings (n,).
    """
    xs, labels, in_data = [], [], False
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if not in_data:
                in_data = line.lower().startswith("@data")
                continue
            *dims, label = line.split(":")
            xs.append([[float(v) for v in d.split(",")] for d in dims])
            labels.append(label.strip())
    if not xs:
        raise ValueError(f"{path}: no @data section or no series")
    return np.asarray(xs, dtype=np.float32).transpose(0, 2, 1), np.asarray(labels)


def _split(x, y, seed=0, fractions=(0.7, 0.15)):
    """70 / 15 / 15 stratification-free split, as the NeuralRDE split the official code uses."""
    idx = np.random.default_rng(seed).permutation(len(y))
    n_tr, n_va = int(fractions[0] * len(y)), int(fractions[1] * len(y))
    parts = idx[:n_tr], idx[n_tr : n_tr + n_va], idx[n_tr + n_va :]
    return {k: (x[p], y[p]) for k, p in zip(("train", "val", "test"), parts)}


def fetch_eigenworms(root: str | Path) -> None:
    """Download the UEA EigenWorms files into ``root/deer/EigenWorms`` with aeon's
    ``load_classification`` (it fetches from timeseriesclassification.com / Zenodo)."""
    try:
        from aeon.datasets import load_classification  # optional: only --download needs it
    except ImportError:
        raise MissingDependencyError("--download needs aeon: pip install aeon") from None
    load_classification("EigenWorms", extract_path=str(Path(root).joinpath(EIGENWORMS_DIR[0])))


def load_eigenworms(root: str | Path, *, download: bool = False) -> dict[str, tuple]:
    """EigenWorms as {"train"|"val"|"test": (x (n, T, 6) float32 tensor, y (n,) int64 tensor)}.

    Looks in ``root/deer/EigenWorms`` for the official split pickles, then for the UEA .ts
    files (a seeded 70/15/15 split); with ``download`` fetches the .ts files first if absent.
    Raises :class:`MissingDataError` when neither is there.
    """
    folder = Path(root).joinpath(*EIGENWORMS_DIR)
    pkls = [folder / f"eigenworms_{s}.pkl" for s in ("train", "val", "test")]
    ts_files = [folder / "EigenWorms_TRAIN.ts", folder / "EigenWorms_TEST.ts"]
    if all(p.exists() for p in pkls):
        out = {}
        for s, p in zip(("train", "val", "test"), pkls):
            with open(p, "rb") as fh:
                x, y = pickle.load(fh)
            out[s] = (torch.as_tensor(np.asarray(x), dtype=torch.float32),
                      torch.as_tensor(np.asarray(y), dtype=torch.int64))  # fmt: skip
        return out
    if download and not all(p.exists() for p in ts_files):
        fetch_eigenworms(root)
    if not all(p.exists() for p in ts_files):
        raise MissingDataError("EigenWorms", pkls + ts_files, EIGENWORMS_HOW)
    (x1, l1), (x2, l2) = read_ts(ts_files[0]), read_ts(ts_files[1])
    x, labels = np.concatenate([x1, x2]), np.concatenate([l1, l2])
    classes = sorted(set(labels.tolist()))
    y = np.asarray([classes.index(v) for v in labels], dtype=np.int64)
    return {k: (torch.from_numpy(a), torch.from_numpy(b)) for k, (a, b) in _split(x, y).items()}

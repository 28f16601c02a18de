"""Datasets of the reproduction.

Generated / bundled (``smoke`` and ``default`` presets, offline):

* Friedman #1 (``sklearn.datasets.make_friedman1``, 5 inputs; monotone increasing in x4, x5,
  i.e. indices 3, 4), Gaussian noise of std ``noise`` on the training/validation targets; the
  test targets are the noiseless function (the official ``*_denoised.csv`` protocol).
* the official 2-D scalability function ``a sin(25 x / pi) + b (x - 0.5)^3 + c e^y + y^2``
  (``synthetic_111``: a = b = c = 1), monotone in y.
* Auto MPG from the ``vega_datasets`` wheel (``cars``: 392 complete rows, 7 inputs;
  displacement, horsepower and weight monotone decreasing, as in the official code).
* a 40-input function for the scalability timing (official ``scalability_test_large_m``
  uses m in {1, 2, 5, 10, 20} of 40 inputs; its CSV is not published, so we generate one).

Real (``paper`` preset): the preprocessed CSVs of the official repository (no header, the
features then the label), ``<data-dir>/smnn/<name>/{train,test}.csv``. COMPAS and Heart
Disease are pinned (:data:`REMOTE`: raw GitHub URLs of retna319/SMNN at
:data:`OFFICIAL_COMMIT`, SHA-256 each): ``--download`` fetches them and the ``paper`` preset
checks them. Blog Feedback's CSVs are not in the repository's public snapshot (over its size
limit) and Loan's are made by a script from a Kaggle table, so neither is pinned.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from iclr24_common import MissingDataError, RemoteFile, download_files, sha256_of, verify_files


@dataclass
class Split:
    """A train / validation / test split of one dataset (float64 arrays)."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def split_60_20_20(X: np.ndarray, y: np.ndarray, rng: np.random.Generator, y_test=None) -> Split:
    """Shuffle, then 60 % train / 20 % validation / 20 % test (``y_test`` replaces the
    test targets, e.g. by the noiseless ones)."""
    n = len(X)
    perm = rng.permutation(n)
    a, b = int(0.6 * n), int(0.8 * n)
    tr, va, te = perm[:a], perm[a:b], perm[b:]
    yt = y if y_test is None else y_test
    return Split(X[tr], y[tr], X[va], y[va], X[te], yt[te])


# --- Friedman #1 ------------------------------------------------------------------------

FRIEDMAN_MONOTONE = {3: 1, 4: 1}  # 10 x4 + 5 x5 (1-based) are the monotone terms


def friedman(noise: float, n_samples: int = 1000, seed: int = 0) -> Split:
    """Friedman #1 with 5 inputs in [0, 1]; ``noise`` is the std of the Gaussian noise added to
    the training and validation targets (official noise levels 0, 2, 5, 10, 20; 1000 rows).
    The test targets are noiseless."""
    from sklearn.datasets import make_friedman1

    rng = np.random.default_rng(seed)
    X, y_clean = make_friedman1(n_samples=n_samples, n_features=5, noise=0.0, random_state=seed)
    y = y_clean + noise * rng.standard_normal(n_samples)
    return split_60_20_20(X, y, rng, y_test=y_clean)


# --- the 2-D function of the official scalability test -----------------------------------

SYNTHETIC2D_MONOTONE = {1: 1}


def synthetic_2d_function(x: np.ndarray, y: np.ndarray, a=1.0, b=1.0, c=1.0) -> np.ndarray:
    """``a sin(25 x / pi) + b (x - 0.5)^3 + c e^y + y^2``: wiggly in x, increasing in y on [0, 1]."""
    return a * np.sin(25 * x / np.pi) + b * (x - 0.5) ** 3 + c * np.exp(y) + y**2


def synthetic_2d(n_samples: int = 2000, seed: int = 0, noise: float = 0.0) -> Split:
    rng = np.random.default_rng(seed)
    X = rng.random((n_samples, 2))
    clean = synthetic_2d_function(X[:, 0], X[:, 1])
    return split_60_20_20(X, clean + noise * rng.standard_normal(n_samples), rng, y_test=clean)


# --- Auto MPG -----------------------------------------------------------------------------

AUTOMPG_FEATURES = [
    "Cylinders",
    "Displacement",
    "Horsepower",
    "Weight_in_lbs",
    "Acceleration",
    "Year",
    "Origin",
]
AUTOMPG_MONOTONE = {
    1: -1,
    2: -1,
    3: -1,
}  # displacement, horsepower, weight (official: features 1-3)


def autompg_frame(df: pd.DataFrame | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Auto MPG as (X (392, 7), mpg (392,)) from the ``vega_datasets`` ``cars`` table (or a
    frame with the same columns). Origin becomes an ordinal code, Year its calendar year."""
    if df is None:
        from vega_datasets import data

        df = data.cars()
    need = ["Miles_per_Gallon", *AUTOMPG_FEATURES]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ValueError(f"Auto MPG table lacks columns {missing}")
    df = df[need].dropna().copy()
    df["Year"] = pd.to_datetime(df["Year"]).dt.year.astype(float)
    origins = {"USA": 0.0, "Europe": 1.0, "Japan": 2.0}
    df["Origin"] = df["Origin"].map(lambda o: origins.get(o, np.nan))
    df = df.dropna()
    X = df[AUTOMPG_FEATURES].to_numpy(dtype=np.float64)
    return X, df["Miles_per_Gallon"].to_numpy(dtype=np.float64)


def kfold_indices(n: int, k: int, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """``k`` (train, test) index pairs of a shuffled k-fold split."""
    folds = np.array_split(rng.permutation(n), k)
    return [
        (np.concatenate([f for j, f in enumerate(folds) if j != i]), folds[i]) for i in range(k)
    ]


# --- scalability data (40 inputs) -------------------------------------------------------

SCALABILITY_FEATURES = 40
SCALABILITY_M = (1, 2, 5, 10, 20)  # official scalability_test_large_m
SCALABILITY_MONO_ORDER = (13, 5, 1, 9, 17, 3, 7, 11, 15, 19, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18)
# the official lists are nested: [13], [5, 13], [1, 5, 9, 13, 17], odd 1..19, then 0..19


def scalability_monotone(m: int) -> dict[int, int]:
    return {j: 1 for j in sorted(SCALABILITY_MONO_ORDER[:m])}


def scalability_data(n_samples: int = 4000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """40 inputs in [0, 1]: increasing in the first 20, wiggly in the last 20."""
    rng = np.random.default_rng(seed)
    X = rng.random((n_samples, SCALABILITY_FEATURES))
    w = rng.uniform(0.5, 1.5, 20)
    y = (X[:, :20] ** 2 * w).sum(1) + np.sin(3 * np.pi * X[:, 20:]).sum(1) * 0.5
    return X, y + 0.1 * rng.standard_normal(n_samples)


# --- the paper's real datasets (preprocessed CSVs of the official repository) --------------


@dataclass(frozen=True)
class PaperDataset:
    """One real dataset of the paper, as the official code reads it."""

    name: str
    n_features: int
    monotone: dict
    task: str  # "regression" | "classification"
    exp_units: tuple[int, ...]
    relu_units: tuple[int, ...]
    conf_units: tuple[int, ...]


# indices, sizes and structures from the official {compas,blogfeedback,loan,heart}_train.py
PAPER_DATASETS = {
    "compas": PaperDataset(
        "compas", 13, {0: 1, 1: 1, 2: 1, 3: 1}, "classification", (32, 32), (16, 16), (16, 16)
    ),
    "blogfeedback": PaperDataset(
        "blogfeedback",
        280,
        {j: 1 for j in (51, 52, 53, 54, 56, 57, 58, 59)},
        "regression",
        (16, 8),
        (2, 2),
        (2, 4),
    ),
    "loan": PaperDataset(
        "loan", 28, {0: 1, 1: 1, 2: 1, 3: 1, 4: 1}, "classification", (16, 8), (4, 2), (4, 4)
    ),
    "heart": PaperDataset(
        "heart", 13, {3: 1, 4: 1}, "classification", (64, 64), (16, 16), (32, 32)
    ),
}

OFFICIAL_COMMIT = "f7ac1414f61d5178ee0a4f6a8aa8f10355505a6a"  # retna319/SMNN HEAD, 2024
_RAW = f"https://raw.githubusercontent.com/retna319/SMNN/{OFFICIAL_COMMIT}"
# SHA-256 and size of the files at OFFICIAL_COMMIT (computed from the fetched repository)
_PINNED = {
    "compas/train.csv": ("a3e97852e28c67b6dc5191580546ed5facf4d547b6a2a0d200eb26d90b9bf570", 1_727_950),
    "compas/test.csv": ("9b3a0847729e56757961adbfb802b2a26fb3979f4f034735fd96d1d5c0c3f04a", 432_250),
    "heart/train.csv": ("61c3078e7028fa80d25114843667ae5407debe8d00d1d055b7b3869da7934306", 84_700),
    "heart/test.csv": ("7b020a845cf1b1139eaaa52629391dd3a4b5cca3e0ce4eb4ee770b42e9b4f9a7", 21_350),
}  # fmt: skip
REMOTE: dict[str, tuple[RemoteFile, ...]] = {
    name: tuple(RemoteFile(url=f"{_RAW}/{path}", path=path, sha256=sha, size=size)
                for path, (sha, size) in _PINNED.items() if path.startswith(f"{name}/"))
    for name in ("compas", "heart")
}  # fmt: skip
"""The pinned official files, per dataset; paths relative to ``<data-dir>/smnn``."""

HOW_TO_GET = (
    "pass --download (COMPAS and Heart: the official CSVs of github.com/retna319/SMNN at "
    f"{OFFICIAL_COMMIT[:7]}, SHA-256 checked), or copy train.csv and test.csv of each dataset "
    "from that repository (compas/, blogfeedback/, loan/, heart/; the Loan CSVs are made by "
    "data/realworld-datasets/make_loan_data.py) into <data-dir>/smnn/<name>/"
)


def download_paper_data(root: Path, names, log=None) -> dict[str, str]:
    """``--download``: the pinned official CSVs of ``names`` (those in :data:`REMOTE`) into
    ``root/smnn``, each checked against its SHA-256 before it is moved into place; a failed
    request or a different checksum is one line, exit 2, with nothing half-written left.
    Returns ``{path: sha256}``."""
    files = [f for n in names for f in REMOTE.get(n, ())]
    got = download_files(Path(root) / "smnn", files, log=log) if files else {}
    if log is not None:
        log.info("--download: %d official CSVs (%s) under %s, SHA-256 checked%s", len(files),
                 ", ".join(n for n in names if n in REMOTE) or "none", Path(root) / "smnn",
                 "".join(f"; {n}: not pinned, copy it by hand" for n in names
                         if n not in REMOTE))  # fmt: skip
    return got


def paper_data_checksums(root: Path, names) -> dict[str, str]:
    """SHA-256 of every CSV ``names`` are read from (for the results file): the pinned ones
    verified against their pins (a different copy is one line, exit 2), the others
    computed."""
    out = {}
    for n in names:
        if n in REMOTE:
            out.update(verify_files(Path(root) / "smnn", REMOTE[n], what=f"the official {n} CSVs",
                                    how_to_get="delete it and pass --download"))  # fmt: skip
        else:
            for p in paper_dataset_paths(root, n):
                out[f"{n}/{p.name}"] = sha256_of(p)
    return out


def paper_dataset_paths(root: Path, name: str) -> list[Path]:
    return [Path(root) / "smnn" / name / f for f in ("train.csv", "test.csv")]


def require_paper_data(root: Path, names=tuple(PAPER_DATASETS)) -> None:
    """Raise :class:`MissingDataError` listing every absent file, before anything is trained."""
    missing = [p for name in names for p in paper_dataset_paths(root, name) if not p.exists()]
    if missing:
        raise MissingDataError("the paper's preprocessed real datasets", missing, HOW_TO_GET)


def read_preprocessed_csv(path: Path, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """A header-less CSV: ``n_features`` feature columns, then the label (rows with NaN dropped,
    as the official loaders do). Returns X (n, n_features), y (n,)."""
    df = pd.read_csv(path, header=None).dropna(axis=0)
    if df.shape[1] != n_features + 1:
        raise ValueError(
            f"{path}: expected {n_features + 1} columns (features + label), got {df.shape[1]}"
        )
    arr = df.to_numpy(dtype=np.float64)
    return arr[:, :n_features], arr[:, n_features]


def load_paper_dataset(root: Path, name: str):
    """(X_train, y_train, X_test, y_test) of a paper dataset; MissingDataError when absent."""
    if name not in PAPER_DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(PAPER_DATASETS)}")
    spec = PAPER_DATASETS[name]
    require_paper_data(root, (name,))
    tr, te = paper_dataset_paths(root, name)
    return (
        *read_preprocessed_csv(tr, spec.n_features),
        *read_preprocessed_csv(te, spec.n_features),
    )

"""Data: the generated matrices of the default preset and the loaders of the paper's datasets.

Generated (no download):
- ``make_user_item``: a power-law user x item matrix with latent clusters (recommender-like),
  the stand-in for MovieLens / Goodbooks / Food in the paper's Table 2.
- ``make_sbm``: a stochastic-block-model graph, the stand-in for Slashdot / Epinions /
  Flickr in the row + column ("network") setting.

Real (``paper`` preset, read from ``<data root>/svd-update/<name>/``):
- LSI corpora CISI, CRAN, MED in the SMART/Glasgow format (``CISI.ALL``, ``cran.all.1400``,
  ``MED.ALL``: ``.I``/``.W`` records) or as a saved ``<name>.npz`` (scipy.sparse);
- MovieLens: ``ratings.dat`` (ml-1m, ``::``), ``ratings.csv`` (ml-20m/25m) or ``u.data`` (ml-100k);
- graphs: SNAP edge lists (``soc-Slashdot0902.txt``, ``soc-Epinions1.txt``, ``edges.txt`` /
  ``edges.csv`` for Flickr); any ``<name>.npz`` also works.
"""

from __future__ import annotations

import gzip
import re
from collections import Counter
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from iclr24_common import (
    MissingDataError,
    RemoteFile,
    UsageError,
    download_files,
    sha256_of,
    verify_files,
)


def make_user_item(
    n_users: int = 60_000,
    n_items: int = 20_000,
    *,
    n_clusters: int = 40,
    min_activity: int = 14,
    activity_alpha: float = 2.0,
    zipf: float = 1.0,
    in_cluster: float = 0.8,
    drift: bool = False,
    seed: int = 0,
) -> sp.csr_matrix:
    """A binary implicit-feedback matrix (n_users, n_items), float64 CSR.

    User activity is Pareto(alpha) with minimum ``min_activity`` (mean
    min_activity * alpha / (alpha - 1) before duplicates are merged: ~1.15M non-zeros at
    60k x 20k, the issue's size);
    item popularity is Zipf(``zipf``); each interaction picks an item from the user's own
    cluster with probability ``in_cluster`` and from the whole catalogue otherwise.
    """
    rng = np.random.default_rng(seed)
    activity = np.minimum(
        (min_activity * (1.0 - rng.random(n_users)) ** (-1.0 / activity_alpha)).astype(np.int64),
        n_items // 10,
    )
    user_cluster = rng.integers(0, n_clusters, n_users)
    item_cluster = rng.integers(0, n_clusters, n_items)
    popularity = 1.0 / (1.0 + rng.permutation(n_items)) ** zipf
    # Items sorted by cluster; per-cluster normalised CDFs shifted by the cluster id, so one
    # searchsorted over all interactions samples from the right cluster.
    order = np.lexsort((np.arange(n_items), item_cluster))
    w = popularity[order]
    csum = np.cumsum(w)
    starts = np.searchsorted(item_cluster[order], np.arange(n_clusters))
    ends = np.append(starts[1:], n_items)
    base = np.where(starts > 0, csum[np.maximum(starts - 1, 0)], 0.0)
    total = csum[np.maximum(ends - 1, 0)] - base
    clus_of_sorted = item_cluster[order]
    shifted = clus_of_sorted + (csum - base[clus_of_sorted]) / np.maximum(
        total[clus_of_sorted], 1e-300
    )
    global_cdf = csum / csum[-1]

    users = np.repeat(np.arange(n_users), activity)
    u = rng.random(users.size)
    from_cluster = rng.random(users.size) < in_cluster
    items = np.empty(users.size, dtype=np.int64)
    c = user_cluster[users[from_cluster]]
    pos = np.searchsorted(shifted, c + u[from_cluster] * (1 - 1e-12))
    items[from_cluster] = order[np.minimum(pos, n_items - 1)]
    pos = np.searchsorted(global_cdf, u[~from_cluster])
    items[~from_cluster] = order[np.minimum(pos, n_items - 1)]
    A = sp.csr_matrix((np.ones(users.size), (users, items)), shape=(n_users, n_items))
    A.data[:] = 1.0  # duplicates were summed: binarise
    if drift:
        A = A[np.argsort(user_cluster, kind="stable")]
    return A


def make_sbm(
    n_nodes: int = 12_000,
    *,
    n_blocks: int = 30,
    mean_degree: float = 20.0,
    p_in_block: float = 0.8,
    seed: int = 0,
) -> sp.csr_matrix:
    """A symmetric 0/1 adjacency matrix of a stochastic block model, nodes in random order."""
    rng = np.random.default_rng(seed)
    block = rng.integers(0, n_blocks, n_nodes)
    n_edges = int(n_nodes * mean_degree / 2)
    src = rng.integers(0, n_nodes, n_edges)
    members = np.argsort(block, kind="stable")
    starts = np.searchsorted(block[members], np.arange(n_blocks))
    sizes = np.bincount(block, minlength=n_blocks)
    same = rng.random(n_edges) < p_in_block
    b = block[src[same]]
    dst = rng.integers(0, n_nodes, n_edges)
    dst[same] = members[starts[b] + (rng.random(same.sum()) * sizes[b]).astype(np.int64)]
    keep = src != dst
    A = sp.csr_matrix(
        (np.ones(2 * keep.sum()), (np.r_[src[keep], dst[keep]], np.r_[dst[keep], src[keep]])),
        shape=(n_nodes, n_nodes),
    )
    A.data[:] = 1.0
    return A


# --------------------------------------------------------------------------- real data
_TOKEN = re.compile(r"[a-z]+")
LSI = ("cisi", "cran", "med")
RECSYS = ("movielens",)
GRAPHS = ("slashdot", "epinions", "flickr")
DATASETS = LSI + RECSYS + GRAPHS
_FILES = {
    "cisi": ["CISI.ALL", "cisi.all"],
    "cran": ["cran.all.1400", "CRAN.ALL"],
    "med": ["MED.ALL", "med.all"],
    "movielens": ["ratings.dat", "ratings.csv", "u.data"],
    "slashdot": ["soc-Slashdot0902.txt", "soc-Slashdot0902.txt.gz", "edges.txt"],
    "epinions": ["soc-Epinions1.txt", "soc-Epinions1.txt.gz", "edges.txt"],
    "flickr": ["edges.txt", "edges.csv"],
}
_HOW = {
    "cisi": "the CISI collection (ir.dcs.gla.ac.uk/resources/test_collections/cisi/)",
    "cran": "the Cranfield collection (ir.dcs.gla.ac.uk/resources/test_collections/cran/)",
    "med": "the MEDLINE collection (ir.dcs.gla.ac.uk/resources/test_collections/medl/)",
    "movielens": "MovieLens ml-1m / ml-25m from grouplens.org/datasets/movielens/",
    "slashdot": "soc-Slashdot0902.txt.gz from snap.stanford.edu/data/ (gzipped or not)",
    "epinions": "soc-Epinions1.txt.gz from snap.stanford.edu/data/ (gzipped or not)",
    "flickr": "the Flickr edge list (e.g. from the BlogCatalog/Flickr social datasets) as edges.txt",
}


def read_smart_documents(path: str | Path) -> sp.csr_matrix:
    """A term-count matrix (documents, terms) from a SMART/Glasgow ``.I``/``.W`` file.
    Terms: lower-case alphabetic tokens of length >= 2 seen in at least two documents."""
    docs: list[list[str]] = []
    field = None
    for line in Path(path).read_text(encoding="latin-1").splitlines():
        if line.startswith(".I"):
            docs.append([])
            field = None
        elif (
            line.startswith(".")
            and len(line) >= 2
            and line[1].isalpha()
            and len(line.split()[0]) == 2
        ):
            field = line[1]
        elif field in ("T", "W") and docs:
            docs[-1].extend(t for t in _TOKEN.findall(line.lower()) if len(t) >= 2)
    if not docs:
        raise ValueError(f"{path}: no .I records found")
    df = Counter(t for d in docs for t in set(d))
    vocab = {t: i for i, t in enumerate(sorted(t for t, c in df.items() if c >= 2))}
    rows, cols = [], []
    for i, d in enumerate(docs):
        ids = [vocab[t] for t in d if t in vocab]
        rows.extend([i] * len(ids))
        cols.extend(ids)
    A = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(docs), len(vocab)))
    A.sum_duplicates()
    return A


def read_ratings(path: str | Path) -> sp.csr_matrix:
    """A (users, items) rating matrix from MovieLens ``ratings.dat``/``.csv`` or ``u.data``;
    user and item ids are re-indexed densely in increasing id order."""
    path = Path(path)
    text = path.read_text(encoding="latin-1")
    if path.suffix == ".csv":
        lines = text.splitlines()[1:]
        sep = ","
    else:
        lines = text.splitlines()
        sep = "::" if "::" in text[:200] else None
    parts = np.array([ln.split(sep)[:3] for ln in lines if ln.strip()], dtype=np.float64)
    if parts.ndim != 2 or parts.shape[1] != 3:
        raise ValueError(f"{path}: expected user, item, rating columns")
    u, ui = np.unique(parts[:, 0], return_inverse=True)
    it, ii = np.unique(parts[:, 1], return_inverse=True)
    return sp.csr_matrix((parts[:, 2], (ui, ii)), shape=(len(u), len(it)))


def read_edge_list(path: str | Path) -> sp.csr_matrix:
    """A symmetric 0/1 adjacency matrix from an edge list ('#' comments, any whitespace or
    comma separator; gzipped when the name ends in .gz); node ids re-indexed densely in
    sorted order."""
    path = Path(path)
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "%")):
            rows.append(line.replace(",", " ").split()[:2])
    e = np.array(rows, dtype=np.int64)
    if e.ndim != 2 or e.shape[1] != 2:
        raise ValueError(f"{path}: expected two node ids per line")
    nodes, idx = np.unique(e, return_inverse=True)
    idx = idx.reshape(-1, 2)
    keep = idx[:, 0] != idx[:, 1]
    s, d = idx[keep, 0], idx[keep, 1]
    A = sp.csr_matrix((np.ones(2 * len(s)), (np.r_[s, d], np.r_[d, s])), shape=(len(nodes),) * 2)
    A.data[:] = 1.0
    return A


# The public copies of the paper's datasets that can be pinned: SNAP's soc-Slashdot0902.txt.gz
# (82,168 nodes, 948,464 directed edges; the paper's Table 4 graph) as committed, whole, to a
# public GitHub repository (the official IncSVDforICLR2024 repository holds the graphs only
# as files of 4 MiB and more, which no snapshot here carries; its Epinions copy elsewhere was
# truncated). SHA-256 and size computed from the fetched snapshot at that commit.
SLASHDOT_COMMIT = "3059bb1925250ef2d53a71da22785f5f022678fb"
REMOTE: dict[str, tuple[RemoteFile, ...]] = {
    "slashdot": (
        RemoteFile(
            url="https://raw.githubusercontent.com/AllenDowney/ProbablyOverthinkingIt/"
            f"{SLASHDOT_COMMIT}/soc-Slashdot0902.txt.gz",
            path="slashdot/soc-Slashdot0902.txt.gz",
            sha256="65072f0a2d98a444967bf3b8379a87e03292f2f9f8924f4fe470ddd047c95553",
            size=3246522,
        ),
    ),
}


def download_paper_data(root: str | Path, names, log=None) -> dict[str, str]:
    """``--download``: fetch the pinned files of ``names`` into ``root/svd-update/``, each
    checked before it is moved into place; a dataset with no pinned copy is one line."""
    unpinned = [n for n in names if n not in REMOTE]
    if unpinned:
        raise UsageError(f"--download: no pinned public copy of {', '.join(unpinned)} (only "
                         f"{', '.join(REMOTE)}); get it as the missing-data message says")  # fmt: skip
    files = [f for n in names for f in REMOTE[n]]
    return download_files(Path(root) / "svd-update", files, log=log)


def dataset_checksums(root: str | Path, names) -> dict[str, str]:
    """SHA-256 of the file each dataset is read from (for ``results.json``): a pinned file is
    verified (another copy: one line, exit 2); any other file is hashed as found."""
    out = {}
    for name in names:
        path = dataset_file(name, root)
        rel = path.relative_to(Path(root) / "svd-update").as_posix()
        pinned = [f for f in REMOTE.get(name, ()) if f.path == rel]
        if pinned:
            out.update(verify_files(Path(root) / "svd-update", pinned, what=f"the {name} data",
                                    how_to_get=_HOW[name]))  # fmt: skip
        else:
            out[rel] = sha256_of(path)
    return out


def dataset_file(name: str, root: str | Path) -> Path:
    """The file ``load_dataset`` reads for ``name``; MissingDataError if none is there."""
    name = name.lower()
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose from {', '.join(DATASETS)}")
    folder = Path(root) / "svd-update" / name
    candidates = [folder / f"{name}.npz"] + [folder / f for f in _FILES[name]]
    for p in candidates:
        if p.exists():
            return p
    raise MissingDataError(f"dataset {name!r}", candidates, _HOW[name])


def load_dataset(name: str, root: str | Path) -> sp.csr_matrix:
    """The paper's dataset ``name`` from ``root/svd-update/<name>/``; MissingDataError if absent."""
    name = name.lower()
    p = dataset_file(name, root)
    if p.suffix == ".npz":
        return sp.load_npz(p).tocsr().astype(np.float64)
    if name in LSI:
        return read_smart_documents(p)
    if name in RECSYS:
        return read_ratings(p)
    return read_edge_list(p)

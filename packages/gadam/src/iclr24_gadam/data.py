"""Graphs for anomaly detection: a generated citation-like graph, anomaly injection as in
the literature (Ding et al. 2019, DOMINANT; the GADAM repo's `inject_ano.py`), and loaders
for the paper's datasets from a local root."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch_geometric.data import Data

from iclr24_common import MissingDataError, RemoteFile, download_files, sha256_of, verify_files

NORMAL, CONTEXTUAL, STRUCTURAL = 0, 1, 2
ANOMALY_TYPES = {CONTEXTUAL: "contextual", STRUCTURAL: "structural"}


@dataclass(frozen=True)
class CitationGraphSpec:
    """A stochastic-block-model graph with bag-of-words features, shaped like Cora."""

    num_nodes: int = 2708
    """Nodes (Cora: 2708)."""
    num_classes: int = 7
    """Topics / communities (Cora: 7)."""
    avg_degree: float = 3.9
    """Mean degree (Cora: 2 x 5278 / 2708 = 3.9)."""
    homophily: float = 0.8
    """Fraction of edges inside a community (Cora's edge homophily is 0.81)."""
    vocab: int = 1433
    """Bag-of-words vocabulary (Cora: 1433 binary word features)."""
    words_per_node: float = 18.0
    """Mean distinct words per node (Cora: ~18)."""
    topic_purity: float = 0.7
    """Share of a node's words drawn from its class topic (the rest: background)."""
    degree_exponent: float = 2.5
    """Power-law exponent of the expected-degree weights (citation graphs are heavy-tailed)."""


def normalize_features(data: Data) -> Data:
    """Divide each node's features by their sum (bag-of-words rows sum to 1), as DGL's
    citation loaders and the official CoLA ``preprocess_features`` do; all-zero rows stay
    zero. Graphs with negative features (ogbn-arxiv's word embeddings) are returned as they
    are: a row sum is no scale there. Returns a copy."""
    out = data.clone()
    x = data.x.float()
    if (x >= 0).all():
        s = x.sum(1, keepdim=True)
        x = x / torch.where(s > 0, s, torch.ones_like(s))
    out.x = x
    return out


def citation_graph(spec: CitationGraphSpec, seed: int) -> Data:
    """Generate an undirected, simple, attributed SBM graph; ``data.y`` holds the classes."""
    rng = np.random.default_rng(seed)
    n, c = spec.num_nodes, spec.num_classes
    y = rng.integers(0, c, n)
    # heavy-tailed expected degrees (Chung-Lu weights), capped so no node dominates
    w = rng.pareto(spec.degree_exponent - 1, n) + 1.0
    w = np.minimum(w, np.quantile(w, 0.999))
    m = int(round(n * spec.avg_degree / 2))
    src = rng.choice(n, m, p=w / w.sum())
    intra = rng.random(m) < spec.homophily
    dst = np.empty(m, dtype=np.int64)
    for k in range(c):  # targets drawn per community (a loop over 7 classes, not over edges)
        in_k = y == k
        p_in = np.where(in_k, w, 0.0)
        p_out = np.where(in_k, 0.0, w)
        sel_in = intra & (y[src] == k)
        sel_out = ~intra & (y[src] == k)
        dst[sel_in] = rng.choice(n, sel_in.sum(), p=p_in / p_in.sum())
        dst[sel_out] = rng.choice(n, sel_out.sum(), p=p_out / p_out.sum())
    edge_index = _undirected_simple(np.stack([src, dst]), n)
    # bag of words: class topics concentrated on a few hundred words
    topics = rng.dirichlet(np.full(spec.vocab, 0.05), size=c)
    background = rng.dirichlet(np.full(spec.vocab, 1.0))
    x = np.zeros((n, spec.vocab), dtype=np.float32)
    counts = np.maximum(1, rng.poisson(spec.words_per_node, n))
    total = counts.sum()
    rows = np.repeat(np.arange(n), counts)
    from_topic = rng.random(total) < spec.topic_purity
    words = np.empty(total, dtype=np.int64)
    for k in range(c):
        sel = from_topic & (y[rows] == k)
        words[sel] = rng.choice(spec.vocab, sel.sum(), p=topics[k])
    words[~from_topic] = rng.choice(spec.vocab, (~from_topic).sum(), p=background)
    x[rows, words] = 1.0
    return Data(
        x=torch.from_numpy(x), edge_index=torch.from_numpy(edge_index), y=torch.from_numpy(y)
    )


def _undirected_simple(edge_index: np.ndarray, n: int) -> np.ndarray:
    src, dst = np.concatenate([edge_index, edge_index[::-1]], axis=1)
    keep = src != dst
    key = np.unique(src[keep] * n + dst[keep])
    return np.stack([key // n, key % n]).astype(np.int64)


def inject_anomalies(
    data: Data,
    *,
    clique_size: int = 15,
    num_cliques: int = 5,
    num_contextual: int | None = None,
    candidates: int = 50,
    seed: int = 0,
) -> Data:
    """Inject structural and contextual anomalies (DOMINANT protocol, GADAM `inject_ano.py`).

    - structural: ``num_cliques`` groups of ``clique_size`` random nodes made fully connected;
    - contextual: ``num_contextual`` other nodes (default: as many as the structural ones)
      whose features are replaced by those of the farthest (Euclidean) of ``candidates``
      random nodes.
    Returns a copy with ``label`` (0/1) and ``anomaly_type`` (0 normal, 1 contextual, 2 structural).
    """
    n = data.num_nodes
    num_struct = clique_size * num_cliques
    num_ctx = num_struct if num_contextual is None else num_contextual
    if clique_size < 2 or num_cliques < 0 or num_ctx < 0:
        raise ValueError("clique_size must be >= 2 and counts non-negative")
    if num_struct + num_ctx > n or candidates > n:
        raise ValueError(f"cannot inject {num_struct} + {num_ctx} anomalies into {n} nodes")
    rng = np.random.default_rng(seed)
    chosen = rng.choice(n, num_struct + num_ctx, replace=False)
    ctx, struct = chosen[:num_ctx], chosen[num_ctx:]
    x = data.x.clone()
    # contextual: farthest of `candidates` random nodes, computed for all anomalies at once
    cand = (
        np.stack([rng.choice(n, candidates, replace=False) for _ in range(num_ctx)])
        if num_ctx
        else np.zeros((0, candidates), dtype=np.int64)
    )
    if num_ctx:
        cand_t = torch.from_numpy(cand)
        dist = (data.x[torch.from_numpy(ctx)][:, None, :] - data.x[cand_t]).norm(
            dim=-1
        )  # (k, candidates)
        x[torch.from_numpy(ctx)] = data.x[cand_t[torch.arange(num_ctx), dist.argmax(1)]]
    # structural: cliques
    cliques = struct.reshape(num_cliques, clique_size)
    a, b = np.meshgrid(np.arange(clique_size), np.arange(clique_size), indexing="ij")
    off = a != b
    new = np.stack([cliques[:, a[off]].ravel(), cliques[:, b[off]].ravel()])
    edge_index = _undirected_simple(np.concatenate([data.edge_index.numpy(), new], axis=1), n)
    atype = np.zeros(n, dtype=np.int64)
    atype[ctx], atype[struct] = CONTEXTUAL, STRUCTURAL
    out = data.clone()
    out.x, out.edge_index = x, torch.from_numpy(edge_index)
    out.anomaly_type = torch.from_numpy(atype)
    out.label = (out.anomaly_type > 0).long()
    out.cliques = torch.from_numpy(cliques)
    return out


# ---------------------------------------------------------------- real datasets (paper preset)

PLANETOID = {"cora": "Cora", "citeseer": "CiteSeer", "pubmed": "PubMed"}
MAT = {"acm": "ACM", "blogcatalog": "BlogCatalog"}
PYGOD = {"books": "books", "reddit": "reddit"}
OGB = {"ogbn-arxiv": "ogbn_arxiv"}
DATASETS = (*PLANETOID, *MAT, *PYGOD, *OGB)
# Cliques of 15 injected per graph, with as many contextual anomalies as clique members: the
# counts of the DOMINANT / CoLA protocol the paper's PyGOD injection follows (Cora 150
# anomalies, CiteSeer 150, PubMed 600, ACM 600, BlogCatalog 300); ogbn-arxiv 200 cliques (our
# choice: the official code does not include its injection counts).
CLIQUES = {"cora": 5, "citeseer": 5, "pubmed": 20, "acm": 20, "blogcatalog": 10, "ogbn-arxiv": 200}
OGB_URL = (
    "http://snap.stanford.edu/ogb/data/nodeproppred/arxiv.zip"  # ogb's meta_info for ogbn-arxiv
)
# The paper's raw files with pinned SHA-256 (``--download`` fetches them, the paper preset
# verifies them): the Planetoid raw files from kimiyoung/planetoid (the repository whose raw
# GitHub address torch_geometric's Planetoid downloads from), at commit af6abf4, and the raw
# BlogCatalog.mat (Network, Attributes, Label = the 6 classes; no anomalies yet) from the
# official repository's history, PasaLab/GADAM@8c9616d raw_dataset/ (deleted in 4264e12).
# PubMed's ind.pubmed.allx and ACM.mat could not be read here to pin their checksums (over the
# 4 MiB limit of the snapshot we read): they are not pinned (PubMed: PyG's own downloader).
# Books and Reddit with their organic anomalies: PyGOD's benchmark files (what
# pygod.utils.load_data fetches) from pygod-team/data at commit 77976df, one zip each holding
# ``<name>.pt`` (a torch_geometric Data; ``y`` = the organic anomaly labels).
PYGOD_COMMIT = "77976df4129f5f753907beea4945bd3e21d0251f"
_PYGOD_URL = f"https://raw.githubusercontent.com/pygod-team/data/{PYGOD_COMMIT}"
_PYGOD_PINS = {
    "books": ("c9de331ddf4c893e205fad552a9d1074c0fe4730edd7b47952f0c05ac360612c", 60_512),
    "reddit": ("276432d36219349b7ad98e974649f73c94e124e11f5282f53b1ec41086c1e18a", 2_410_608),
}
PLANETOID_PARTS = ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")
PLANETOID_COMMIT = "af6abf468a772cc055bec88c52e4d6f51b7c37e3"
GADAM_RAW_COMMIT = "8c9616d7b64f7dc90bde1258909f86a0585c9c74"
_PLANETOID_URL = f"https://raw.githubusercontent.com/kimiyoung/planetoid/{PLANETOID_COMMIT}/data"
_PLANETOID_SHA256 = {
    "cora": {
        "x": "23cfa55d91c6f624233f5eb7b6e3f141f1bd2b2ae39608a63cf5d084bb27baab",
        "tx": "b9afbaa4a400df991f6f02ef677e1e44da55ffc04801fd02f9e673987829226a",
        "allx": "9419ba2f26f5c35243db64aba110e0f35a04851609e0dc5433450676ca6b8543",
        "y": "94465c14eb53e04ca262198dcbb2521ee8af60fb3f3d546cd6ca24a511b0e7d1",
        "ty": "41f5ac76596a1699cc33f53084a2419e92961c42bb75f36fc38e616d348532ad",
        "ally": "2b998f5cc7fedc86e7f97ca2498f47a1ffc1462c29e2d578b23bf3f62b6e7d71",
        "graph": "58f13302f39dde8852dad6fe6d15b89b077b6d7f837626bce671ef80344b383d",
        "test.index": "297ce89af2b51a6a194181c7dbe1796c6a1cf9cd9349a88383b1b1e227867875",
    },
    "citeseer": {
        "x": "d20de19150741e555de0ed037195630fc194114ebc7fd72ced62810148aa22f6",
        "tx": "539a8906a2da97628d212f2fdd668c109a8b3f0d36574b59e5d3fd5b5303da21",
        "allx": "2ac30345d95c9ec933a817ee0bdd6a5f077f8c184a20e696910192d534414668",
        "y": "8ba87e515d8e3ee3cf52f6d2c5b86aa73f11ecad825a808455209ec26cd54924",
        "ty": "55e5bd1ba1e733a04598753ad1a8d57957f4b8f89e74519f41f4f4938767e4ce",
        "ally": "f704b2d986dde6c2669934de1f3ae5696a6cf9455c0f6b2646a2d135ea0a1c95",
        "graph": "d79a4ef9d3e7169aee8946145f6b7306e35bc79bffad26346cfb94e10e9912a7",
        "test.index": "2af990671580b6b2df5d158d1038f8292e30c9cd821b5453f399659b25b723d4",
    },
}
REMOTE: dict[str, tuple[RemoteFile, ...]] = {
    **{key: tuple(
        RemoteFile(url=f"{_PLANETOID_URL}/ind.{key}.{part}",
                   path=f"{PLANETOID[key]}/raw/ind.{key}.{part}", sha256=sha)
        for part, sha in files.items()) for key, files in _PLANETOID_SHA256.items()},
    "blogcatalog": (RemoteFile(
        url=f"https://raw.githubusercontent.com/PasaLab/GADAM/{GADAM_RAW_COMMIT}/raw_dataset/"
            "BlogCatalog/BlogCatalog.mat",
        path="BlogCatalog.mat",
        sha256="886e1d8dec043588247ef7188fe6459f2ba657b6b9211d73f255d28b42f06b0c",
        size=1_476_789),),
    **{key: (RemoteFile(url=f"{_PYGOD_URL}/{PYGOD[key]}.pt.zip", path=f"{PYGOD[key]}.pt.zip",
                        sha256=sha, size=size),) for key, (sha, size) in _PYGOD_PINS.items()},
}  # fmt: skip
# --download: the pinned files above, PyG's Planetoid downloader for PubMed (not pinned) and
# OGB's zip for ogbn-arxiv (not pinned)
DOWNLOADABLE = (*PLANETOID, *OGB, *REMOTE)
HOW_TO_GET = {
    "planetoid": "put the Planetoid raw files under <root>/<Name>/raw (torch_geometric.datasets.Planetoid "
    "layout), or pass --download (Cora and CiteSeer checked against pinned SHA-256)",
    "mat": "get <Name>.mat (keys Network, Attributes, Label) from the GADAM / CoLA repositories' "
    "raw_dataset folder (BlogCatalog: --download fetches it from PasaLab/GADAM@8c9616d, pinned)",
    "pygod": "pass --download (<name>.pt.zip of PyGOD's benchmark data, pygod-team/data@77976df, "
    "pinned SHA-256), or put that zip (or the <name>.pt in it) under <root>",
    "ogb": "put OGB's raw files (node-feat.csv.gz, edge.csv.gz) under <root>/ogbn_arxiv/raw (the layout "
    "`ogb.nodeproppred` downloads), or pass --download",
}


def download_pinned(names, root: str | Path, log=None) -> dict[str, str]:
    """``--download``: fetch the pinned files of ``names`` (those in :data:`REMOTE`) into
    ``root``, each checked against its SHA-256 before it is moved into place (one line and
    exit 2 on a failed request or a different checksum, nothing half-written left)."""
    files = [f for n in names for f in REMOTE.get(n.lower(), ())]
    got = download_files(root, files, log=log) if files else {}
    if files and log is not None:
        log.info("--download: %d pinned files of %s under %s, SHA-256 checked", len(files),
                 ", ".join(n for n in names if n.lower() in REMOTE), root)  # fmt: skip
    return got


def verify_pinned(names, root: str | Path) -> dict[str, str]:
    """Check every pinned file of the datasets ``names`` against its SHA-256 (a different
    copy is one line, exit 2) and return ``{path: sha256}``."""
    out = {}
    for n in names:
        if n.lower() in REMOTE and not _plain_pygod(n.lower(), Path(root)):
            out.update(verify_files(root, REMOTE[n.lower()], what=n, how_to_get=(
                "pass --download, or delete it and --download again")))  # fmt: skip
    return out


def data_checksums(names, root: str | Path) -> dict[str, str]:
    """The SHA-256 of every file the datasets ``names`` are read from (for the results file):
    the pinned ones verified (:func:`verify_pinned`), the others computed."""
    root, out = Path(root), verify_pinned(names, root)
    for n in names:
        if n.lower() not in REMOTE or _plain_pygod(n.lower(), root):
            out.update({str(f.relative_to(root)): sha256_of(f) for f in dataset_files(n, root)[0]})
    return out


def dataset_files(name: str, root: str | Path) -> tuple[list[Path], str]:
    """The files a paper dataset is read from under ``root``, and how to get them."""
    key, root = name.lower(), Path(root)
    if key in PLANETOID:
        raw = root / PLANETOID[key] / "raw"
        return [raw / f"ind.{key}.{part}" for part in PLANETOID_PARTS], HOW_TO_GET["planetoid"]
    if key in MAT:
        return [root / f"{MAT[key]}.mat"], HOW_TO_GET["mat"]
    if key in PYGOD:
        return [_pygod_file(key, root)], HOW_TO_GET["pygod"]
    if key in OGB:
        raw = root / OGB[key] / "raw"
        return [raw / "node-feat.csv.gz", raw / "edge.csv.gz"], HOW_TO_GET["ogb"]
    raise ValueError(f"unknown dataset {name!r}: choose from {sorted(DATASETS)}")


def _pygod_file(key: str, root: Path) -> Path:
    """``<name>.pt.zip`` (the pinned file), or a plain ``<name>.pt`` where only that is present."""
    plain = root / f"{PYGOD[key]}.pt"
    return plain if _plain_pygod(key, root) else root / f"{PYGOD[key]}.pt.zip"


def _plain_pygod(key: str, root: Path) -> bool:
    """A PyGOD graph given as a plain ``<name>.pt`` without the pinned zip (no pin to check)."""
    return (
        key in PYGOD
        and not (root / f"{PYGOD[key]}.pt.zip").exists()
        and (root / f"{PYGOD[key]}.pt").exists()
    )


def check_datasets(names, root: str | Path, download: bool = False) -> None:
    """Fail at once, before anything trains, naming every missing file of every dataset
    (datasets that ``download`` would fetch count as present)."""
    missing, how = [], []
    for name in names:
        if download and name.lower() in DOWNLOADABLE:
            continue
        files, hint = dataset_files(name, root)
        gone = [f for f in files if not f.exists()]
        if gone:
            missing += gone
            how += [f"{name}: {hint}"]
    if missing:
        raise MissingDataError(", ".join(names), missing, "; ".join(how))


def load_mat(path: str | Path) -> Data:
    """An attributed network in the `.mat` layout of ACM / BlogCatalog (Network, Attributes,
    Label). ``Label`` is either the anomaly labels (0/1: the files with injected anomalies,
    as CoLA ships them) -> ``label``, or the node classes (the raw files, e.g.
    PasaLab/GADAM@8c9616d ``raw_dataset/BlogCatalog``: classes 1-6) -> ``y``, with no
    ``label`` (anomalies are then injected by :func:`load_dataset`)."""
    import scipy.io as sio
    import scipy.sparse as sp

    path = Path(path)
    if not path.exists():
        raise MissingDataError(path.stem, [path], HOW_TO_GET["mat"])
    mat = sio.loadmat(path)
    for key in ("Network", "Attributes", "Label"):
        if key not in mat:
            raise ValueError(f"{path}: missing key {key!r} (expected Network, Attributes, Label)")
    adj = sp.coo_matrix(mat["Network"])
    feats = mat["Attributes"]
    feats = feats.toarray() if sp.issparse(feats) else np.asarray(feats)
    n = feats.shape[0]
    ei = _undirected_simple(np.stack([adj.row, adj.col]).astype(np.int64), n)
    raw = np.asarray(mat["Label"]).reshape(-1)
    data = Data(x=torch.as_tensor(feats, dtype=torch.float32), edge_index=torch.from_numpy(ei))
    if set(np.unique(raw).tolist()) <= {0, 1}:
        data.label = torch.as_tensor(raw > 0).long()
    else:  # node classes: a raw file without anomalies
        data.y = torch.as_tensor(raw.astype(np.int64))
    return data


def load_pygod(path: str | Path) -> Data:
    """A PyGOD benchmark graph saved with torch.save, as PyGOD ships it (``<name>.pt.zip``
    holding ``<name>.pt``) or unzipped; ``y`` = the organic anomaly labels -> ``label`` (0/1,
    y > 0), nothing injected. ``torch.load`` unpickles a Data object (weights_only=False): read
    only files you trust (the pinned ones are checked before anything loads them)."""
    import io
    import zipfile

    path = Path(path)
    if not path.exists():
        raise MissingDataError(path.name.split(".")[0], [path], HOW_TO_GET["pygod"])
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as z:
            raw = z.read(path.name[: -len(".zip")])
        data = torch.load(io.BytesIO(raw), weights_only=False)
    else:
        data = torch.load(path, weights_only=False)
    data.label = (
        (data.y.reshape(-1) > 0).long() if data.y.dim() == 1 else (data.y.sum(1) > 0).long()
    )
    return data


def load_planetoid(root: str | Path, name: str, download: bool = False) -> Data:
    """Cora / CiteSeer / PubMed through torch_geometric's Planetoid loader (labels = classes)."""
    from torch_geometric.datasets import Planetoid

    files, hint = dataset_files(name, root)
    if not download and not files[0].exists():
        raise MissingDataError(PLANETOID[name.lower()], files, hint)
    return Planetoid(str(root), PLANETOID[name.lower()])[0]


def download_ogb_raw(root: str | Path, name: str = "ogbn-arxiv") -> None:
    """Fetch OGB's zip with torch_geometric's downloader into ``<root>/ogbn_arxiv`` (the
    layout the `ogb` package makes)."""
    import shutil

    from torch_geometric.data import download_url, extract_zip

    root = Path(root)
    path = download_url(OGB_URL, str(root))
    extract_zip(path, str(root))
    Path(path).unlink()
    shutil.rmtree(root / OGB[name], ignore_errors=True)
    shutil.move(str(root / "arxiv"), str(root / OGB[name]))


def load_ogb_raw(root: str | Path, name: str = "ogbn-arxiv", download: bool = False) -> Data:
    """An OGB node-property graph from its raw CSVs (node-feat.csv.gz, edge.csv.gz), made
    undirected and simple; no `ogb` package needed."""
    files, hint = dataset_files(name, root)
    if download and not all(f.exists() for f in files):
        download_ogb_raw(root, name)
    missing = [p for p in files if not p.exists()]
    if missing:
        raise MissingDataError(name, missing, hint)
    x = np.loadtxt(files[0], delimiter=",", dtype=np.float32, ndmin=2)
    ei = np.loadtxt(files[1], delimiter=",", dtype=np.int64, ndmin=2).T
    return Data(x=torch.from_numpy(x), edge_index=torch.from_numpy(_undirected_simple(ei, len(x))))


def load_dataset(name: str, root: str | Path, *, download: bool = False, seed: int = 0,
                 max_cliques: int | None = None) -> Data:  # fmt: skip
    """A paper dataset with labels and features normalised as the generated graphs'
    (:func:`normalize_features`): Planetoid graphs, ogbn-arxiv and raw .mat graphs (whose
    ``Label`` holds classes) get anomalies injected with ``seed`` (the DOMINANT / PyGOD
    protocol: :data:`CLIQUES` cliques of 15 and as many contextual anomalies, 50 candidates,
    after normalisation as for the generated graphs; ``anomaly_type`` set); .mat graphs with
    0/1 anomaly labels and the PyGOD graphs carry their own labels (no ``anomaly_type``).
    The PyGOD graphs (Books, Reddit) keep their features as the file gives them, not
    normalised: the official repository's ``data/books.bin`` (PasaLab/GADAM@3c770a5) holds
    exactly books.pt's raw features (up to 193,978), edges and labels, and ``run.py`` feeds them
    unchanged, as PyGOD's detectors do.
    ``max_cliques`` caps the injected cliques (for miniature graphs; None: the protocol's)."""
    key = name.lower()
    root = Path(root)
    if key in PLANETOID:
        data = normalize_features(load_planetoid(root, key, download))
    elif key in MAT:
        data = normalize_features(load_mat(root / f"{MAT[key]}.mat"))
        if "label" in data:  # the file's own anomaly labels (shared by every seed)
            return data
    elif key in PYGOD:  # raw features, as the official books.bin / reddit.bin and PyGOD have them
        data = load_pygod(_pygod_file(key, root))
        data.x = data.x.float()
        return data
    elif key in OGB:
        data = normalize_features(load_ogb_raw(root, key, download))
    else:
        raise ValueError(f"unknown dataset {name!r}: choose from {sorted(DATASETS)}")
    cliques = min(CLIQUES[key], max_cliques or CLIQUES[key])
    return inject_anomalies(data, clique_size=15, num_cliques=cliques, seed=seed)

"""The paper preset (the official protocol, experiments/*.json: half of the rows are the
initial matrix, the rest arrives in equal batches; rank k, GKL/RPI depth and power
iterations as the paper's) end to end on a miniature of every dataset it reads, each written
in the real on-disk format of its public distribution:

* CISI ``CISI.ALL``, Cranfield ``cran.all.1400``, MEDLINE ``MED.ALL``: the SMART/Glasgow
  records (``.I n`` then ``.T`` / ``.A`` / ``.B`` / ``.W`` / ``.X`` fields, as each collection
  has them);
* MovieLens ``ratings.dat`` (ml-1m, ``UserID::MovieID::Rating::Timestamp``), ``ratings.csv``
  (ml-20m/25m, a ``userId,movieId,rating,timestamp`` header, half-star ratings) and
  ``u.data`` (ml-100k, tab-separated);
* SNAP ``soc-Slashdot0902.txt`` and ``soc-Epinions1.txt`` (four ``#`` header lines, then
  ``FromNodeId<TAB>ToNodeId``), and the Flickr ``edges.csv`` (``a,b`` per line, no header).

``cisi`` is the preset's own dataset; the others are the same preset with ``--dataset``.
Reduced (sizes only): 60 documents / 80 users / 60 nodes instead of 1 033-1 460 documents,
6 040-162 541 users and 75 879-80 513 nodes; rank k = 8 (64); 4 updates per stream (100);
20 ranked users (3 000); 4 node batches (100).
"""

import numpy as np
import pytest
from iclr24_svd_update.data import load_dataset
from iclr24_svd_update.experiment import app

from iclr24_common.testing import run_paper_preset

WORDS = ("library information retrieval system index classification catalog document user "
         "search query citation journal science research analysis method data").split()  # fmt: skip


def _text(rng, n):
    return " ".join(rng.choice(WORDS, n))


def write_smart(path, n_docs, fields, rng):
    """A SMART/Glasgow collection: ``.I <id>`` records with the given fields in order."""
    out = []
    for i in range(1, n_docs + 1):
        out.append(f".I {i}")
        for f in fields:
            out.append(f".{f}")
            if f == "X":  # CISI's cross-references: "<doc>\t<n>\t<doc>"
                out.append(f"{i}\t5\t{i}")
            elif f == "A":
                out.append("Smith, J.")
            elif f == "B":
                out.append("j. ae. scs. 25, 1958, 324.")
            else:
                out += [_text(rng, 8), "  " + _text(rng, 6) + " ."]
    path.write_text("\n".join(out) + "\n", encoding="latin-1")


def write_ratings(folder, kind, rng, n=600):
    """80 users x 40 movies; each (user, movie) pair rated once, as in MovieLens."""
    pairs = rng.permutation(80 * 40)[:n]
    pairs[:80] = np.arange(80) * 40 + rng.integers(0, 40, 80)  # every user rates
    pairs = np.unique(pairs)
    users, items = pairs // 40 + 1, pairs % 40 + 1
    if kind == "ratings.dat":
        lines = [f"{u}::{i}::{rng.integers(1, 6)}::97830{k:04d}" for k, (u, i) in
                 enumerate(zip(users, items))]  # fmt: skip
    elif kind == "ratings.csv":
        lines = ["userId,movieId,rating,timestamp"] + [
            f"{u},{i},{rng.integers(1, 11) / 2:.1f},11473{k:05d}"
            for k, (u, i) in enumerate(zip(users, items))
        ]
    else:  # u.data
        lines = [f"{u}\t{i}\t{rng.integers(1, 6)}\t8812{k:05d}" for k, (u, i) in
                 enumerate(zip(users, items))]  # fmt: skip
    (folder / kind).write_text("\n".join(lines) + "\n")


def write_edges(path, rng, snap_title=None, n_nodes=60, n_edges=300):
    a, b = rng.integers(0, n_nodes, n_edges), rng.integers(0, n_nodes, n_edges)
    a[:n_nodes], b[:n_nodes] = np.arange(n_nodes), (np.arange(n_nodes) + 1) % n_nodes  # a ring
    if snap_title is None:  # Flickr edges.csv
        path.write_text("".join(f"{x + 1},{y + 1}\n" for x, y in zip(a, b)))
        return
    head = (f"# Directed graph (each unordered pair of nodes is saved once): {snap_title} \n"
            f"# {snap_title} social network\n# Nodes: {n_nodes} Edges: {n_edges}\n"
            "# FromNodeId\tToNodeId\n")  # fmt: skip
    path.write_text(head + "".join(f"{x}\t{y}\n" for x, y in zip(a, b)))


FILES = {
    "cisi": "CISI.ALL",
    "cran": "cran.all.1400",
    "med": "MED.ALL",
    "movielens": "ratings.dat",
    "slashdot": "soc-Slashdot0902.txt",
    "epinions": "soc-Epinions1.txt",
    "flickr": "edges.csv",
}


def write_dataset(root, name, seed=0, filename=None):
    rng = np.random.default_rng(seed)
    folder = root / "svd-update" / name
    folder.mkdir(parents=True, exist_ok=True)
    filename = filename or FILES[name]
    if name in ("cisi", "cran", "med"):
        fields = {"cisi": "TAWX", "cran": "TABW", "med": "W"}[name]
        write_smart(folder / filename, 60, fields, rng)
    elif name == "movielens":
        write_ratings(folder, filename, rng)
    else:
        title = {"slashdot": "Slashdot0902.txt", "epinions": "soc-Epinions1.txt"}.get(name)
        write_edges(folder / filename, rng, title)


@pytest.mark.parametrize("filename", ["ratings.dat", "ratings.csv", "u.data"])
def test_movielens_miniatures_read_in_every_format(tmp_path, filename):
    write_dataset(tmp_path, "movielens", filename=filename)
    A = load_dataset("movielens", tmp_path)
    assert A.shape == (80, 40) and A.nnz > 80 and 0.5 <= A.data.min() <= A.data.max() <= 5


def test_text_and_graph_miniatures_read_back(tmp_path):
    for name in FILES:
        write_dataset(tmp_path, name)
    for name in ("cisi", "cran", "med"):
        A = load_dataset(name, tmp_path)
        assert A.shape[0] == 60 and A.shape[1] >= 10, name
    for name in ("slashdot", "epinions", "flickr"):
        A = load_dataset(name, tmp_path)
        assert A.shape == (60, 60) and (A != A.T).nnz == 0, name


SIZES = {"k": 8, "n_batches": 4, "eval_users": 20, "sbm_batches": 4}


@pytest.mark.parametrize("dataset", list(FILES))
def test_paper_preset_runs_on_miniature(tmp_path, dataset):
    data = tmp_path / "data"
    write_dataset(data, dataset)
    extra = [] if dataset == "cisi" else ["--dataset", dataset]  # cisi: the preset's own
    res = run_paper_preset(app, data, tmp_path / "run", sets=SIZES, extra=extra)
    assert res["config"]["dataset"] == dataset and res["dataset"] == dataset
    assert res["claims"]
    same = [c for c in res["checks"] if c["id"] == "same-as-baseline"]
    assert same and same[0]["holds"]  # an identity of the algorithm, on every dataset


def test_paper_cpu_preset_runs_on_a_gzipped_slashdot_miniature(tmp_path, monkeypatch):
    """The paper-cpu preset: the real Slashdot file as fetched (gzipped SNAP edge list, its
    pin pointed at the miniature's SHA-256), the generated rows, half of each matrix
    initial; sizes capped (200 nodes, 8 updates of 4 nodes; a 3k x 1k matrix, k = 8, 4
    updates), seeds 0 and 1."""
    import gzip
    import hashlib
    from dataclasses import replace

    from iclr24_svd_update import data as D

    data = tmp_path / "data"
    write_dataset(data, "slashdot")
    folder = data / "svd-update" / "slashdot"
    plain = folder / "soc-Slashdot0902.txt"
    write_edges(plain, np.random.default_rng(1), "Slashdot0902.txt", n_nodes=200, n_edges=900)
    body = gzip.compress(plain.read_bytes())
    (folder / "soc-Slashdot0902.txt.gz").write_bytes(body)
    plain.unlink()
    (f,) = D.REMOTE["slashdot"]
    pinned = replace(f, sha256=hashlib.sha256(body).hexdigest(), size=len(body))
    monkeypatch.setitem(D.REMOTE, "slashdot", (pinned,))
    sets = {"k": 8, "n_batches": 4, "eval_users": 40, "sbm_batches": 8, "n_users": 3000,
            "n_items": 1000, "seeds": "0,1"}  # fmt: skip
    res = run_paper_preset(app, data, tmp_path / "run", sets=sets, preset="paper-cpu")
    assert res["network_dataset"] == "slashdot"
    assert res["data_files"] == {"slashdot/soc-Slashdot0902.txt.gz": pinned.sha256}
    claims = {c["id"]: c for c in res["claims"]}
    assert {"speedup-s10", "speedup-s100", "network-speedup", "precision-as-baselines"} <= set(
        claims
    )
    assert claims["network-speedup"]["regime"] == "below"  # 200 nodes: not the paper's size
    assert "200 nodes" in claims["network-speedup"]["statement"]
    same = [c for c in res["checks"] if c["id"] == "same-as-baseline"]
    assert same and same[0]["holds"]

"""The paper preset end to end on miniatures of its nine datasets, each in the real file format
its loader opens under ``<data-dir>/gadam/``:

- Cora / CiteSeer / PubMed: the Planetoid raw files ``<Name>/raw/ind.<name>.{x, tx, allx, y, ty,
  ally, graph, test.index}`` (python-2 pickles of scipy CSR features and one-hot label arrays, a
  dict of adjacency lists, a text file of test ids), read by torch_geometric's ``Planetoid``;
- ACM / BlogCatalog: ``<Name>.mat`` with ``Network`` (sparse adjacency), ``Attributes``
  (sparse) and ``Label`` (N x 1), read by ``scipy.io.loadmat``: ACM with 0/1 anomaly labels
  (as CoLA ships it), BlogCatalog raw with its classes 1-6 (as PasaLab/GADAM@8c9616d's
  ``raw_dataset`` holds it: anomalies injected per seed);
- books / reddit: ``<name>.pt``, a ``torch.save``d PyG ``Data`` with ``x``, ``edge_index`` and
  ``y`` (PyGOD's benchmark layout);
- ogbn-arxiv: ``ogbn_arxiv/raw/node-feat.csv.gz`` and ``edge.csv.gz`` (OGB's raw layout).

The pinned checksums of Cora, CiteSeer and BlogCatalog (``data.REMOTE``) are those of the
miniatures here (the real files' pins are tested in test_gadam_download.py), so the run takes the
real path: verify every pinned file, record every file's SHA-256.

Reduced: 600-node Planetoid graphs (the loader needs 500 validation ids after the training
ones), 150-300 nodes elsewhere, 700 for ogbn-arxiv; 2 injected cliques of 15 instead of 5 / 20 /
200 (``max_cliques``); 2 epochs for GADAM's stages and the autoencoders, 1 CoLA epoch with 2
scoring rounds; 1 seed; the dense detectors skip ogbn-arxiv as in the real run (which skips them
above 20,000 nodes) with the limit at 650 nodes. ogbn-arxiv runs the official mini-batch GADAM.
"""

import gzip
import pickle
import zipfile
from collections import defaultdict
from dataclasses import replace

import numpy as np
import scipy.io as sio
import scipy.sparse as sp
import torch
from iclr24_gadam import data as D
from iclr24_gadam.experiment import app
from torch_geometric.data import Data

from iclr24_common import sha256_of
from iclr24_common.testing import run_paper_preset


def _graph(rng, n, avg_degree=4):
    """A random sparse undirected edge list (2, E) without self-loops."""
    src = rng.integers(0, n, size=n * avg_degree // 2)
    dst = (src + rng.integers(1, n, size=src.size)) % n
    return np.stack([np.concatenate([src, dst]), np.concatenate([dst, src])])


def _features(rng, n, d, density=0.05):
    return (rng.random((n, d)) < density).astype(np.float32)


def _dump(path, obj):
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=2)


def write_planetoid(root, name, rng, n=600, d=60, classes=4, n_train=20, n_test=100):
    """Planetoid's raw split: x/y the labelled training rows, allx/ally every row before the
    test rows, tx/ty the test rows, whose ids are listed (shuffled) in test.index."""
    raw = root / name / "raw"
    raw.mkdir(parents=True)
    x, labels = _features(rng, n, d), rng.integers(0, classes, size=n)
    onehot = np.eye(classes, dtype=np.int64)[labels]
    n_all = n - n_test
    test_ids = rng.permutation(np.arange(n_all, n))
    pre = f"ind.{name.lower()}"
    _dump(raw / f"{pre}.x", sp.csr_matrix(x[:n_train]))
    _dump(raw / f"{pre}.y", onehot[:n_train])
    _dump(raw / f"{pre}.allx", sp.csr_matrix(x[:n_all]))
    _dump(raw / f"{pre}.ally", onehot[:n_all])
    _dump(raw / f"{pre}.tx", sp.csr_matrix(x[test_ids]))  # in test.index's order
    _dump(raw / f"{pre}.ty", onehot[test_ids])
    graph = defaultdict(list)
    for a, b in _graph(rng, n).T:
        graph[int(a)].append(int(b))
    _dump(raw / f"{pre}.graph", graph)
    (raw / f"{pre}.test.index").write_text("".join(f"{i}\n" for i in test_ids))


def write_mat(root, name, rng, n=200, d=50, classes=False):
    """``classes``: the raw layout (Label = the classes 1-6, no anomalies), else 0/1 anomaly
    labels."""
    ei = _graph(rng, n)
    adj = sp.csc_matrix((np.ones(ei.shape[1]), (ei[0], ei[1])), shape=(n, n))
    label = np.zeros((n, 1), dtype=np.int64)
    label[rng.choice(n, 12, replace=False)] = 1
    if classes:
        label = rng.integers(1, 7, (n, 1)).astype(np.uint8)
    sio.savemat(root / f"{name}.mat", {"Network": adj, "Attributes": sp.csc_matrix(
        _features(rng, n, d)), "Label": label})  # fmt: skip


def write_pygod(root, name, rng, n=150, d=21, zipped=True):
    """PyGOD's layout: ``<name>.pt.zip`` holding ``<name>.pt`` (``zipped=False``: the plain
    ``.pt``, which the loader also reads)."""
    y = torch.zeros(n, dtype=torch.bool)  # books.pt's y is bool, reddit.pt's float 0/1
    y[torch.from_numpy(rng.choice(n, 8, replace=False))] = True
    data = Data(x=torch.from_numpy(rng.standard_normal((n, d)).astype(np.float32)),
                edge_index=torch.from_numpy(_graph(rng, n)), y=y)  # fmt: skip
    torch.save(data, root / f"{name}.pt")
    if zipped:
        with zipfile.ZipFile(root / f"{name}.pt.zip", "w") as z:
            z.write(root / f"{name}.pt", f"{name}.pt")
        (root / f"{name}.pt").unlink()


def write_ogb_raw(root, rng, n=700, d=16):
    raw = root / "ogbn_arxiv" / "raw"
    raw.mkdir(parents=True)
    with gzip.open(raw / "node-feat.csv.gz", "wt") as f:  # 128 floats a row in the real file
        np.savetxt(f, rng.standard_normal((n, d)).astype(np.float32), delimiter=",", fmt="%.6f")
    ei = _graph(rng, n)[:, : n * 2]  # directed citations, one way
    with gzip.open(raw / "edge.csv.gz", "wt") as f:
        np.savetxt(f, ei.T, delimiter=",", fmt="%d")


def test_paper_preset_runs_on_miniatures_of_every_dataset(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    root = tmp_path / "data" / "gadam"
    root.mkdir(parents=True)
    for name in ("Cora", "CiteSeer", "PubMed"):
        write_planetoid(root, name, rng)
    write_mat(root, "ACM", rng)
    write_mat(root, "BlogCatalog", rng, classes=True)
    write_pygod(root, "books", rng)  # the pinned zip
    write_pygod(root, "reddit", rng, zipped=False)  # a plain .pt: no pin to check
    for key, files in D.REMOTE.items():  # pin the miniatures
        monkeypatch.setitem(D.REMOTE, key, tuple(replace(f, sha256=sha256_of(root / f.path))
                                                 for f in files if (root / f.path).exists()))  # fmt: skip
    write_ogb_raw(root, rng)
    sets = {"seeds": 0, "max_cliques": 2, "dense_max_nodes": 650,
            "gadam.local_epochs": 2, "gadam.global_epochs": 2, "gae.epochs": 2,
            "dominant.epochs": 2, "anomalydae.epochs": 2, "cola.epochs": 1,
            "cola.test_rounds": 2}  # fmt: skip
    res = run_paper_preset(app, tmp_path / "data", tmp_path / "run", sets=sets)
    names = ("cora", "citeseer", "pubmed", "acm", "blogcatalog", "books", "reddit", "ogbn-arxiv")
    ids = {c["id"] for c in res["claims"]}
    assert ids == {f"{k}-{g}" for g in names for k in ("beats-baselines", "global-stage")}
    assert all(c["holds"] for c in res["checks"]), [c for c in res["checks"] if not c["holds"]]
    for c in res["claims"]:  # labels shipped with the file: every seed scores the same anomalies
        shared = c["id"].split("-", 2)[-1] in ("acm", "books", "reddit")
        assert c["test_set"] == ("shared" if shared else "per-seed"), c["id"]
        assert (c["test"]["se_basis"] == "items") == shared, c["id"]
        assert c["regime"] == "below"  # cut epochs and cliques: not the paper's setting
    assert res["data_files"]["BlogCatalog.mat"] == sha256_of(root / "BlogCatalog.mat")
    assert set(res["data_files"]) >= {f"Cora/raw/ind.cora.{p}" for p in D.PLANETOID_PARTS}
    assert res["data_files"]["books.pt.zip"] == sha256_of(root / "books.pt.zip")  # pinned
    assert "reddit.pt" in res["data_files"]  # not pinned: its checksum recorded all the same
    m = res["metrics"]
    for g in names:  # every detector scored every graph; the dense ones all but ogbn-arxiv
        for method in ("gadam", "gadam_local", "gadam_random", "degree", "feat_inconsistency",
                       "gae", "cola"):  # fmt: skip
            assert f"{g}/{method}/auc" in m, (g, method)
        assert (f"{g}/dominant/auc" in m) == (g != "ogbn-arxiv")
    for g in ("acm", "blogcatalog"):  # run.py's 400 CoLA epochs there; the --set cap wins
        assert m[f"{g}/cola/epochs"]["per_seed"] == [1.0]
    assert m["cora/gadam/auc"]["per_seed"] == [m["cora/gadam/auc"]["mean"]]  # 1 seed


def test_paper_cpu_preset_is_the_papers_setting_on_three_datasets():
    from iclr24_gadam.claims import detection_regime
    from iclr24_gadam.experiment import PRESETS
    from iclr24_gadam.gadam import GADAMConfig

    p = PRESETS["paper-cpu"]
    assert p.datasets == ("cora", "citeseer", "blogcatalog", "books") and len(p.seeds) >= 3
    assert 717 in p.seeds and p.gadam == GADAMConfig()  # run.py --seed 717 and its defaults
    assert {detection_regime(p, g)[0] for g in p.datasets} == {"paper"}
    assert all(g in D.REMOTE for g in p.datasets)  # every file pinned

"""``--download`` of the paper's raw files against a local HTTP server on 127.0.0.1 (no
network): the pinned Planetoid raw files and BlogCatalog.mat are declared with their SHA-256
(data.REMOTE); a good file is fetched, checked and moved into place, a corrupted one or a 404 is
one line and exit 2 with nothing left in the data folder; the paper preset verifies the files
and records their checksums; a raw ``.mat`` (classes in ``Label``) gets anomalies injected."""

import hashlib
import io
import json
from dataclasses import replace

import numpy as np
import pytest
import scipy.io as sio
import scipy.sparse as sp
from iclr24_gadam import data as D
from iclr24_gadam.experiment import main

from iclr24_common import sha256_of
from iclr24_common.testing import serve_files


def raw_blogcatalog(n=120, d=30, seed=0) -> bytes:
    """A miniature of the raw BlogCatalog.mat: Network, Attributes (counts), Label = classes
    1-6 (no anomalies)."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, 4 * n)
    dst = (src + rng.integers(1, n, src.size)) % n
    adj = sp.csc_matrix((np.ones(2 * src.size), (np.r_[src, dst], np.r_[dst, src])), shape=(n, n))
    feats = sp.csc_matrix(rng.poisson(0.3, (n, d)).astype(float))
    buf = io.BytesIO()
    sio.savemat(buf, {"Network": adj, "Attributes": feats,
                      "Label": rng.integers(1, 7, (n, 1)).astype(np.uint8)})  # fmt: skip
    return buf.getvalue()


GOOD = raw_blogcatalog()


@pytest.fixture
def server():
    """/BlogCatalog.mat: the pinned bytes; /corrupt.mat: one byte changed; 404 elsewhere."""
    served = {"/BlogCatalog.mat": GOOD, "/corrupt.mat": GOOD[:-1] + bytes([GOOD[-1] ^ 1])}

    with serve_files(served) as url:
        yield url


def pin(monkeypatch, url: str) -> None:
    """BlogCatalog's pinned file served from ``url`` with the miniature's SHA-256."""
    f = replace(D.REMOTE["blogcatalog"][0], url=url, sha256=hashlib.sha256(GOOD).hexdigest(),
                size=len(GOOD))  # fmt: skip
    monkeypatch.setitem(D.REMOTE, "blogcatalog", (f,))


TINY = ["--set", "max_cliques=1", "--set", "gadam.local_epochs=2", "--set",
        "gadam.global_epochs=2", "--set", "gae.epochs=1", "--set", "dominant.epochs=1",
        "--set", "anomalydae.epochs=1", "--set", "cola.epochs=1", "--set", "cola.test_rounds=1",
        "--seeds", "0", "--threads", "1"]  # fmt: skip


def reproduce(tmp_path, *extra):
    return main(["reproduce", "--preset", "paper", "--datasets", "blogcatalog", "--download",
                 "--data-dir", str(tmp_path / "data"), "--out", str(tmp_path / "run"), *TINY,
                 *extra])  # fmt: skip


def test_a_good_file_is_fetched_verified_and_its_checksum_recorded(server, tmp_path, monkeypatch):
    pin(monkeypatch, f"{server}/BlogCatalog.mat")
    assert reproduce(tmp_path) == 0
    path = tmp_path / "data" / "gadam" / "BlogCatalog.mat"
    assert path.read_bytes() == GOOD
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["data_files"] == {"BlogCatalog.mat": sha256_of(path)}
    # a raw file (classes in Label): anomalies injected per seed, so the test set is per seed
    assert {c["test_set"] for c in res["claims"]} == {"per-seed"}


@pytest.mark.parametrize("name, message", [("corrupt.mat", "not the pinned"),
                                           ("absent.mat", "cannot fetch.*404")])  # fmt: skip
def test_a_bad_download_is_one_line_exit_2_and_leaves_nothing(server, tmp_path, monkeypatch,
                                                              capsys, name, message):  # fmt: skip
    pin(monkeypatch, f"{server}/{name}")
    assert reproduce(tmp_path) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("iclr24-gadam")]
    assert len(err) == 1 and __import__("re").search(message, err[0]), err
    assert [p for p in (tmp_path / "data").rglob("*") if p.is_file()] == []
    assert not (tmp_path / "run" / "results.json").exists()


def test_a_different_copy_in_place_is_refused_before_any_fit(tmp_path, monkeypatch, capsys):
    pin(monkeypatch, "http://127.0.0.1:9/unused")
    root = tmp_path / "data" / "gadam"
    root.mkdir(parents=True)
    (root / "BlogCatalog.mat").write_bytes(raw_blogcatalog(seed=1))  # another file
    code = main(["reproduce", "--preset", "paper", "--datasets", "blogcatalog", "--data-dir",
                 str(tmp_path / "data"), "--out", str(tmp_path / "run"), *TINY])  # fmt: skip
    assert code == 2 and "is not the pinned" in capsys.readouterr().err
    assert not list((tmp_path / "run").rglob("*.pkl"))  # stopped before any unit


def test_the_pins_name_the_public_sources():
    urls = [f.url for files in D.REMOTE.values() for f in files]
    assert len(D.REMOTE["cora"]) == len(D.REMOTE["citeseer"]) == 8  # every Planetoid raw file
    assert all(u.startswith("https://raw.githubusercontent.com/") for u in urls)
    assert all(D.PLANETOID_COMMIT in f.url for k in ("cora", "citeseer") for f in D.REMOTE[k])
    assert D.GADAM_RAW_COMMIT in D.REMOTE["blogcatalog"][0].url
    assert all(len(f.sha256) == 64 for files in D.REMOTE.values() for f in files)


def test_a_raw_mat_gets_injected_anomalies_a_labelled_one_keeps_its_own(tmp_path):
    (tmp_path / "BlogCatalog.mat").write_bytes(GOOD)
    g = D.load_dataset("blogcatalog", tmp_path, seed=3, max_cliques=2)
    assert int(g.label.sum()) == 60 and (g.anomaly_type == 2).sum() == 30  # 2 x 15 + 30
    assert g.y.min() >= 1  # the classes kept apart from the anomaly labels
    assert float(g.x.sum(1).max()) <= 1 + 1e-6  # rows normalised as the generated graphs'
    again = D.load_dataset("blogcatalog", tmp_path, seed=3, max_cliques=2)
    assert (again.label == g.label).all()  # the seed fixes the injection
    other = D.load_dataset("blogcatalog", tmp_path, seed=4, max_cliques=2)
    assert not (other.label == g.label).all()
    m = sio.loadmat(io.BytesIO(GOOD))
    m["Label"] = (np.arange(120) % 10 == 0).astype(np.int64)[:, None]  # 0/1: anomaly labels
    sio.savemat(tmp_path / "ACM.mat", {k: m[k] for k in ("Network", "Attributes", "Label")})
    acm = D.load_dataset("acm", tmp_path, seed=3)
    assert int(acm.label.sum()) == 12 and getattr(acm, "anomaly_type", None) is None


def tiny_pygod_zip(name: str = "books") -> bytes:
    """A miniature of PyGOD's ``<name>.pt.zip``: one member ``<name>.pt``, a Data whose bool
    ``y`` marks 2 organic anomalies of 6 nodes."""
    import zipfile

    import torch
    from torch_geometric.data import Data

    data = Data(x=torch.arange(18, dtype=torch.float32).reshape(6, 3),
                edge_index=torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]]),
                y=torch.tensor([False, True, False, False, True, False]))  # fmt: skip
    raw, out = io.BytesIO(), io.BytesIO()
    torch.save(data, raw)
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(f"{name}.pt", raw.getvalue())
    return out.getvalue()


def test_the_pygod_pins_name_pygods_public_files():
    for key in ("books", "reddit"):
        (f,) = D.REMOTE[key]
        assert f.url == ("https://raw.githubusercontent.com/pygod-team/data/"
                         f"{D.PYGOD_COMMIT}/{key}.pt.zip")  # fmt: skip
        assert f.path == f"{key}.pt.zip" and len(f.sha256) == 64 and f.size > 0
    assert D.REMOTE["books"][0].size == 60_512 and D.REMOTE["reddit"][0].size == 2_410_608
    assert {"books", "reddit"} <= set(D.DOWNLOADABLE)


def test_a_pygod_zip_is_downloaded_checked_and_loads_its_organic_anomalies(tmp_path, monkeypatch):
    import torch

    body = tiny_pygod_zip()
    with serve_files({"/books.pt.zip": body}) as url:
        f = replace(D.REMOTE["books"][0], url=f"{url}/books.pt.zip",
                    sha256=hashlib.sha256(body).hexdigest(), size=len(body))  # fmt: skip
        monkeypatch.setitem(D.REMOTE, "books", (f,))
        D.download_pinned(["books"], tmp_path)
    assert (tmp_path / "books.pt.zip").read_bytes() == body
    assert D.verify_pinned(["books"], tmp_path) == {"books.pt.zip": f.sha256}
    for seed in (0, 1):  # the file's labels on every seed: nothing injected
        g = D.load_dataset("books", tmp_path, seed=seed, max_cliques=1)
        assert g.label.tolist() == [0, 1, 0, 0, 1, 0]  # label = y > 0
        assert getattr(g, "anomaly_type", None) is None and g.edge_index.shape[1] == 4
        assert g.x.dtype == torch.float32 and g.x[5, 2] == 17.0  # raw, as the official .bin
    # a plain books.pt (the zip's member) is read too, with no pin to check
    (tmp_path / "books.pt.zip").rename(tmp_path / "zipped")
    import zipfile

    (tmp_path / "books.pt").write_bytes(zipfile.ZipFile(tmp_path / "zipped").read("books.pt"))
    assert D.dataset_files("books", tmp_path)[0] == [tmp_path / "books.pt"]
    assert D.verify_pinned(["books"], tmp_path) == {}
    assert D.load_dataset("books", tmp_path).label.sum() == 2
    # neither: one error naming the pinned zip and how to get it
    (tmp_path / "books.pt").unlink()
    with pytest.raises(D.MissingDataError, match="download"):
        D.check_datasets(["books"], tmp_path)

"""``--download`` of the paper's Slashdot graph against a local HTTP server on 127.0.0.1 (no
network): the pinned file (``data.REMOTE``: the raw GitHub URL of a public copy of SNAP's
soc-Slashdot0902.txt.gz at one commit, SHA-256 and size) is fetched, checked and moved into
place, and the run records its checksum (``data_files``); a corrupted file or a 404 is one
line and exit 2 with nothing left in the data folder; a different copy in place is refused
before any unit of work."""

import gzip
import hashlib
import json
import re
from dataclasses import replace

import numpy as np
import pytest
from iclr24_svd_update import data as D
from iclr24_svd_update.experiment import main

from iclr24_common.testing import serve_files


def slashdot_gz(seed: int = 0, n_nodes: int = 160, n_edges: int = 700) -> bytes:
    """A miniature SNAP edge list, gzipped as the public file is."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, n_nodes, n_edges), rng.integers(0, n_nodes, n_edges)
    a[:n_nodes], b[:n_nodes] = np.arange(n_nodes), (np.arange(n_nodes) + 1) % n_nodes
    head = ("# Directed graph (each unordered pair of nodes is saved once): Slashdot0902.txt \n"
            f"# Slashdot Zoo social network\n# Nodes: {n_nodes} Edges: {n_edges}\n"
            "# FromNodeId\tToNodeId\n")  # fmt: skip
    return gzip.compress((head + "".join(f"{x}\t{y}\n" for x, y in zip(a, b))).encode())


GOOD = slashdot_gz()


@pytest.fixture
def server():
    with serve_files({"/good.gz": GOOD, "/corrupt.gz": GOOD[:-9] + b"\0" * 9}) as url:
        yield url


def pin(monkeypatch, url: str) -> None:
    (f,) = D.REMOTE["slashdot"]
    pinned = replace(f, url=url, sha256=hashlib.sha256(GOOD).hexdigest(), size=len(GOOD))
    monkeypatch.setitem(D.REMOTE, "slashdot", (pinned,))


TINY = ["--set", "k=8", "--set", "n_batches=3", "--set", "eval_users=30", "--set",
        "sbm_batches=6", "--set", "n_users=2000", "--set", "n_items=800", "--seeds", "0",
        "--threads", "1"]  # fmt: skip


def reproduce(tmp_path, *extra):
    return main(["reproduce", "--preset", "paper-cpu", "--data-dir", str(tmp_path / "data"),
                 "--out", str(tmp_path / "run"), *TINY, *extra])  # fmt: skip


def test_a_good_download_is_checked_and_its_checksum_recorded(server, tmp_path, monkeypatch):
    pin(monkeypatch, f"{server}/good.gz")
    assert reproduce(tmp_path, "--download") == 0
    got = tmp_path / "data" / "svd-update" / "slashdot" / "soc-Slashdot0902.txt.gz"
    assert got.read_bytes() == GOOD
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["data_files"] == {
        "slashdot/soc-Slashdot0902.txt.gz": hashlib.sha256(GOOD).hexdigest()
    }
    assert res["metrics"]["network/matrix/nodes"]["mean"] == 160


@pytest.mark.parametrize("name, message", [("corrupt.gz", "not the pinned"),
                                           ("absent.gz", "cannot fetch.*404")])  # fmt: skip
def test_a_bad_download_is_one_line_exit_2_and_leaves_nothing(server, tmp_path, monkeypatch,
                                                              capsys, name, message):  # fmt: skip
    pin(monkeypatch, f"{server}/{name}")
    assert reproduce(tmp_path, "--download") == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("iclr24-svd-update")]
    assert len(err) == 1 and re.search(message, err[0]), err
    left = [p for p in (tmp_path / "data").rglob("*") if p.is_file()]
    assert left == [], left
    assert not (tmp_path / "run" / "results.json").exists()


def test_a_different_copy_in_place_is_refused_before_any_unit(tmp_path, monkeypatch, capsys):
    pin(monkeypatch, "http://127.0.0.1:9/never")
    folder = tmp_path / "data" / "svd-update" / "slashdot"
    folder.mkdir(parents=True)
    (folder / "soc-Slashdot0902.txt.gz").write_bytes(slashdot_gz(seed=1))  # another file
    assert reproduce(tmp_path) == 2
    assert "is not the pinned" in capsys.readouterr().err
    assert not list((tmp_path / "run").rglob("*.pkl"))


def test_a_dataset_without_a_pinned_copy_is_one_line(tmp_path, capsys):
    code = main(["reproduce", "--preset", "paper", "--dataset", "med", "--download",
                 "--data-dir", str(tmp_path / "data"), "--out", str(tmp_path / "run")])  # fmt: skip
    assert code == 2 and "no pinned public copy of med" in capsys.readouterr().err


def test_the_pin_names_one_commit_of_a_public_copy():
    (f,) = D.REMOTE["slashdot"]
    assert len(D.SLASHDOT_COMMIT) == 40 and D.SLASHDOT_COMMIT in f.url
    assert f.url.startswith("https://raw.githubusercontent.com/") and f.size == 3246522
    assert f.path == "slashdot/soc-Slashdot0902.txt.gz" and len(f.sha256) == 64

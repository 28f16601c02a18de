"""``--download`` of the official preprocessed CSVs against a local HTTP server on 127.0.0.1
(no network): COMPAS and Heart Disease are pinned (``data.REMOTE``: raw GitHub URLs of
retna319/SMNN at ``data.OFFICIAL_COMMIT``, SHA-256 each); a good file is fetched, checked and
moved into place, and the paper preset records the checksums in ``results.json``
(``data_files``); a corrupted file or a 404 is one line and exit 2 with nothing left in the
data folder; a different copy already in place is refused before any fit."""

import hashlib
import io
import json
import re
from dataclasses import replace

import numpy as np
import pytest
from iclr24_smnn import data as D
from iclr24_smnn.experiment import main

from iclr24_common.testing import serve_files


def heart_csv(n: int, seed: int) -> bytes:
    """A miniature of the official ``heart/{train,test}.csv``: ``numpy.savetxt`` output, 13
    features in [0, 1], then the 0/1 label."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 13))
    y = (X[:, 3] + X[:, 4] > 1).astype(float)
    buf = io.StringIO()
    np.savetxt(buf, np.column_stack([X, y]), delimiter=",")
    return buf.getvalue().encode()


GOOD = {"heart/train.csv": heart_csv(40, 0), "heart/test.csv": heart_csv(12, 1)}


@pytest.fixture
def server():
    """/heart/train.csv and /heart/test.csv: the pinned bytes; /corrupt/test.csv: one byte
    changed; 404 elsewhere."""
    bad = GOOD["heart/test.csv"]
    served = {f"/{k}": v for k, v in GOOD.items()}
    served["/corrupt/test.csv"] = bad[:-2] + (b"0\n" if bad[-2:] != b"0\n" else b"1\n")

    with serve_files(served) as url:
        yield url


def pin(monkeypatch, base: str, test_url: str | None = None) -> None:
    """Heart's two pinned files served from ``base`` with the miniatures' SHA-256 (the test
    file from ``test_url`` where given)."""
    files = []
    for f in D.REMOTE["heart"]:
        body = GOOD[f.path]
        url = test_url if (test_url and f.path.endswith("test.csv")) else f"{base}/{f.path}"
        files.append(replace(f, url=url, sha256=hashlib.sha256(body).hexdigest(),
                             size=len(body)))  # fmt: skip
    monkeypatch.setitem(D.REMOTE, "heart", tuple(files))


TINY = ["--set", "tasks=paper_datasets", "--set", "datasets=heart", "--set",
        "models=smnn,lmn,gbm", "--set", "tune=false", "--set", "max_epochs=2", "--set",
        "patience=1", "--seeds", "0", "--threads", "1"]  # fmt: skip


def reproduce(tmp_path, *extra):
    return main(["reproduce", "--preset", "paper", "--data-dir", str(tmp_path / "data"),
                 "--out", str(tmp_path / "run"), *TINY, *extra])  # fmt: skip


def test_a_good_download_is_checked_and_its_checksums_recorded(server, tmp_path, monkeypatch):
    pin(monkeypatch, server)
    assert reproduce(tmp_path, "--download") == 0
    folder = tmp_path / "data" / "smnn" / "heart"
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == {
        "train.csv": GOOD["heart/train.csv"], "test.csv": GOOD["heart/test.csv"]}  # fmt: skip
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["data_files"] == {k: hashlib.sha256(v).hexdigest() for k, v in GOOD.items()}
    assert "heart/smnn/test_accuracy" in res["metrics"]
    assert {c["id"] for c in res["claims"]} == {"heart-accuracy"}


@pytest.mark.parametrize("name, message", [("corrupt/test.csv", "not the pinned"),
                                           ("absent/test.csv", "cannot fetch.*404")])  # fmt: skip
def test_a_bad_download_is_one_line_exit_2_and_leaves_nothing(server, tmp_path, monkeypatch,
                                                              capsys, name, message):  # fmt: skip
    pin(monkeypatch, server, test_url=f"{server}/{name}")
    assert reproduce(tmp_path, "--download") == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("iclr24-smnn")]
    assert len(err) == 1 and re.search(message, err[0]), err
    # the good train.csv may stay (it was checked before it was moved into place); nothing
    # half-written, and no test.csv
    left = sorted(p.relative_to(tmp_path / "data").as_posix()
                  for p in (tmp_path / "data").rglob("*") if p.is_file())  # fmt: skip
    assert left in ([], ["smnn/heart/train.csv"]), left
    assert not (tmp_path / "run" / "results.json").exists()


def test_a_different_copy_in_place_is_refused_before_any_fit(tmp_path, monkeypatch, capsys):
    pin(monkeypatch, "http://127.0.0.1:9")
    folder = tmp_path / "data" / "smnn" / "heart"
    folder.mkdir(parents=True)
    (folder / "train.csv").write_bytes(GOOD["heart/train.csv"])
    (folder / "test.csv").write_bytes(heart_csv(12, 2))  # another file
    assert reproduce(tmp_path) == 2
    assert "is not the pinned" in capsys.readouterr().err
    assert not list((tmp_path / "run").rglob("*.pkl"))  # stopped before any unit


def test_the_pins_name_the_official_repository_at_one_commit():
    files = [f for fs in D.REMOTE.values() for f in fs]
    assert sorted(f.path for f in files) == ["compas/test.csv", "compas/train.csv",
                                             "heart/test.csv", "heart/train.csv"]  # fmt: skip
    prefix = f"https://raw.githubusercontent.com/retna319/SMNN/{D.OFFICIAL_COMMIT}/"
    assert all(f.url == prefix + f.path for f in files)
    assert len(D.OFFICIAL_COMMIT) == 40
    assert all(len(f.sha256) == 64 and f.size for f in files)

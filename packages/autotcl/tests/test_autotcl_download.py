"""``--download`` (issue 51): the paper's ETTh1.csv and ETTh2.csv are pinned ``RemoteFile``s of
zhouhaoyi/ETDataset's raw GitHub addresses at a fixed commit; the paper preset fetches them into
``<data-dir>/autotcl/`` and checks each SHA-256 before it is renamed into place. Tested offline
through the real CLI against a local HTTP server on 127.0.0.1 serving a miniature ETTh1.csv: a
good file (the run goes on and records the checksum), a corrupted one and a 404 (one line, exit
2, nothing written)."""

import hashlib
import importlib.util
import json
import re
from pathlib import Path

import pytest
from iclr24_autotcl import data as autotcl_data
from iclr24_autotcl.experiment import app

from iclr24_common import RemoteFile
from iclr24_common.testing import serve_files

# the paper-path test's ETTh1 miniature writer (tests are imported by path, not as a package)
_spec = importlib.util.spec_from_file_location(
    "autotcl_paper_path", Path(__file__).with_name("test_autotcl_paper_path.py")
)
_paper_path = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_paper_path)
write_etth1 = _paper_path.write_etth1

SIZES = {"seeds": "0", "autotcl_epochs": 1, "ts2vec_iters": 1, "hidden_dims": 8, "depth": 2,
         "output_dims": 8, "aug_hidden_dims": 8, "aug_depth": 1, "aug_dim": 4,
         "sliding_padding": 8, "uea": "", "horizons": "24", "lags": "24",
         "methods": "autotcl,ts2vec,untrained"}  # fmt: skip


@pytest.fixture
def server(tmp_path):
    """Serves /ETTh1.csv (the pinned miniature), /corrupt.csv (one byte changed), 404 else."""
    path = tmp_path / "served.csv"
    write_etth1(path)
    good = path.read_bytes()
    corrupt = good[:100] + bytes([good[100] ^ 1]) + good[101:]  # one byte changed
    with serve_files({"/ETTh1.csv": good, "/corrupt.csv": corrupt}) as url:
        yield url, hashlib.sha256(good).hexdigest()


def reproduce(tmp_path, capsys):
    argv = ["reproduce", "--preset", "paper", "--download", "--data-dir", str(tmp_path / "data"),
            "--out", str(tmp_path / "run"), "--threads", "1", "--device", "cpu"]  # fmt: skip
    for k, v in SIZES.items():
        argv += ["--set", f"{k}={v}"]
    code = app.main(argv)
    return code, capsys.readouterr().err


def test_the_pinned_files_are_etdatasets_at_one_commit():
    for name, f in autotcl_data.PINNED.items():
        assert f.url == ("https://raw.githubusercontent.com/zhouhaoyi/ETDataset/"
                         f"{autotcl_data.ETT_COMMIT}/ETT-small/{name}.csv")  # fmt: skip
        assert f.path == f"{name}.csv" and len(f.sha256) == 64


def test_download_fetches_checks_and_records_the_file(server, tmp_path, capsys, monkeypatch):
    base, digest = server
    monkeypatch.setitem(autotcl_data.PINNED, "ETTh1",
                        RemoteFile(f"{base}/ETTh1.csv", "ETTh1.csv", digest))  # fmt: skip
    code, err = reproduce(tmp_path, capsys)
    assert code == 0, err
    assert (tmp_path / "data" / "autotcl" / "ETTh1.csv").exists()
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["data_files"] == {"ETTh1.csv": digest}
    log = (tmp_path / "run" / "log.txt").read_text()
    assert "SHA-256 checked" in log


@pytest.mark.parametrize("name, message", [("corrupt.csv", "not the pinned"),
                                           ("absent.csv", "cannot fetch.*404")])  # fmt: skip
def test_a_bad_download_is_one_line_exit_2_and_leaves_nothing(server, tmp_path, capsys,
                                                               monkeypatch, name, message):  # fmt: skip
    base, digest = server
    monkeypatch.setitem(autotcl_data.PINNED, "ETTh1",
                        RemoteFile(f"{base}/{name}", "ETTh1.csv", digest))  # fmt: skip
    code, err = reproduce(tmp_path, capsys)
    assert code == 2
    err = [ln for ln in err.splitlines() if ln.startswith("iclr24-autotcl")]  # the error line
    assert len(err) == 1 and re.search(message, err[0]), err
    assert list((tmp_path / "data").rglob("*.*")) == []  # no file, no .part left behind


def test_the_paper_preset_refuses_a_different_copy(tmp_path, capsys):
    folder = tmp_path / "data" / "autotcl"
    folder.mkdir(parents=True)
    write_etth1(folder / "ETTh1.csv")  # not the real file: its checksum differs
    argv = ["reproduce", "--preset", "paper", "--data-dir", str(tmp_path / "data"),
            "--out", str(tmp_path / "run"), "--threads", "1", "--device", "cpu"]  # fmt: skip
    assert app.main(argv) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("iclr24-autotcl")]
    assert len(err) == 1 and "SHA-256" in err[0] and "is not the pinned" in err[0], err
    assert not list((tmp_path / "run").rglob("*.pkl"))  # stopped before any unit

"""--download: the paper's files fetched from their public URLs with a pinned SHA-256 each,
tested against a local HTTP server on 127.0.0.1 (a good file, a corrupted one, a 404); a
failure is one line and leaves nothing half-written in the data folder."""

import hashlib

import pytest

from iclr24_common import (
    MissingDataError,
    RemoteFile,
    UsageError,
    download_files,
    sha256_of,
    verify_files,
)
from iclr24_common.testing import serve_files

GOOD = b"date,OT\n2016-07-01 00:00:00,30.5\n" * 50


@pytest.fixture
def server():
    """Serves /good.csv (the pinned bytes), /corrupt.csv (one byte changed), 404 elsewhere."""
    served = {"/good.csv": GOOD, "/corrupt.csv": GOOD[:-2] + b"9\n"}
    hits = []

    with serve_files(served, hits) as url:
        yield url, hits


def pinned(url, path="ETT-small/ETTh1.csv"):
    return RemoteFile(url=url, path=path, sha256=hashlib.sha256(GOOD).hexdigest())


def test_a_good_file_is_fetched_checked_and_not_fetched_again(server, tmp_path):
    base, hits = server
    got = download_files(tmp_path, [pinned(f"{base}/good.csv")])
    assert (tmp_path / "ETT-small/ETTh1.csv").read_bytes() == GOOD
    assert got == {"ETT-small/ETTh1.csv": sha256_of(tmp_path / "ETT-small/ETTh1.csv")}
    download_files(tmp_path, [pinned(f"{base}/good.csv")])
    assert hits == ["/good.csv"]  # already there with its checksum: no second request
    assert verify_files(tmp_path, [pinned("unused")], what="ETT", how_to_get="x") == got


@pytest.mark.parametrize("name, message", [("corrupt.csv", "not the pinned"),
                                           ("absent.csv", "cannot fetch.*404")])  # fmt: skip
def test_a_bad_download_is_one_line_and_leaves_nothing(server, tmp_path, name, message):
    base, _ = server
    with pytest.raises(UsageError, match=message) as e:
        download_files(tmp_path, [pinned(f"{base}/{name}")])
    assert "\n" not in str(e.value) and "nothing was written" in str(e.value)
    assert list(tmp_path.rglob("*.*")) == []  # no file, no .part left behind


def test_verify_names_a_missing_or_different_file(tmp_path):
    with pytest.raises(MissingDataError, match="ETT-small/ETTh1.csv"):
        verify_files(tmp_path, [pinned("u")], what="ETTh1", how_to_get="--download")
    (tmp_path / "ETT-small").mkdir()
    (tmp_path / "ETT-small/ETTh1.csv").write_bytes(GOOD + b"extra")
    with pytest.raises(UsageError, match="is not the pinned .* delete it and get it again"):
        verify_files(tmp_path, [pinned("u")], what="ETTh1", how_to_get="--download")

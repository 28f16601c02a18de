"""Generators and the real-data loaders, on small files the tests write."""

import numpy as np
import pytest
import scipy.sparse as sp
from iclr24_svd_update.data import (
    load_dataset,
    make_sbm,
    make_user_item,
    read_edge_list,
    read_ratings,
    read_smart_documents,
)

from iclr24_common import MissingDataError


def test_user_item_generator_is_binary_powerlaw_and_deterministic():
    kw = dict(n_clusters=8, min_activity=5)
    A = make_user_item(3000, 2000, seed=1, **kw)
    B = make_user_item(3000, 2000, seed=1, **kw)
    assert A.shape == (3000, 2000) and np.all(A.data == 1.0)
    assert (A != B).nnz == 0
    assert (A != make_user_item(3000, 2000, seed=2, **kw)).nnz > 0
    deg = np.diff(A.indptr)
    assert deg.min() >= 1 and deg.max() > 4 * np.median(deg)  # heavy-tailed activity
    pop = np.sort(np.asarray(A.sum(axis=0)).ravel())[::-1]
    assert pop[:8].sum() > 0.05 * A.nnz  # a few items are very popular


def test_sbm_is_symmetric_without_self_loops():
    G = make_sbm(500, n_blocks=5, seed=0)
    assert G.shape == (500, 500)
    assert (G != G.T).nnz == 0 and G.diagonal().sum() == 0
    assert np.all(G.data == 1.0)


SMART = """.I 1
.T
Information retrieval systems
.A
Someone
.W
retrieval of documents, retrieval of text
.X
1 5 1
.I 2
.T
Text systems
.W
indexing of documents
.I 3
.W
nothing shared here
"""


def test_smart_reader(tmp_path):
    p = tmp_path / "CISI.ALL"
    p.write_text(SMART)
    A = read_smart_documents(p)
    # terms in >= 2 documents: documents, of, systems, text
    assert A.shape == (3, 4)
    assert A[0].sum() == 5 and A[2].nnz == 0  # "retrieval" appears in one doc only


def test_ratings_readers(tmp_path):
    (tmp_path / "ratings.dat").write_text("1::10::5::0\n1::20::3::0\n7::10::4::0\n")
    A = read_ratings(tmp_path / "ratings.dat")
    np.testing.assert_array_equal(A.toarray(), [[5, 3], [4, 0]])
    (tmp_path / "ratings.csv").write_text("userId,movieId,rating,timestamp\n3,9,2.5,1\n4,9,1.0,1\n")
    np.testing.assert_array_equal(read_ratings(tmp_path / "ratings.csv").toarray(), [[2.5], [1.0]])
    (tmp_path / "u.data").write_text("1\t2\t3\t0\n2\t1\t4\t0\n")
    np.testing.assert_array_equal(read_ratings(tmp_path / "u.data").toarray(), [[0, 3], [4, 0]])


def test_edge_list_reader(tmp_path):
    p = tmp_path / "soc-Slashdot0902.txt"
    p.write_text("# Directed graph\n# FromNodeId\tToNodeId\n0\t5\n5\t9\n9\t9\n")
    G = read_edge_list(p)
    np.testing.assert_array_equal(G.toarray(), [[0, 1, 0], [1, 0, 1], [0, 1, 0]])


def test_load_dataset_finds_files_and_reports_missing(tmp_path):
    folder = tmp_path / "svd-update" / "epinions"
    folder.mkdir(parents=True)
    (folder / "soc-Epinions1.txt").write_text("1 2\n2 3\n")
    assert load_dataset("epinions", tmp_path).shape == (3, 3)
    sp.save_npz(tmp_path / "svd-update" / "epinions" / "epinions.npz", sp.eye(4, format="csr"))
    assert load_dataset("epinions", tmp_path).shape == (4, 4)  # .npz wins
    with pytest.raises(MissingDataError, match="snap.stanford.edu"):
        load_dataset("slashdot", tmp_path)
    with pytest.raises(ValueError, match="unknown dataset"):
        load_dataset("netflix", tmp_path)


def test_a_drifting_stream_only_reorders_the_rows():
    from iclr24_svd_update import make_user_item

    A = make_user_item(3000, 800, seed=3)
    B = make_user_item(3000, 800, drift=True, seed=3)
    assert A.shape == B.shape and A.nnz == B.nnz
    rows = lambda M: sorted(tuple(M[i].indices) for i in range(M.shape[0]))  # noqa: E731
    assert rows(A) == rows(B)  # the same users and interactions, in another order
    assert (A != B).nnz > 0  # ... not the same order

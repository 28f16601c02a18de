"""Optional: agreement with the authors' own implementation (PyPI ``IncSVD``, extra ``reference``)."""

import contextlib
import io

import numpy as np
import pytest
import scipy.sparse as sp
from iclr24_svd_update import EvolvingSVD, UpdateConfig

EvolvingMatrix = pytest.importorskip("IncSVD.EvolvingMatrix").EvolvingMatrix


def _reference(A, init, method):
    with contextlib.redirect_stdout(io.StringIO()):  # the reference prints its shapes
        em = EvolvingMatrix(A, init[1].size, sparse=True, method=method)
    # start both from the same SVD (the reference draws ARPACK's start vector itself)
    em._Uk, em._sigmak, em._Vk = init[0].copy(), init[1].copy(), init[2].copy()
    return em


@pytest.mark.parametrize("method,ref_method", [("qr", "ZhaSimon"), ("gkl", "GKL"), ("rpi", "RPI")])
def test_matches_incsvd_on_rows_and_columns(method, ref_method):
    A = sp.random(200, 150, density=0.05, random_state=0, format="csr")
    k, s = 12, 6  # s <= l: GKL and RPI span the whole augmented space, so no randomness remains
    U, S, Vt = np.linalg.svd(A.toarray(), full_matrices=False)
    init = (U[:, :k], S[:k], Vt[:k].T)
    ours = EvolvingSVD(k=k, init=init, config=UpdateConfig(method=method, depth=10))
    ref = _reference(A, init, ref_method)
    lt = {} if method == "qr" else {"l": s, "t": 3 if method == "rpi" else None}
    for i in range(5):
        E = sp.random(s, ours.shape[1], density=0.05, random_state=10 + i, format="csr")
        ours.add_rows(E)
        ref.add_row(E, **lt)
        C = sp.random(ours.shape[0], s, density=0.05, random_state=20 + i, format="csc")
        ours.add_columns(C)
        ref.add_column(C, **lt)
        np.testing.assert_allclose(ours.S, ref.Sigmak, rtol=1e-8)
    signs = np.sign(np.sum(ours.U * ref.Uk, axis=0))
    np.testing.assert_allclose(ours.U * signs, ref.Uk, atol=1e-6)
    np.testing.assert_allclose(ours.V * signs, ref.Vk, atol=1e-6)

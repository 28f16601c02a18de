"""Invariants of the sparse updating method and its agreement with the dense baselines."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from iclr24_svd_update import (
    EvolvingSVD,
    UpdateConfig,
    VecharynskiSVD,
    YamazakiSVD,
    ZhaSimonSVD,
    gkl,
    initial_svd,
    rpi,
    sparse_qr,
)
from iclr24_svd_update.metrics import (
    frobenius_residual,
    hit_rate_mrr,
    hold_out,
    scaled_residual,
)

PAIRS = [("qr", ZhaSimonSVD), ("gkl", VecharynskiSVD), ("rpi", YamazakiSVD)]


def dense_init(A: np.ndarray, k: int):
    U, S, Vt = np.linalg.svd(A, full_matrices=False)
    return U[:, :k], S[:k], Vt[:k].T


def low_rank(m, n, r, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, r)) @ rng.standard_normal((r, n))


@pytest.mark.parametrize("method", ["qr", "gkl", "rpi"])
def test_add_rows_matches_dense_svd_when_exact(method):
    # A0 of rank 4 and k >= 4 + all added rows: the truncation never discards anything, and
    # GKL/RPI are exact for s <= depth, so every update must equal the dense SVD.
    A = low_rank(70, 50, 4, 0)
    k = 24
    svd = EvolvingSVD(k=k, init=dense_init(A, k), config=UpdateConfig(method=method), seed=0)
    for i in range(4):
        E = sp.random(5, 50, density=0.2, random_state=i)
        svd.add_rows(E)
        A = np.vstack([A, E.toarray()])
        S_true = np.linalg.svd(A, compute_uv=False)[:k]
        np.testing.assert_allclose(svd.S, S_true, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(svd.reconstruct(), A, atol=1e-9)
    assert svd.shape == A.shape


@pytest.mark.parametrize("method,Baseline", PAIRS)
def test_agrees_with_its_baseline_on_rows_columns_weights(method, Baseline):
    A = sp.random(120, 90, density=0.05, random_state=1)
    k = 10
    init = dense_init(A.toarray(), k)
    cfg = UpdateConfig(method=method, depth=6)
    ours, base = (
        EvolvingSVD(k=k, init=init, config=cfg, seed=3),
        Baseline(init=init, config=cfg, seed=3),
    )
    for i in range(6):
        E = sp.random(12, ours.shape[1], density=0.05, random_state=10 + i)
        ours.add_rows(E), base.add_rows(E)
        C = sp.random(ours.shape[0], 8, density=0.05, random_state=20 + i)
        ours.add_columns(C), base.add_columns(C)
        D = sp.random(ours.shape[0], 3, density=0.02, random_state=30 + i)
        F = sp.random(ours.shape[1], 3, density=0.02, random_state=40 + i)
        ours.update_weights(D, F), base.update_weights(D, F)
        np.testing.assert_allclose(ours.S, base.S, rtol=1e-9)
    # singular vectors agree up to sign
    signs = np.sign(np.sum(ours.U * base.U, axis=0))
    np.testing.assert_allclose(ours.U * signs, base.U, atol=1e-7)
    np.testing.assert_allclose(ours.V * signs, base.V, atol=1e-7)


@pytest.mark.parametrize("method", ["qr", "gkl", "rpi"])
def test_stays_orthonormal_over_many_updates(method):
    A = sp.random(300, 200, density=0.03, random_state=0, format="csr")
    svd = EvolvingSVD(A, k=16, config=UpdateConfig(method=method), seed=0)
    rng = np.random.default_rng(0)
    for i in range(60):
        kind = i % 3
        if kind == 0:
            svd.add_rows(
                sp.random(int(rng.integers(1, 30)), svd.shape[1], density=0.03, random_state=i)
            )
        elif kind == 1:
            svd.add_columns(
                sp.random(svd.shape[0], int(rng.integers(1, 30)), density=0.03, random_state=i)
            )
        else:
            svd.update_weights(
                sp.random(svd.shape[0], 2, density=0.01, random_state=i),
                sp.random(svd.shape[1], 2, density=0.01, random_state=i + 1),
            )
    for M in (svd.U, svd.V):
        assert np.abs(M.T @ M - np.eye(16)).max() < 1e-8
    assert np.all(np.diff(svd.S) <= 0) and np.all(svd.S > 0)


def test_columns_are_rows_of_the_transpose():
    A = sp.random(80, 60, density=0.08, random_state=2)
    E = sp.random(80, 7, density=0.1, random_state=3)
    k = 8
    U, S, V = dense_init(A.toarray(), k)
    by_cols = EvolvingSVD(k=k, init=(U, S, V))
    by_cols.add_columns(E)
    by_rows = EvolvingSVD(k=k, init=(V, S, U))
    by_rows.add_rows(E.T)
    np.testing.assert_allclose(by_cols.S, by_rows.S, rtol=1e-12)
    np.testing.assert_allclose(by_cols.U, by_rows.V, atol=1e-12)
    np.testing.assert_allclose(by_cols.V, by_rows.U, atol=1e-12)


def test_fold_back_changes_nothing_but_conditioning():
    A = sp.random(150, 100, density=0.05, random_state=4)
    init = dense_init(A.toarray(), 10)
    plain = EvolvingSVD(k=10, init=init, config=UpdateConfig(fold_cond=1e300))
    folded = EvolvingSVD(k=10, init=init, config=UpdateConfig(fold_cond=1.0 + 1e-9))
    for i in range(5):
        E = sp.random(10, 100, density=0.05, random_state=50 + i)
        plain.add_rows(E), folded.add_rows(E)
    assert plain.folds == 0 and folded.folds > 0
    np.testing.assert_allclose(folded.S, plain.S, rtol=1e-10)
    np.testing.assert_allclose(folded.U, plain.U, atol=1e-9)
    np.testing.assert_allclose(folded.row([0, 155]), plain.U[[0, 155]], atol=1e-9)


def test_empty_and_all_zero_updates():
    A = sp.random(60, 40, density=0.1, random_state=5)
    svd = EvolvingSVD(k=6, init=dense_init(A.toarray(), 6))
    S0 = svd.S
    svd.add_rows(sp.csr_matrix((0, 40)))
    svd.update_weights(sp.csr_matrix((60, 0)), sp.csr_matrix((40, 0)))
    assert svd.shape == (60, 40)
    svd.add_rows(sp.csr_matrix((3, 40)))  # all-zero rows: new rows of U are zero
    svd.add_columns(sp.csr_matrix((63, 2)))
    assert svd.shape == (63, 42)
    np.testing.assert_allclose(svd.S, S0, rtol=1e-12)
    np.testing.assert_allclose(svd.U[60:], 0, atol=1e-12)
    np.testing.assert_allclose(svd.V[40:], 0, atol=1e-12)


def test_bad_shapes_raise_clear_errors():
    A = sp.random(30, 20, density=0.2, random_state=6)
    svd = EvolvingSVD(A, k=4)
    with pytest.raises(ValueError, match="20 columns"):
        svd.add_rows(sp.random(3, 21, density=0.2))
    with pytest.raises(ValueError, match="30 rows"):
        svd.add_columns(sp.random(29, 2, density=0.2))
    with pytest.raises(ValueError, match="same number of columns"):
        svd.update_weights(sp.random(30, 2, density=0.2), sp.random(20, 3, density=0.2))
    with pytest.raises(ValueError, match="k must satisfy"):
        EvolvingSVD(A, k=25)
    with pytest.raises(ValueError, match="method"):
        UpdateConfig(method="lanczos")
    with pytest.raises(IndexError):
        svd.row(30)


def test_orthogonalisers_in_the_indefinite_inner_product():
    # x = b - V c with c = V^T b: <x1, x2> = b1.b2 - c1.c2 (Lemma 1). Check Q is orthonormal
    # as n-vectors and that W = X^T Q.
    rng = np.random.default_rng(7)
    n, k, s = 200, 6, 9
    V = np.linalg.qr(rng.standard_normal((n, k)))[0]
    touched = np.sort(rng.choice(n, 40, replace=False))
    B = np.zeros((n, s))
    B[touched] = rng.standard_normal((40, s)) * (rng.random((40, s)) < 0.3)
    X = B - V @ (V.T @ B)
    Z = np.vstack([B[touched], V.T @ B])
    sign = np.r_[np.ones(40), -np.ones(k)]
    for Q, W in (sparse_qr(Z, sign), gkl(Z, sign, 10, rng), rpi(Z, sign, 4, 3, rng)):
        Qn = np.zeros((n, Q.shape[1]))
        Qn[touched] = Q[:40]
        Qn -= V @ Q[40:]
        live = np.linalg.norm(Qn, axis=0) > 0.5
        np.testing.assert_allclose(Qn[:, live].T @ Qn[:, live], np.eye(live.sum()), atol=1e-10)
        np.testing.assert_allclose(W, X.T @ Qn, atol=1e-10)
    Q, W = sparse_qr(Z, sign)
    Qn = np.zeros((n, s))
    Qn[touched] = Q[:40]
    np.testing.assert_allclose((Qn - V @ Q[40:]) @ W.T, X, atol=1e-10)  # X = Q R


def test_metrics_on_known_cases():
    A = sp.random(50, 30, density=0.3, random_state=8, format="csr")
    U, S, V = dense_init(A.toarray(), 5)
    assert scaled_residual(A, U, S, V) < 1e-10
    train, users, items = hold_out(A, 20, np.random.default_rng(0))
    assert train.nnz == A.nnz - len(users)
    emb_u, emb_i = (
        np.random.default_rng(1).standard_normal((50, 4)),
        np.random.default_rng(2).standard_normal((30, 4)),
    )
    hr, mrr = hit_rate_mrr(emb_u, emb_i, train, users, items, topk=3, chunk=7)
    ranks = []
    for u, it in zip(users, items):
        sc = emb_i @ emb_u[u]
        sc[train[u].indices] = -np.inf
        ranks.append(int((sc > sc[it]).sum()))
    ranks = np.array(ranks)
    assert hr == pytest.approx(np.mean(ranks < 3)) and mrr == pytest.approx(
        np.mean(1 / (ranks + 1))
    )


def test_frobenius_residual_equals_the_dense_norm():
    A = sp.random(60, 40, density=0.2, random_state=3, format="csr")
    U, S, V = dense_init(A.toarray(), 6)
    dense = np.linalg.norm(A.toarray() - (U * S) @ V.T)
    assert frobenius_residual(A, U, S, V) == pytest.approx(dense, rel=1e-10)
    U2 = np.linalg.qr(np.random.default_rng(0).standard_normal((60, 6)))[0]  # not optimal
    assert frobenius_residual(A, U2, S, V) == pytest.approx(
        np.linalg.norm(A.toarray() - (U2 * S) @ V.T), rel=1e-10
    )
    assert frobenius_residual(A, U2, S, V) > frobenius_residual(A, U, S, V)


def test_hold_out_draws_only_from_the_given_row_ranges():
    A = sp.random(200, 30, density=0.3, random_state=4, format="csr")
    _, users, _ = hold_out(A, 40, np.random.default_rng(0), [(100, 110), (110, 200)])
    assert users.min() >= 100 and len(users) == 30  # all 10 of the first range, 20 of the rest
    assert np.sum(users < 110) == 10


def test_readme_example():
    """Run the README's library example as written, then check what its comments say."""
    text = (Path(__file__).parents[1] / "README.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    assert ns["U"].shape == (2010, 16) and ns["S"].shape == (16,) and ns["V"].shape == (505, 16)
    assert ns["user_0"].shape == (16,) and ns["q"].shape == (3, 16)
    np.testing.assert_allclose(ns["user_0"], ns["U"][0], atol=1e-12)
    base = ZhaSimonSVD(init=initial_svd(ns["A"], 16))
    ours = EvolvingSVD(init=initial_svd(ns["A"], 16))
    E = sp.random(10, 500, density=0.01, random_state=1)
    base.add_rows(E), ours.add_rows(E)
    np.testing.assert_allclose(ours.S, base.S, rtol=1e-9)

"""The ridge forecasting protocol (sklearn's Ridge, pairing, alpha never chosen on test) and
the SVM classification protocol (C chosen on the training set only)."""

import numpy as np
from iclr24_autotcl import eval_forecasting, fit_ridge, make_ett_like, pred_samples
from iclr24_autotcl.protocols import (
    ALPHAS,
    SVM_C,
    block_items,
    eval_classification,
    fit_svm,
    ridge_path,
)
from sklearn.linear_model import Ridge
from sklearn.model_selection import cross_val_score
from sklearn.svm import SVC


def test_ridge_path_agrees_with_sklearn():
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((80, 6)) + 3, rng.standard_normal((80, 2))
    for (coef, b), alpha in zip(ridge_path(X, Y, (0.1, 10.0)), (0.1, 10.0)):
        ref = Ridge(alpha=alpha).fit(X, Y)
        np.testing.assert_allclose(coef.T, ref.coef_, atol=1e-10)
        np.testing.assert_allclose(b, ref.intercept_, atol=1e-10)


def test_pred_samples_pair_t_with_the_next_h_values():
    target = np.arange(10.0)[None, :, None]
    feats, labels = pred_samples(target, target, horizon=3, drop=2)
    np.testing.assert_array_equal(feats[:, 0], [2, 3, 4, 5, 6])
    np.testing.assert_array_equal(labels[0], [3, 4, 5])


def test_alpha_is_chosen_on_validation_never_on_test():
    task = make_ett_like(1200, seed=0, horizons=(24,))
    feats = np.random.default_rng(0).standard_normal((1, 1200, 12))
    feats[..., 0] = task.target[..., 0]
    base = eval_forecasting(feats, task, drop=10)
    task.data[:, task.test, -1] = 1e3 * np.random.default_rng(1).standard_normal(240)  # wreck test
    wrecked = eval_forecasting(feats, task, drop=10)
    assert wrecked["alpha_h24"] == base["alpha_h24"]
    assert wrecked["valid_score_h24"] == base["valid_score_h24"]
    assert wrecked["mse_h24"] > 100 * base["mse_h24"]
    # and the chosen alpha is the validation minimiser
    tr = pred_samples(feats[:, task.train], task.target[:, task.train], 24, drop=10)
    va = pred_samples(feats[:, task.valid], task.target[:, task.valid], 24)
    scores = []
    for coef, b in ridge_path(*tr):
        err = va[0] @ coef + b - va[1]
        scores.append(np.sqrt((err**2).mean()) + np.abs(err).mean())
    assert ALPHAS[int(np.argmin(scores))] == fit_ridge(*tr, *va)[2] == base["alpha_h24"]


# ----------------------------------------------------------------------------- classification
def blobs(n, seed, shift=1.5):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    return rng.standard_normal((n, 5)) + shift * np.eye(3, 5)[y], y


def test_svm_c_is_chosen_by_cross_validation_on_train_only():
    X, y = blobs(90, 0)
    Xt, yt = blobs(60, 1)
    base = eval_classification(X, y, Xt, yt)
    wrecked = eval_classification(X, y, Xt, (yt + 1) % 3)  # test labels never reach the choice
    assert wrecked["svm_c_index"] == base["svm_c_index"]
    assert wrecked["acc"] < base["acc"]
    # the chosen C is the best mean 5-fold (stratified) accuracy on the training set
    scores = [cross_val_score(SVC(C=c, gamma="scale"), X, y, cv=5).mean() for c in SVM_C]
    assert SVM_C[int(np.argmax(scores))] == fit_svm(X, y).C == SVM_C[int(base["svm_c_index"])]


def test_svm_small_training_set_uses_hard_margin():
    X, y = blobs(30, 0)  # < 50 examples: no grid search, C = inf as in TS2Vec's fit_svm
    assert fit_svm(X, y).C == np.inf
    assert eval_classification(X, y, *blobs(30, 1))["svm_c_index"] == len(SVM_C) - 1


# ----------------------------------------------------------------------------- test items
def test_block_items_average_to_the_mse_of_each_horizon_and_of_their_mean():
    task = make_ett_like(1200, seed=0, horizons=(24, 48))
    feats = np.random.default_rng(0).standard_normal((1, 1200, 12))
    res = eval_forecasting(feats, task, drop=10, items=True)
    n_test = task.test.stop - task.test.start
    for H in (24, 48):  # one block per day of forecast origins, as many for every horizon
        assert len(res[f"mse_items_h{H}"]) == -(-(n_test - 24) // 24)  # the shortest H's
        np.testing.assert_allclose(res[f"mse_items_h{H}"].mean(), res[f"mse_h{H}"], rtol=1e-12)
    np.testing.assert_allclose(res["mse_items"].mean(), res["mse"], rtol=1e-12)
    assert "mse_items" not in eval_forecasting(feats, task, drop=10)


def test_block_items_sum_each_block_of_origins():
    e = {2: np.arange(5.0), 3: np.ones(4)}  # 5 and 4 origins, blocks of 2 -> 3 blocks each
    items = block_items(e, block=2)
    np.testing.assert_allclose(items[2], np.array([0 + 1, 2 + 3, 4]) * 3 / 5)
    np.testing.assert_allclose(items[3], np.array([2, 2, 0]) * 3 / 4)


def test_classification_items_are_each_test_examples_correctness():
    X, y = blobs(90, 0)
    Xt, yt = blobs(60, 1)
    res = eval_classification(X, y, Xt, yt)
    assert res["acc_items"].shape == (60,) and set(np.unique(res["acc_items"])) <= {0.0, 1.0}
    assert res["acc_items"].mean() == res["acc"]

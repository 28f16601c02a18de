"""The ridge forecasting protocol: sklearn's Ridge, pairing, and alpha never chosen on test."""

import numpy as np
from iclr24_autotcl import eval_forecasting, fit_ridge, make_ett_like, pred_samples
from iclr24_autotcl.protocols import ALPHAS, ridge_path
from sklearn.linear_model import Ridge


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

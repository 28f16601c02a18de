"""Evaluation protocols (TS2Vec's ``tasks/forecasting.py`` and ``tasks/_eval_protocols.py``).

Forecasting: a ridge regression from the representation at t to the next H values, its
penalty chosen on the validation split (never on test) by RMSE + MAE; MSE and MAE reported on
the standardised test targets.
"""

from __future__ import annotations

import numpy as np

# the official alpha grid (``fit_ridge``)
ALPHAS = (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


def pred_samples(features: np.ndarray, target: np.ndarray, horizon: int, drop: int = 0):
    """Pairs (features at t, targets t+1..t+H) inside one split (official
    ``generate_pred_samples``). features (N, T, D), target (N, T, K) -> (n, D), (n, H * K)"""
    n = target.shape[1]
    feats = features[:, :-horizon]
    labels = np.stack([target[:, i : 1 + n + i - horizon] for i in range(horizon)], axis=2)[:, 1:]
    feats, labels = feats[:, drop:], labels[:, drop:]
    return feats.reshape(-1, feats.shape[-1]), labels.reshape(-1, labels.shape[2] * labels.shape[3])


def ridge_path(X, Y, alphas=ALPHAS):
    """Ridge with an unpenalised intercept for every alpha at once (sklearn's ``Ridge``):
    -> list of (coef (D, M), intercept (M,))."""
    X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    x_mean, y_mean = X.mean(0), Y.mean(0)
    U, s, Vt = np.linalg.svd(X - x_mean, full_matrices=False)
    UtY = U.T @ (Y - y_mean)  # (r, M)
    out = []
    for a in alphas:
        coef = Vt.T @ ((s / (s**2 + a))[:, None] * UtY)
        out.append((coef, y_mean - x_mean @ coef))
    return out


def fit_ridge(X_train, Y_train, X_valid, Y_valid, alphas=ALPHAS):
    """The official ``fit_ridge``: the alpha with the lowest validation RMSE + MAE.
    -> (coef, intercept, alpha, validation score)"""
    scores = []
    path = ridge_path(X_train, Y_train, alphas)
    for coef, b in path:
        err = np.asarray(X_valid, dtype=np.float64) @ coef + b - Y_valid
        scores.append(float(np.sqrt((err**2).mean()) + np.abs(err).mean()))
    best = int(np.argmin(scores))
    return path[best][0], path[best][1], alphas[best], scores[best]


def eval_forecasting(features, task, drop: int = 200, horizons=None) -> dict[str, float]:
    """Ridge forecasting from per-timestep ``features`` (N, T, D) of ``task``: test MSE/MAE
    per horizon and their mean over horizons. The training split skips its first ``drop``
    steps (the sliding padding), as in the official code."""
    target = task.target
    out = {}
    for H in horizons or task.horizons:
        tr = pred_samples(features[:, task.train], target[:, task.train], H, drop=drop)
        va = pred_samples(features[:, task.valid], target[:, task.valid], H)
        te = pred_samples(features[:, task.test], target[:, task.test], H)
        coef, b, alpha, score = fit_ridge(*tr, *va)
        err = te[0] @ coef + b - te[1]
        out.update({f"mse_h{H}": float((err**2).mean()), f"mae_h{H}": float(np.abs(err).mean()),
                    f"alpha_h{H}": float(alpha), f"valid_score_h{H}": score})  # fmt: skip
    hs = horizons or task.horizons
    out["mse"] = float(np.mean([out[f"mse_h{H}"] for H in hs]))
    out["mae"] = float(np.mean([out[f"mae_h{H}"] for H in hs]))
    return out


def eval_oracle(task, horizons=None) -> dict[str, float]:
    """Test MSE/MAE of the generated series' oracle conditional mean."""
    target, out = task.target[0, :, 0], {}
    hs = horizons or task.horizons
    for H in hs:
        t = np.arange(task.test.start, task.test.stop - H)
        truth = np.stack([target[t + h] for h in range(1, H + 1)], axis=1)
        err = task.oracle[H][t] - truth
        out[f"mse_h{H}"], out[f"mae_h{H}"] = float((err**2).mean()), float(np.abs(err).mean())
    out["mse"] = float(np.mean([out[f"mse_h{H}"] for H in hs]))
    out["mae"] = float(np.mean([out[f"mae_h{H}"] for H in hs]))
    return out

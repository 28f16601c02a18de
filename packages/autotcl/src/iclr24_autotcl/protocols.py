"""Evaluation protocols (TS2Vec's ``tasks/forecasting.py`` and ``tasks/_eval_protocols.py``).

Forecasting: a ridge regression from the representation at t to the next H values, its
penalty chosen on the validation split (never on test) by RMSE + MAE; MSE and MAE reported on
the standardised test targets.

Classification: an SVM with an RBF kernel on the instance representations (max-pooled over
time), its C chosen by 5-fold cross-validation on the training set only (official
``fit_svm``); accuracy on the test set.
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


# test items of a forecasting MSE on a shared test set: blocks of 24 consecutive forecast
# origins (a day of hourly data). Adjacent origins share all but one of their targets, so single
# origins are not independent items; a day is the series' own cycle (our choice).
ITEM_BLOCK = 24


def block_items(sq_err: dict[int, np.ndarray], block: int = ITEM_BLOCK) -> dict[int, np.ndarray]:
    """Per-item scores of each horizon's MSE: the forecast origins cut into blocks of
    ``block`` consecutive origins, each block scored by its share of the MSE, scaled so that
    the blocks' mean is the MSE (what ``items=`` of a verdict needs). Every horizon gets the
    same number of blocks (the longest horizon's last blocks hold fewer origins), so the
    horizons' arrays average into the items of the mean-over-horizons MSE. ``sq_err``:
    H -> (origins,) squared error per origin, averaged over its H steps. -> H -> (n_blocks,)"""
    n_blocks = -(-max(len(e) for e in sq_err.values()) // block)
    return {H: np.bincount(np.arange(len(e)) // block, weights=e, minlength=n_blocks)
            * n_blocks / len(e) for H, e in sq_err.items()}  # fmt: skip


def horizon_blocks(sq_err: np.ndarray, horizon: int) -> np.ndarray:
    """Per-item scores of one horizon's MSE in blocks of about max(24, H) consecutive origins
    (at least 2 blocks, near-equal sizes: ``np.array_split``), each scored by its share of the
    MSE so that the blocks average to it. Origins H apart share no target, so a block's targets
    overlap its neighbours' only. ``sq_err``: (origins,) -> (n_blocks,)"""
    n = max(2, len(sq_err) // max(ITEM_BLOCK, horizon))
    sums = np.array([b.sum() for b in np.array_split(sq_err, n)])
    return sums * n / len(sq_err)


def eval_forecasting(features, task, drop: int = 200, horizons=None, items: bool = False) -> dict:
    """Ridge forecasting from per-timestep ``features`` (N, T, D) of ``task``: test MSE/MAE
    per horizon and their mean over horizons. The training split skips its first ``drop``
    steps (the sliding padding), as in the official code. ``items``: also the per-item scores
    on the test set (:func:`block_items`, arrays): ``mse_items_h{H}`` per horizon and
    ``mse_items`` of the mean over horizons, in day blocks (for H > 24 neighbouring days share
    targets: their SE is a lower bound), and ``mse_items_hblock_h{H}``, blocks of max(24, H)
    origins (a block's targets overlap its neighbours' only: the per-horizon claims' items)."""
    target = task.target
    out, sq_err = {}, {}
    for H in horizons or task.horizons:
        tr = pred_samples(features[:, task.train], target[:, task.train], H, drop=drop)
        va = pred_samples(features[:, task.valid], target[:, task.valid], H)
        te = pred_samples(features[:, task.test], target[:, task.test], H)
        coef, b, alpha, score = fit_ridge(*tr, *va)
        err = te[0] @ coef + b - te[1]  # (origins, H * K)
        sq_err[H] = (err**2).mean(axis=1)
        out.update({f"mse_h{H}": float((err**2).mean()), f"mae_h{H}": float(np.abs(err).mean()),
                    f"alpha_h{H}": float(alpha), f"valid_score_h{H}": score})  # fmt: skip
    hs = horizons or task.horizons
    out["mse"] = float(np.mean([out[f"mse_h{H}"] for H in hs]))
    out["mae"] = float(np.mean([out[f"mae_h{H}"] for H in hs]))
    if items:
        per_h = block_items(sq_err)
        out.update({f"mse_items_h{H}": v for H, v in per_h.items()})
        out["mse_items"] = np.mean([per_h[H] for H in hs], axis=0)
        for H, e in sq_err.items():
            out[f"mse_items_hblock_h{H}"] = horizon_blocks(e, H)
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


# the official C grid (``fit_svm``)
SVM_C = (1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000, 10000, np.inf)


def fit_svm(features, y, seed: int = 0):
    """The official ``fit_svm``: an RBF SVC (gamma "scale"); with fewer than 5 training
    examples per class or fewer than 50 in all it is fitted at once with C = inf (hard margin;
    TS2Vec's value, AutoTCL's copy uses 1e8), otherwise C is chosen from ``SVM_C`` by 5-fold
    stratified cross-validation on (features, y), which are the training set only.
    -> the fitted SVC (its ``C`` is the chosen value)."""
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    features, y = np.asarray(features, dtype=np.float64), np.asarray(y)
    n_classes = len(np.unique(y))
    svm = SVC(C=np.inf, kernel="rbf", gamma="scale", max_iter=10_000_000, random_state=seed)
    if len(y) // n_classes < 5 or len(y) < 50:
        return svm.fit(features, y)
    search = GridSearchCV(svm, {"C": list(SVM_C)}, cv=5)  # sklearn default: stratified folds
    return search.fit(features, y).best_estimator_


def eval_classification(train_repr, train_y, test_repr, test_y) -> dict[str, float]:
    """TS2Vec's classification protocol on instance representations (N, D): the SVM is fitted
    (C included) on the training representations only, then scored on the test set.
    -> accuracy, the chosen C as its position in ``SVM_C`` (9 = inf, finite for JSON) and
    ``acc_items``, each test example's 0/1 correctness (an array: the test set's items)."""
    svm = fit_svm(train_repr, train_y)
    correct = svm.predict(np.asarray(test_repr, dtype=np.float64)) == np.asarray(test_y)
    return {"acc": float(correct.mean()), "svm_c_index": float(SVM_C.index(svm.C)),
            "acc_items": correct.astype(float)}  # fmt: skip

"""The scikit-learn estimators: fit/predict round trip, Pipeline, classifier API, audit."""

import numpy as np
import pandas as pd
import pytest
from iclr24_smnn import SMNNClassifier, SMNNRegressor, monotonicity_audit
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

SMALL = dict(exp_units=(16,), relu_units=(8,), conf_units=(8,), epochs=60, batch_size=32, lr=0.02)


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    y = 2 * X[:, 0] - 3 * X[:, 1] + np.sin(5 * X[:, 2]) + 0.05 * rng.standard_normal(n)
    return X, y


def test_regressor_round_trip_and_monotone():
    X, y = _data()
    reg = SMNNRegressor(monotone={0: +1, 1: -1}, random_state=0, **SMALL).fit(X, y)
    pred = reg.predict(X)
    assert pred.shape == (300,) and np.isfinite(pred).all()
    assert reg.score(X, y) > 0.8  # it learns
    assert np.allclose(reg.predict(X), pred)  # deterministic
    assert monotonicity_audit(reg, X).violation_rate == 0.0  # uses monotone_ and as_module
    same = SMNNRegressor(monotone={0: +1, 1: -1}, random_state=0, **SMALL).fit(X, y)
    assert np.allclose(same.predict(X), pred, atol=1e-5)  # random_state fixes the fit
    assert clone(reg).get_params()["monotone"] == {0: 1, 1: -1}


def test_regressor_in_pipeline():
    X, y = _data()
    pipe = make_pipeline(StandardScaler(), SMNNRegressor(monotone=[0], random_state=0, **SMALL))
    pipe.fit(X[:200], y[:200])
    assert pipe.predict(X[200:]).shape == (100,)
    assert pipe.score(X[200:], y[200:]) > 0.5
    assert monotonicity_audit(pipe, X, {0: 1}).violation_rate == 0.0  # pairwise via predict


def test_classifier_api_and_column_names():
    X, y = _data(400, 1)
    df = pd.DataFrame(X, columns=["income", "debt", "other"])
    labels = np.where(y > np.median(y), "good", "bad")
    clf = SMNNClassifier(monotone={"income": +1, "debt": -1}, random_state=0, **SMALL).fit(
        df, labels
    )
    assert list(clf.classes_) == ["bad", "good"]
    proba = clf.predict_proba(df)
    assert proba.shape == (400, 2) and np.allclose(proba.sum(1), 1.0)
    assert set(clf.predict(df)) <= {"bad", "good"}
    assert clf.score(df, labels) > 0.8
    assert clf.monotone_ == {0: 1, 1: -1}
    assert monotonicity_audit(clf, X).violation_rate == 0.0  # on the logit


def test_estimator_errors():
    X, y = _data(50)
    with pytest.raises(ValueError, match="monotone is required"):
        SMNNRegressor(**SMALL).fit(X, y)
    with pytest.raises(ValueError, match="not a column"):
        SMNNRegressor(monotone={"nope": 1}, **SMALL).fit(pd.DataFrame(X, columns=list("abc")), y)
    with pytest.raises(ValueError, match="binary"):
        SMNNClassifier(monotone=[0], **SMALL).fit(X, np.arange(50) % 3)
    reg = SMNNRegressor(monotone=[0], **SMALL).fit(X, y)
    with pytest.raises(ValueError):
        reg.predict(X[:, :2])  # wrong number of features

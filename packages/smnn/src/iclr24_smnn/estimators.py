"""scikit-learn estimators around :class:`~iclr24_smnn.smnn.SMNN`.

    reg = SMNNRegressor(monotone={3: +1, 4: +1}, epochs=300).fit(X, y)   # X (n, d), y (n,)
    reg.predict(X)                                                      # (n,)
    clf = SMNNClassifier(monotone={"age": +1}).fit(df, labels)         # names need a DataFrame
    clf.predict_proba(df)                                               # (n, 2)

Inputs are min-max scaled on the training data (an increasing map, so the declared
directions carry over); regression targets are standardised; a ``validation_fraction`` of
the training data selects the best epoch (and, with ``patience``, stops training once its
loss has not improved for that many epochs).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data
from torch import nn

from .smnn import SMNN, SMNNConfig, normalize_monotone
from .train import TrainConfig, TrainResult, train_model


class _Affine(nn.Module):
    """``(x - shift) * scale`` with fixed (non-trainable) positive scale."""

    def __init__(self, shift: torch.Tensor, scale: torch.Tensor):
        super().__init__()
        self.register_buffer("shift", shift)
        self.register_buffer("scale", scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.shift) * self.scale


class _OutAffine(nn.Module):
    def __init__(self, mean: float, std: float):
        super().__init__()
        self.mean, self.std = float(mean), float(std)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return z * self.std + self.mean


class _SMNNBase(BaseEstimator):
    _loss = "mse"

    def __init__(
        self,
        monotone: Mapping | list | None = None,
        exp_units: tuple[int, ...] = (128, 128),
        relu_units: tuple[int, ...] = (16, 16),
        conf_units: tuple[int, ...] = (64, 64),
        epochs: int = 300,
        batch_size: int = 128,
        lr: float = 0.005,
        validation_fraction: float = 0.2,
        patience: int | None = None,
        random_state: int | None = None,
        device: str = "cpu",
    ):
        self.monotone = monotone
        self.exp_units = exp_units
        self.relu_units = relu_units
        self.conf_units = conf_units
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.random_state = random_state
        self.device = device

    # -- fitting --------------------------------------------------------------------------
    def _resolve_monotone(self) -> dict[int, int]:
        if self.monotone is None:
            raise ValueError("monotone is required, e.g. monotone={0: +1, 2: -1}")
        spec = (
            self.monotone if isinstance(self.monotone, Mapping) else {k: 1 for k in self.monotone}
        )
        names = list(getattr(self, "feature_names_in_", []))
        out = {}
        for key, sign in spec.items():
            if isinstance(key, str):
                if key not in names:
                    raise ValueError(
                        f"monotone feature {key!r} is not a column of X ({names or 'no names'})"
                    )
                key = names.index(key)
            out[key] = sign
        return normalize_monotone(out, self.n_features_in_)

    def _fit(self, X: np.ndarray, target: np.ndarray):
        seed = 0 if self.random_state is None else int(self.random_state)
        torch.manual_seed(seed)
        self.monotone_ = self._resolve_monotone()
        lo, hi = X.min(0), X.max(0)
        span = np.where(hi - lo > 0, hi - lo, 1.0)
        self.input_shift_, self.input_scale_ = lo, 1.0 / span
        Xs = torch.as_tensor((X - lo) / span, dtype=torch.float32, device=self.device)
        t = torch.as_tensor(target, dtype=torch.float32, device=self.device)
        n = len(Xs)
        n_val = int(round(self.validation_fraction * n)) if n >= 10 else 0
        perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed)).to(self.device)
        val, tr = perm[:n_val], perm[n_val:]
        cfg = SMNNConfig(tuple(self.exp_units), tuple(self.relu_units), tuple(self.conf_units))
        self.module_ = SMNN(self.n_features_in_, self.monotone_, cfg).to(self.device)
        tcfg = TrainConfig(epochs=self.epochs, batch_size=self.batch_size, lr=self.lr,
                           loss=self._loss, patience=self.patience if n_val else None)  # fmt: skip
        sel = (Xs[val], t[val]) if n_val else (None, None)
        self.train_result_: TrainResult = train_model(
            self.module_, Xs[tr], t[tr], tcfg, *sel, seed=seed
        )
        return self

    def as_module(self) -> nn.Module:
        """The fitted model as one torch module on raw inputs: (batch, d) -> (batch,) (the
        regression value, or the logit for the classifier). Used by the audit."""
        check_is_fitted(self, "module_")
        scale = _Affine(
            torch.as_tensor(self.input_shift_, dtype=torch.float32),
            torch.as_tensor(self.input_scale_, dtype=torch.float32),
        )
        out = _OutAffine(*getattr(self, "target_affine_", (0.0, 1.0)))
        return nn.Sequential(scale.to(self.device), self.module_, out).eval()

    def _raw(self, X) -> np.ndarray:
        check_is_fitted(self, "module_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        with torch.no_grad():
            z = self.as_module()(torch.as_tensor(X, dtype=torch.float32, device=self.device))
        return z.cpu().numpy().astype(np.float64)


class SMNNRegressor(RegressorMixin, _SMNNBase):
    """SMNN regression with the scikit-learn API; ``monotone`` = {index or column name: +1/-1}."""

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        mean, std = float(y.mean()), float(y.std()) or 1.0
        self.target_affine_ = (mean, std)  # standardised targets; an increasing map
        return self._fit(X, (y - mean) / std)

    def predict(self, X) -> np.ndarray:
        return self._raw(X)


class SMNNClassifier(ClassifierMixin, _SMNNBase):
    """Binary SMNN classifier: the logit of ``classes_[1]`` is monotone in the declared features."""

    _loss = "bce"

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64)
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError(f"SMNNClassifier is binary; got {len(self.classes_)} classes")
        return self._fit(X, (y == self.classes_[1]).astype(np.float64))

    def decision_function(self, X) -> np.ndarray:
        return self._raw(X)

    def predict_proba(self, X) -> np.ndarray:
        p = 1.0 / (1.0 + np.exp(-self.decision_function(X)))
        return np.stack([1.0 - p, p], axis=1)

    def predict(self, X) -> np.ndarray:
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

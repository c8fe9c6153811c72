"""Calibrators of KINA Appendix B: Cal_A on item labels, g_T and g_U on pair labels, and their bootstrap refits."""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy.special import expit

# scikit-learn ships no type information: pyproject.toml lets mypy treat it as untyped
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler


class Calibrator:
    """A map from features to [0, 1] fitted on binary labels: logistic on all columns, or isotonic on column 0."""

    def __init__(self, method: Literal["logistic", "isotonic"] = "logistic") -> None:
        self.method = method
        self._model: Pipeline | IsotonicRegression | None = None

    def fit(self, x: np.ndarray, y: np.ndarray) -> Calibrator:
        if self.method == "isotonic":
            self._model = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(x[:, 0], y)
        else:
            self._model = make_pipeline(
                StandardScaler(), LogisticRegression(C=1.0, solver="newton-cholesky", max_iter=1000)
            ).fit(x, y)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        if self._model is None:
            raise RuntimeError("fit the calibrator first")
        if len(x) == 0:
            return np.zeros(0)
        if isinstance(self._model, IsotonicRegression):
            clipped: np.ndarray = np.clip(self._model.predict(x[:, 0]), 0.0, 1.0)
            return clipped
        # the fitted pipeline folded into one affine map: sigmoid(((x - mean) / scale) @ w + b)
        scaler, logistic = self._model[0], self._model[-1]
        w = logistic.coef_[0] / scaler.scale_
        z = np.asarray(x, dtype=np.float64) @ w + (logistic.intercept_[0] - scaler.mean_ @ w)
        probabilities: np.ndarray = expit(z)
        return probabilities


def stratified_resample(groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A bootstrap sample of row indices drawn with replacement inside each label group, so no class vanishes."""
    parts = []
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        parts.append(rng.choice(rows, size=len(rows), replace=True))
    return np.sort(np.concatenate(parts))


def boot_lower_quantile(replicates: np.ndarray, delta: float) -> np.ndarray:
    """BootLQ_delta: the delta-quantile over bootstrap replicates (rows) of each column."""
    quantiles: np.ndarray = np.quantile(replicates, delta, axis=0)
    return quantiles

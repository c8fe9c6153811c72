"""Calibrators of KINA Appendix B: Cal_A on item labels, g_T and g_U on pair labels, and their bootstrap refits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
from scipy.special import expit

from benchmark_platform.embed import fixed_matvec, quantise

if TYPE_CHECKING:  # scikit-learn ships no type information: pyproject.toml lets mypy treat it as untyped
    from sklearn.isotonic import IsotonicRegression


class Calibrator:
    """A map from features to [0, 1] fitted on binary labels: logistic on all columns, or isotonic on column 0.

    The logistic fit is scikit-learn's LogisticRegression(C=1) on standardised columns, solved here by Newton's method
    with sums in a fixed order and a small elimination in plain Python (issue 30): a BLAS-based solver stops at a
    tolerance along a path whose last bits follow the kernel, which moved A^ by up to 7e-7 between two kernels of one
    machine. Predictions are rounded to the 1e-9 grid (embed.exact.quantise) because they decide the bank, the
    shortlist and the duplicate bound.
    """

    def __init__(self, method: Literal["logistic", "isotonic"] = "logistic") -> None:
        self.method = method
        self._isotonic: IsotonicRegression | None = None
        self._affine: tuple[np.ndarray, float] | None = None

    def fit(self, x: np.ndarray, y: np.ndarray) -> Calibrator:
        if self.method == "isotonic":
            from sklearn.isotonic import IsotonicRegression  # here: sklearn costs ~0.6 s to import

            self._isotonic = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(x[:, 0], y)
        else:
            self._affine = _logistic_fit(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        if self._isotonic is None and self._affine is None:
            raise RuntimeError("fit the calibrator first")
        if len(x) == 0:
            return np.zeros(0)
        if self._isotonic is not None:
            return quantise(np.clip(self._isotonic.predict(x[:, 0]), 0.0, 1.0))
        assert self._affine is not None
        w, b = self._affine
        return quantise(expit(fixed_matvec(x, w) + b))


def _logistic_fit(x: np.ndarray, y: np.ndarray, max_iter: int = 100) -> tuple[np.ndarray, float]:
    """The L2-penalised (C = 1, intercept free) logistic regression on standardised columns, folded back into one
    affine map of the raw columns: (w, b) with P(y = 1) = sigmoid(x @ w + b).

    Newton's method with step halving; every sum runs over rows in order (numpy's axis-0 reductions add row by row),
    so the fit is the same number on every machine."""
    mean = x.sum(axis=0) / len(x)
    scale = np.sqrt(((x - mean) ** 2).sum(axis=0) / len(x))
    scale = np.where(scale > 0, scale, 1.0)
    design = np.column_stack([(x - mean) / scale, np.ones(len(x))])
    penalty = np.ones(design.shape[1])
    penalty[-1] = 0.0  # the intercept is not penalised
    beta = np.zeros(design.shape[1])

    def loss(b: np.ndarray) -> tuple[float, np.ndarray]:  # the loss at b and design @ b (the next step reuses it)
        z = fixed_matvec(design, b)
        return float(np.logaddexp(0.0, z).sum() - (y * z).sum() + 0.5 * (penalty * b * b).sum()), z

    # design_i design_i^T does not change between steps: formed once, then weighted in place (the same products in
    # the same order as forming it every step, so the same bits; issue 30's fixed order is kept)
    outer = design[:, :, None] * design[:, None, :]
    weighted = np.empty_like(outer)
    current, z = loss(beta)
    for _ in range(max_iter):
        p = expit(z)
        gradient = ((p - y)[:, None] * design).sum(axis=0) + penalty * beta
        weights = p * (1 - p)
        np.multiply(outer, weights[:, None, None], out=weighted)
        hessian = weighted.sum(axis=0) + np.diag(penalty)
        step = _solve(hessian, gradient)
        t = 1.0
        while True:  # halve the step until the loss does not rise (it is convex: this ends)
            candidate = beta - t * step
            value, z_candidate = loss(candidate)
            if value <= current or t < 1e-10:
                break
            t /= 2
        beta, current, z = candidate, value, z_candidate
        if np.abs(t * step).max() <= 1e-12 * (1.0 + np.abs(beta).max()):
            break
    w = beta[:-1] / scale
    return w, float(beta[-1] - (mean * w).sum())


def _solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a^-1 b for a small symmetric positive definite a by Gauss-Jordan elimination with partial pivoting, in plain
    Python floats (LAPACK would call BLAS); a singular direction gets a zero step."""
    n = len(b)
    rows = [[float(v) for v in a[i]] + [float(b[i])] for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: (abs(rows[r][col]), -r))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        head = rows[col][col]
        if abs(head) < 1e-300:
            continue
        rows[col] = [v / head for v in rows[col]]
        for r in range(n):
            if r != col and rows[r][col] != 0.0:
                factor = rows[r][col]
                rows[r] = [v - factor * h for v, h in zip(rows[r], rows[col], strict=True)]
    return np.array([rows[i][n] if abs(rows[i][i]) > 0 else 0.0 for i in range(n)])


def stratified_resample(groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A bootstrap sample of row indices drawn with replacement inside each label group, so no class vanishes."""
    parts = []
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        parts.append(rng.choice(rows, size=len(rows), replace=True))
    return np.sort(np.concatenate(parts))


def boot_lower_quantile(replicates: np.ndarray, delta: float) -> np.ndarray:
    """BootLQ_delta: the delta-quantile over bootstrap replicates (rows) of each column, on the 1e-9 grid (it is
    compared with alpha_ref, alpha_A and alpha_C)."""
    return quantise(np.quantile(replicates, delta, axis=0))

"""Arithmetic whose result cannot depend on the BLAS kernel, the CPU's vector width or the thread count (issue 30).

A float that decides a discrete outcome (a ranking, a threshold, a nearest neighbour) must come out bit for bit the
same on every machine, else the release changes with the processor that built it. BLAS products sum in an order
chosen by the kernel (block sizes, vector width, threads), so their last bits differ between machines; three tools
here avoid or absorb that:

- `integer_rows` + `similarities`: unit vectors rounded to integers on a 2^-bits grid, stored as float64 with
  bits chosen so every product and every partial sum of a dot product is an integer below 2^53. Such a sum is exact
  in any order, so a BLAS product of these rows is the same number on every kernel (and fast: it still is BLAS).
- `fixed_matvec` / `fixed_matmul` / `fixed_dot`: products summed in one fixed order with elementwise operations only (no BLAS).
- `quantise`: a score rounded to a 1e-9 grid before anything compares it, so a last-bit difference that remains
  (an `exp` computed by a different libm or SIMD path) does not break a tie differently; ties are then broken by a
  stable index (`top_k` and every sort that decides uses kind="stable" or an explicit id key).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = [
    "GRID",
    "fixed_dot",
    "fixed_matmul",
    "fixed_matvec",
    "integer_rows",
    "quantise",
    "similarities",
    "stable_smallest",
    "top_k",
]

GRID = 1e-9
"""Scores that decide a choice are rounded to multiples of this: far coarser than last-bit noise (~1e-16), far
finer than any difference between two items that should rank differently."""

FloatArray = npt.NDArray[np.float64]


def quantise(values: npt.ArrayLike) -> FloatArray:
    """`values` rounded to the GRID (float64); -0.0 becomes 0.0 so equal scores have equal bytes."""
    rounded: FloatArray = np.round(np.asarray(values, dtype=np.float64) / GRID) * GRID
    return rounded + 0.0


def _bits(dim: int) -> int:
    # |component| <= 1, so a product is below 2^(2 bits) and a sum of dim of them below 2^(2 bits + log2 dim) < 2^53
    return (52 - math.ceil(math.log2(max(dim, 2)))) // 2


def integer_rows(vectors: npt.ArrayLike) -> FloatArray:
    """Rows of (unit) vectors as integers on a 2^-bits grid, held in float64; see `similarities`."""
    rows = np.asarray(vectors, dtype=np.float64)
    if rows.ndim != 2:
        raise ValueError(f"expected a 2-d array of rows, got shape {rows.shape}")
    scaled: FloatArray = np.rint(np.clip(rows, -1.0, 1.0) * 2.0 ** _bits(rows.shape[1]))
    return scaled


def similarities(a: FloatArray, b: FloatArray) -> FloatArray:
    """Dot products of every row of `a` with every row of `b` (both from `integer_rows` of one dimension), exact:
    every partial sum is an integer below 2^53, so any kernel and any summation order give the same float64."""
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"rows of different dimensions: {a.shape[1]} and {b.shape[1]}")
    products: FloatArray = (a @ b.T) * 2.0 ** (-2 * _bits(a.shape[1]))
    return products


def rowwise_similarities(a: FloatArray, b: FloatArray) -> FloatArray:
    """sum_j a[i, j] b[i, j] for each row i (rows from `integer_rows`), exact as in `similarities`."""
    sums: FloatArray = np.einsum("ij,ij->i", a, b) * 2.0 ** (-2 * _bits(a.shape[1]))
    return sums


def top_k(base: FloatArray, queries: FloatArray, k: int, *, block: int = 1024) -> npt.NDArray[np.int64]:
    """Indices into `base` of each query's k most similar rows (both from `integer_rows`), most similar first, equal
    similarities by lower index; -1 pads when `base` has fewer than k rows. Exact search a block of queries at a
    time, so memory stays at block x len(base)."""
    k_found = min(k, len(base))
    out = np.full((len(queries), k), -1, dtype=np.int64)
    for start in range(0, len(queries), block):
        sims = similarities(queries[start : start + block], base)
        # a stable sort of -sim keeps equal similarities in index order: the same ranks on every machine
        out[start : start + block, :k_found] = stable_smallest(-sims, k_found)
    return out


def stable_smallest(keys: FloatArray, k: int) -> npt.NDArray[np.int64]:
    """np.argsort(keys, axis=1, kind="stable")[:, :k], without sorting whole rows: each row's entries up to its k-th
    smallest key (ties with it included) are found by a partition and sorted by (key, column), the order a stable sort
    gives; only the first k are kept. The same indices, at a fraction of the cost when k is far below the row length
    (k nearest of a thousand). Keys holding NaN take the full sort."""
    rows, cols = keys.shape
    if k >= cols or np.isnan(keys).any():
        return np.argsort(keys, axis=1, kind="stable")[:, :k]
    if k <= 0:
        return np.empty((rows, 0), dtype=np.int64)
    kth = np.partition(keys, k - 1, axis=1)[:, k - 1 : k]
    r, c = np.nonzero(keys <= kth)  # at least k a row
    order = np.lexsort((c, keys[r, c], r))
    r, c = r[order], c[order]
    rank = np.arange(len(r)) - np.searchsorted(r, np.arange(rows))[r]
    return c[rank < k].reshape(rows, k).astype(np.int64)


def fixed_matvec(x: npt.ArrayLike, w: npt.ArrayLike) -> FloatArray:
    """x @ w for a tall matrix x (rows, p) and a short w (p,), summed column by column in that order with
    elementwise operations only: no BLAS, the same bits on every machine (p is small: features, anchors)."""
    matrix = np.asarray(x, dtype=np.float64)
    weights = np.asarray(w, dtype=np.float64)
    out = np.zeros(matrix.shape[0])
    for j in range(matrix.shape[1]):
        out += matrix[:, j] * weights[j]
    return out


def fixed_matmul(a: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    """a.T @ b for short columns (a: (k, n), b: (k, m), k small, e.g. models), summed over k in that order with
    elementwise outer products only: no BLAS, full float64 precision, the same bits on every machine."""
    left, right = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    out = np.zeros((left.shape[1], right.shape[1]))
    for j in range(left.shape[0]):
        out += np.multiply.outer(left[j], right[j])
    return out


def fixed_dot(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """sum_i a_i b_i, correctly rounded (math.fsum of the elementwise products): independent of any order."""
    products = np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)
    return math.fsum(products.tolist())

"""embed.exact: similarities that are exact in any summation order, fixed-order sums, the 1e-9 grid, stable top-k."""

from __future__ import annotations

import math

import numpy as np

from benchmark_platform.embed.exact import (
    fixed_dot,
    fixed_matmul,
    fixed_matvec,
    integer_rows,
    quantise,
    rowwise_similarities,
    similarities,
    top_k,
)


def _unit(rows: int, dim: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(rows, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_integer_row_similarities_do_not_depend_on_the_summation_order():
    grid = integer_rows(_unit(40, 256, 0))
    blas = similarities(grid, grid)
    # the same sums taken column by column, and in reverse column order: every partial sum is an exact integer
    scale = 2.0 ** -(2 * ((52 - 8) // 2))
    forward = sum(np.multiply.outer(grid[:, j], grid[:, j]) for j in range(256)) * scale
    backward = sum(np.multiply.outer(grid[:, j], grid[:, j]) for j in reversed(range(256))) * scale
    assert np.array_equal(blas, forward) and np.array_equal(blas, backward)
    assert np.array_equal(rowwise_similarities(grid, grid[::-1]), np.diag(blas[:, ::-1]))
    assert np.abs(blas - _unit(40, 256, 0).astype(np.float64) @ _unit(40, 256, 0).T.astype(np.float64)).max() < 1e-5


def test_top_k_ranks_equal_similarities_by_row_and_pads():
    rows = integer_rows(np.array([[1.0, 0.0], [0.6, 0.8], [1.0, 0.0], [0.0, 1.0]]))
    assert top_k(rows, rows[:1], 3).tolist() == [[0, 2, 1]]  # rows 0 and 2 tie: lower row first
    assert top_k(rows[:2], rows[:1], 3).tolist() == [[0, 1, -1]]


def test_fixed_order_sums_and_the_grid():
    x = np.random.default_rng(1).normal(size=(7, 3))
    w = np.array([0.5, -1.25, 2.0])
    assert np.allclose(fixed_matvec(x, w), x @ w)
    assert np.allclose(fixed_matmul(x, x), x.T @ x)
    values = [1e16, 1.0, -1e16, 1.0]
    assert fixed_dot(values, [1.0] * 4) == math.fsum(values) == 2.0
    grid = quantise([0.1234567891234, 0.1234567889, -1e-12])
    assert grid[0] == grid[1] == quantise([0.123456789])[0] and abs(grid[0] - 0.123456789) < 1e-15
    assert grid[2] == 0.0
    assert str(quantise([-1e-12])[0]) == "0.0"  # no negative zero: equal scores have equal bytes

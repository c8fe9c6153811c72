"""Cost-accuracy frontier (OenoBench 5.4) and parameter scaling (KINA 5.5).

Two frontiers, labelled separately because they answer different questions:
- `pareto`: the non-dominated set: no other configuration is at most as expensive and at least as
  accurate, with one of the two strictly. "Nothing cheaper is better."
- `hull`: the upper convex hull of the non-dominated points on (log10 cost, accuracy): the points
  where buying accuracy with cost is efficient at a constant-or-better rate per decade of cost.
  Every hull point is non-dominated; a non-dominated point can lie below the hull.
"""

from __future__ import annotations

import numpy as np
import polars as pl


def cost_frontier(points: pl.DataFrame) -> pl.DataFrame:
    """points: model, cost_usd (> 0), accuracy. Adds pareto and hull (booleans), sorted by cost."""
    bad = points.filter(~(pl.col("cost_usd") > 0))
    if bad.height:
        raise ValueError(f"cost frontier needs a positive cost for every model: {bad['model'].to_list()}")
    frame = points.sort(["cost_usd", "accuracy"], descending=[False, True])
    cost, acc = frame["cost_usd"].to_numpy(), frame["accuracy"].to_numpy()
    pareto = np.array(
        [
            not np.any((cost <= cost[i]) & (acc >= acc[i]) & ((cost < cost[i]) | (acc > acc[i])))
            for i in range(frame.height)
        ],
        dtype=bool,
    )
    hull = np.zeros(frame.height, dtype=bool)
    chain: list[int] = []  # monotone chain over non-dominated points, left to right
    for i in map(int, np.flatnonzero(pareto)):
        while len(chain) >= 2 and _not_right_turn(chain[-2], chain[-1], i, np.log10(cost), acc):
            chain.pop()
        chain.append(i)
    hull[chain] = True
    return frame.with_columns(pareto=pl.Series(pareto), hull=pl.Series(hull))


def _not_right_turn(o: int, a: int, b: int, x: np.ndarray, y: np.ndarray) -> bool:
    """True when a lies on or below the segment o-b (so a is not a vertex of the upper hull)."""
    return bool((x[a] - x[o]) * (y[b] - y[o]) - (y[a] - y[o]) * (x[b] - x[o]) >= 0)


def scaling_slopes(points: pl.DataFrame) -> pl.DataFrame:
    """points: family, model, params (> 0, any unit), accuracy (%). Per family with >= 2 sizes:
    the least-squares slope of accuracy on log10(params), in points per decade, intercept, r2, n."""
    rows = []
    for (family,), group in points.sort("family").group_by("family", maintain_order=True):
        if group.height < 2:
            continue
        if (group["params"] <= 0).any():
            raise ValueError(f"family {family}: parameter counts must be positive")
        x, y = np.log10(group["params"].to_numpy()), group["accuracy"].to_numpy()
        if np.ptp(x) == 0:
            raise ValueError(f"family {family}: every model has the same parameter count")
        slope, intercept = np.polyfit(x, y, 1)
        residual = y - (slope * x + intercept)
        r2 = 1 - residual @ residual / ((y - y.mean()) @ (y - y.mean())) if np.ptp(y) > 0 else 1.0
        rows.append(
            {"family": family, "n_models": group.height, "points_per_decade": slope, "intercept": intercept, "r2": r2}
        )
    return pl.DataFrame(
        rows,
        schema={
            "family": pl.String,
            "n_models": pl.Int64,
            "points_per_decade": pl.Float64,
            "intercept": pl.Float64,
            "r2": pl.Float64,
        },
    )

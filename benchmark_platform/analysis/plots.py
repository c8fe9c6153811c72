"""Plots as PNG bytes: per-group heatmap, cost-accuracy frontier, score distributions.

Figures are built on matplotlib's Agg canvas without pyplot (no global state), and saved without
the Software/date metadata, so the same data give the same bytes (matplotlib is pinned).
"""

from __future__ import annotations

import io

import numpy as np
import polars as pl
from matplotlib.figure import Figure

DPI = 110


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None}, bbox_inches="tight")
    return buffer.getvalue()


def heatmap_png(table: pl.DataFrame, *, title: str, row: str = "model") -> bytes:
    """A wide table (one row per model, one column per group, values in %) as an annotated heatmap."""
    groups = [c for c in table.columns if c != row]
    values = table.select(groups).to_numpy().astype(float)
    figure = Figure(figsize=(1.0 + 0.62 * len(groups), 1.2 + 0.32 * table.height))
    axes = figure.add_subplot()
    image = axes.imshow(values, cmap="viridis", vmin=0, vmax=100, aspect="auto")
    axes.set_xticks(range(len(groups)), groups, rotation=45, ha="right", fontsize=8)
    axes.set_yticks(range(table.height), table[row].to_list(), fontsize=8)
    for (i, j), value in np.ndenumerate(values):
        if np.isfinite(value):
            axes.text(
                j, i, f"{value:.0f}", ha="center", va="center", fontsize=6, color="white" if value < 55 else "black"
            )
    figure.colorbar(image, ax=axes, label="accuracy (%)", shrink=0.6)
    axes.set_title(title, fontsize=10)
    return _png(figure)


def frontier_png(frontier: pl.DataFrame, *, title: str) -> bytes:
    """The output of `cost_frontier`: every configuration, the Pareto (non-dominated) staircase and
    the upper convex hull on log cost, each labelled in the legend."""
    figure = Figure(figsize=(7.5, 5))
    axes = figure.add_subplot()
    axes.set_xscale("log")
    axes.scatter(frontier["cost_usd"], frontier["accuracy"], color="0.55", s=22, label="configuration", zorder=2)
    front = frontier.filter("pareto")
    axes.step(
        front["cost_usd"],
        front["accuracy"],
        where="post",
        color="tab:red",
        linestyle="--",
        label="Pareto front (non-dominated)",
        zorder=3,
    )
    hull = frontier.filter("hull")
    axes.plot(
        hull["cost_usd"], hull["accuracy"], color="tab:blue", marker="o", label="upper convex hull (log cost)", zorder=4
    )
    for model, cost, accuracy in frontier.select("model", "cost_usd", "accuracy").iter_rows():
        axes.annotate(model, (cost, accuracy), fontsize=6, xytext=(3, 3), textcoords="offset points")
    axes.set_xlabel("evaluation cost (USD, log scale)")
    axes.set_ylabel("accuracy (%)")
    axes.set_title(title, fontsize=10)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8, loc="lower right")
    return _png(figure)


def distribution_png(by_group: pl.DataFrame, models: list[str], *, title: str) -> bytes:
    """Per model (in the given order), the distribution of its per-group accuracies as a box plot."""
    data = [by_group.filter(pl.col("model") == m)["accuracy"].to_numpy() for m in models]
    figure = Figure(figsize=(7.5, 1.2 + 0.3 * len(models)))
    axes = figure.add_subplot()
    axes.boxplot(data[::-1], orientation="horizontal", tick_labels=models[::-1], widths=0.6)
    axes.set_xlabel("accuracy per group (%)")
    axes.set_xlim(0, 100)
    axes.tick_params(axis="y", labelsize=8)
    axes.set_title(title, fontsize=10)
    axes.grid(True, axis="x", alpha=0.3)
    return _png(figure)

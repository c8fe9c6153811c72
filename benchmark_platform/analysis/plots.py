"""Plots as PNG bytes: per-group heatmap, cost-accuracy frontier, score distributions.

Figures are built on matplotlib's Agg canvas without pyplot (no global state), and saved without
the Software/date metadata, so the same data give the same bytes (matplotlib is pinned).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DPI = 110


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None}, bbox_inches="tight")
    return buffer.getvalue()


def heatmap_png(
    table: pl.DataFrame,
    *,
    title: str,
    row: str = "model",
    unavailable: pl.DataFrame | None = None,
    partial: pl.DataFrame | None = None,
    note: str | None = None,
) -> bytes:
    """A wide table (one row per model, one column per group, values in %) as an annotated heatmap.

    `unavailable` and `partial` (same shape, booleans) mark the cells drawn n/a (hatched grey, labelled: too few
    items answered to show an accuracy) and the cells whose accuracy is over the answered items only (a `*`);
    `note` is printed under the figure to say so.
    """
    groups = [c for c in table.columns if c != row]
    values = table.select(groups).to_numpy().astype(float)
    na = np.zeros(values.shape, dtype=bool) if unavailable is None else _mask(unavailable, groups)
    star = np.zeros(values.shape, dtype=bool) if partial is None else _mask(partial, groups)
    values[na] = np.nan
    from matplotlib.figure import Figure  # here: matplotlib costs ~0.7 s to import, in every process
    from matplotlib.patches import Rectangle

    figure = Figure(figsize=(1.0 + 0.62 * len(groups), 1.2 + 0.32 * table.height))
    axes = figure.add_subplot()
    image = axes.imshow(np.ma.masked_invalid(values), cmap="viridis", vmin=0, vmax=100, aspect="auto")
    axes.set_xticks(range(len(groups)), groups, rotation=45, ha="right", fontsize=8)
    axes.set_yticks(range(table.height), table[row].to_list(), fontsize=8)
    for (i, j), value in np.ndenumerate(values):
        if na[i, j]:
            axes.add_patch(
                Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="0.85", edgecolor="0.55", hatch="////", linewidth=0)
            )
            axes.text(j, i, "n/a", ha="center", va="center", fontsize=6, color="black")
        elif np.isfinite(value):
            axes.text(
                j,
                i,
                f"{value:.0f}" + ("*" if star[i, j] else ""),
                ha="center",
                va="center",
                fontsize=6,
                color="white" if value < 55 else "black",
            )
    figure.colorbar(image, ax=axes, label="accuracy (%)", shrink=0.6)
    axes.set_title(title, fontsize=10)
    if note:
        axes.set_xlabel(note, fontsize=7)
    return _png(figure)


def _mask(table: pl.DataFrame, groups: list[str]) -> np.ndarray:
    return table.select(pl.col(g).fill_null(False) for g in groups).to_numpy().astype(bool)


def frontier_png(frontier: pl.DataFrame, *, title: str) -> bytes:
    """The output of `cost_frontier`: every configuration, the Pareto (non-dominated) staircase and
    the upper convex hull on log cost, each labelled in the legend."""
    from matplotlib.figure import Figure  # here: matplotlib costs ~0.7 s to import, in every process

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
    from matplotlib.figure import Figure  # here: matplotlib costs ~0.7 s to import, in every process

    figure = Figure(figsize=(7.5, 1.2 + 0.3 * len(models)))
    axes = figure.add_subplot()
    axes.boxplot(data[::-1], orientation="horizontal", tick_labels=models[::-1], widths=0.6)
    axes.set_xlabel("accuracy per group (%)")
    axes.set_xlim(0, 100)
    axes.tick_params(axis="y", labelsize=8)
    axes.set_title(title, fontsize=10)
    axes.grid(True, axis="x", alpha=0.3)
    return _png(figure)

"""Discrimination indices over the top models (KINA 5.4, Table 7).

For each group (discipline), over the `top` models ranked by overall accuracy: mean, SD (population,
ddof = 0, as KINA Table 7), CV = SD / mean x 100, max, min and Delta = max - min.
"""

from __future__ import annotations

import polars as pl


def discrimination_indices(overall: pl.DataFrame, by_group: pl.DataFrame, *, top: int = 10) -> pl.DataFrame:
    """overall: model, accuracy. by_group: model, group, accuracy (long). Returns one row per group."""
    ranked = overall.sort(["accuracy", "model"], descending=[True, False]).head(top)
    if ranked.height < 2:
        raise ValueError(f"discrimination indices need at least 2 models, got {ranked.height}")
    chosen = by_group.join(ranked.select("model"), on="model", how="semi")
    short = chosen.group_by("group").len().filter(pl.col("len") != ranked.height)
    if short.height:
        raise ValueError(f"groups without a score for every top-{top} model: {short['group'].to_list()}")
    return (
        chosen.group_by("group")
        .agg(
            n_models=pl.len(),
            mean=pl.col("accuracy").mean(),
            sd=pl.col("accuracy").std(ddof=0),
            max=pl.col("accuracy").max(),
            min=pl.col("accuracy").min(),
        )
        .with_columns(cv=pl.col("sd") / pl.col("mean") * 100, delta=pl.col("max") - pl.col("min"))
        .select("group", "n_models", "mean", "sd", "cv", "max", "min", "delta")
        .sort("group")
    )

"""The post-evaluation audit (OenoBench 4.3): released items whose answers suggest a wrong key.

Two rules, over the evaluated models (the random baseline is not one): an item that no model answering it gets
right, and an item whose correctness correlates negatively with the models' skill (the point-biserial
correlation of a model's score on the item with its accuracy on the other items it answered, leave-one-out, so
the item does not correlate with itself). Both need at least `min_models` models answering the item. Suspects
are reported with their evidence, never dropped here: a person (the review round) decides.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from benchmark_platform.analysis.config import SuspectConfig
from benchmark_platform.analysis.matrix import ScoreMatrix

NONE_CORRECT = "no_model_correct"
NEGATIVE = "negative_point_biserial"
# the correlation is a float compared with a threshold: within this distance of it an item is not suspect, so a
# last-bit difference between machines cannot move an item in or out
R_EPS = 1e-9

SCHEMA = {
    "item_id": pl.String,
    "discipline": pl.String,
    "reason": pl.String,
    "models_answering": pl.Int64,
    "models_correct": pl.Int64,
    "share_correct": pl.Float64,
    "point_biserial": pl.Float64,
}


def point_biserials(scores: np.ndarray, answered: np.ndarray) -> np.ndarray:
    """Per item, the correlation over the models answering it of their score on the item with their accuracy on
    the other items they answered; NaN where either is constant or fewer than two models answered."""
    weight = answered.astype(np.float64)
    total, count = (scores * weight).sum(axis=0), weight.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        skill = (total[None, :] - scores * weight) / (count[None, :] - weight)  # leave-one-out, per item and model
    out = np.full(scores.shape[0], np.nan)
    for i in range(scores.shape[0]):
        keep = answered[i] & np.isfinite(skill[i])
        if keep.sum() < 2:
            continue
        x, y = scores[i, keep], skill[i, keep]
        xc, yc = x - x.mean(), y - y.mean()
        denominator = np.sqrt(np.sum(xc * xc) * np.sum(yc * yc))
        if denominator > 0:
            out[i] = float(np.sum(xc * yc) / denominator)
    return out


def suspect_items(matrix: ScoreMatrix, models: Sequence[str], config: SuspectConfig) -> pl.DataFrame:
    """One row per suspect: item_id, discipline, reason, models_answering, models_correct (a score above 0),
    share_correct (mean score of the models answering), point_biserial (NaN -> null where undefined); sorted by
    reason, then the strongest evidence first."""
    columns = [matrix.column(m) for m in models]
    if not columns:
        return pl.DataFrame(schema=SCHEMA)
    scores, answered = matrix.scores[:, columns], matrix.answered[:, columns]
    r = point_biserials(scores, answered)
    n = answered.sum(axis=1)
    correct = ((scores > 0) & answered).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, (scores * answered).sum(axis=1) / np.maximum(n, 1), np.nan)
    judged = n >= config.min_models
    none_correct = judged & (correct == 0)
    negative = judged & ~none_correct & np.isfinite(r) & (np.nan_to_num(r) < config.point_biserial_below - R_EPS)
    rows = np.flatnonzero(none_correct | negative)
    discipline = (
        matrix.items["discipline"].to_list() if "discipline" in matrix.items.columns else [None] * matrix.n_items
    )
    item_ids = matrix.items["item_id"].to_list()
    frame = pl.DataFrame(
        {
            "item_id": [item_ids[i] for i in rows],
            "discipline": [discipline[i] for i in rows],
            "reason": [NONE_CORRECT if none_correct[i] else NEGATIVE for i in rows],
            "models_answering": [int(n[i]) for i in rows],
            "models_correct": [int(correct[i]) for i in rows],
            "share_correct": [float(share[i]) for i in rows],
            "point_biserial": [float(r[i]) if np.isfinite(r[i]) else None for i in rows],
        },
        schema=SCHEMA,
    )
    return frame.sort(["reason", "point_biserial", "item_id"], nulls_last=True)

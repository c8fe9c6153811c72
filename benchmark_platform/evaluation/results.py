"""The per-item results frame every evaluator and importer produces.

One row per (model, item_id, sample): `sample` is the 0-based draw index of avg@k
(0 when each item was answered once); `prediction` is the parsed option letter, null when
the answer could not be parsed; `correct` is never null (an unparsed answer is wrong).
Telemetry columns (tokens, latency, cost, ...) may follow these; analyses ignore them.
"""

from __future__ import annotations

import polars as pl

RESULT_SCHEMA: dict[str, pl.DataType] = {
    "model": pl.String(),
    "item_id": pl.String(),
    "discipline": pl.String(),
    "sample": pl.Int32(),
    "prediction": pl.String(),
    "correct": pl.Boolean(),
}

RESULT_COLUMNS = tuple(RESULT_SCHEMA)


def empty_results() -> pl.DataFrame:
    return pl.DataFrame(schema=RESULT_SCHEMA)


def validate_results(frame: pl.DataFrame, source: str) -> pl.DataFrame:
    """Check the contract above; return the frame with the core columns first, cast to schema.

    `source` (a file name, a model config) is named in every error.
    """
    missing = [c for c in RESULT_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{source}: results lack columns {missing}")
    frame = frame.select(
        [pl.col(c).cast(t) for c, t in RESULT_SCHEMA.items()] + [c for c in frame.columns if c not in RESULT_SCHEMA]
    )
    for column in ("model", "item_id", "discipline", "sample", "correct"):
        nulls = frame.filter(pl.col(column).is_null())
        if nulls.height:
            row = nulls.row(0, named=True)
            raise ValueError(f"{source}: {nulls.height} rows have no {column} (first: {row})")
    dup = frame.group_by("model", "item_id", "sample").len().filter(pl.col("len") > 1)
    if dup.height:
        row = dup.row(0, named=True)
        raise ValueError(
            f"{source}: {dup.height} duplicated (model, item_id, sample) keys, e.g. "
            f"model={row['model']!r} item_id={row['item_id']!r} sample={row['sample']}"
        )
    wrong = frame.filter(pl.col("prediction").is_null() & pl.col("correct"))
    if wrong.height:
        row = wrong.row(0, named=True)
        raise ValueError(f"{source}: unparsed answer marked correct: {row}")
    return frame

"""Analysis in the system of record: a spec's answers and item attributes in, its analysis results out."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

import numpy as np
import polars as pl
import psycopg2

from benchmark_platform.analysis.irt import IrtFit
from benchmark_platform.analysis.statistics import ACCURACY_SCHEMA, AnalysisReport, ConfigInfo
from benchmark_platform.evaluation import LETTERS
from benchmark_platform.store import Database, as_json, insert_rows

_ANSWERS = """
SELECT r.model, a.item_id, r.discipline, a.sample_index AS sample, a.predicted_index, a.correct, a.raw_output,
       a.input_tokens, a.output_tokens, a.reasoning_tokens, a.latency_ms / 1000.0 AS latency_s, a.cost_usd, a.retried
FROM evaluation_answers a JOIN evaluation_runs r USING (evaluation_run_id)
JOIN released_items(%s, %s, %s) x ON x.item_id = a.item_id WHERE r.spec = %s"""

_ITEMS = """
SELECT i.item_id, i.discipline, x.difficulty, g.strategy, g.generator, g.gate_result
FROM released_items(%s, %s, %s) x JOIN items i USING (item_id) LEFT JOIN generation_metadata g USING (item_id)
WHERE i.discipline IN (SELECT DISTINCT discipline FROM evaluation_runs WHERE spec = %s)"""

# Analyses see exactly the released items (sql/0020 `released_items`: the after-audit selection), with the audit's
# difficulty relabels applied, so the leaderboard's n_items is the released count.


def load_answers(
    db: Database, spec_name: str, include_manual_review: bool = False, require_review_approval: bool = False
) -> pl.DataFrame:
    """Every stored answer on the spec's released items as a results frame with telemetry (raw_text, tokens,
    latency_s, cost_usd)."""
    rows = db.query(_ANSWERS, (spec_name, include_manual_review, require_review_approval, spec_name))
    schema = {
        "model": pl.String,
        "item_id": pl.String,
        "discipline": pl.String,
        "sample": pl.Int32,
        "predicted_index": pl.Int16,
        "correct": pl.Boolean,
        "raw_output": pl.String,
        "input_tokens": pl.Int64,
        "output_tokens": pl.Int64,
        "reasoning_tokens": pl.Int64,
        "latency_s": pl.Float64,
        "cost_usd": pl.Float64,
        "retried": pl.Boolean,
    }
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    letters = dict(enumerate(LETTERS))
    return frame.with_columns(
        prediction=pl.col("predicted_index").replace_strict(letters, default=None, return_dtype=pl.String),
        raw_text="raw_output",
    ).drop("predicted_index", "raw_output")


def load_configs(db: Database, spec_name: str, answers: pl.DataFrame) -> dict[str, ConfigInfo]:
    """Each configuration's run settings (the same in every partition) and its total cost."""
    cost = dict(answers.group_by("model").agg(pl.col("cost_usd").sum()).iter_rows())
    configs = {}
    for row in db.query(
        "SELECT DISTINCT ON (model) model, kind, settings FROM evaluation_runs WHERE spec = %s "
        "ORDER BY model, discipline",
        (spec_name,),
    ):
        settings = row["settings"]
        configs[row["model"]] = ConfigInfo(
            kind=row["kind"],
            family=settings.get("family"),
            reasoning_of=settings.get("reasoning_of"),
            tool_use_of=settings.get("tool_use_of"),
            params_b=settings.get("params_b"),
            cost_usd=cost.get(row["model"], 0.0),
        )
    return configs


def load_item_attributes(
    db: Database,
    spec_name: str,
    leaves: list[tuple[str, tuple[str, ...]]],
    generator_families: Mapping[str, str],
    closed_book_verdict: str,
    include_manual_review: bool = False,
    require_review_approval: bool = False,
) -> pl.DataFrame:
    """item_id, discipline, level_1..level_n (the taxonomy ancestors of the item's leaf, coarsest first),
    difficulty, strategy, generator_family, closed_book."""
    paths = {leaf: path[:-1] for leaf, path in leaves}
    depth = max((len(p) for p in paths.values()), default=0)
    rows = []
    for r in db.query(_ITEMS, (spec_name, include_manual_review, require_review_approval, spec_name)):
        path = paths.get(r["discipline"], ())
        gate = r["gate_result"]
        rows.append(
            {
                "item_id": r["item_id"],
                "discipline": r["discipline"],
                **{f"level_{i + 1}": path[i] if i < len(path) else None for i in range(depth)},
                "difficulty": r["difficulty"],
                "strategy": r["strategy"],
                "generator_family": generator_families.get(r["generator"] or ""),
                "closed_book": None if gate is None else str(gate == closed_book_verdict).lower(),
            }
        )
    schema = {
        "item_id": pl.String,
        "discipline": pl.String,
        **{f"level_{i + 1}": pl.String for i in range(depth)},
        "difficulty": pl.String,
        "strategy": pl.String,
        "generator_family": pl.String,
        "closed_book": pl.String,
    }
    return pl.DataFrame(rows, schema=schema, orient="row").sort("item_id")


def _jsonable(frame: pl.DataFrame) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = json.loads(frame.write_json())
    return rows


def store_analysis(db: Database, spec_name: str, report: AnalysisReport) -> dict[str, int]:
    """Replace the spec's analysis results in one transaction; returns row counts per table."""
    accuracy = report.accuracy.select(*ACCURACY_SCHEMA)
    with db.transaction() as conn, conn.cursor() as cur:
        for table in ("analysis_accuracy", "analysis_tables", "analysis_plots"):
            cur.execute(f"DELETE FROM {table} WHERE spec = %s", (spec_name,))
        insert_rows(
            conn, "analysis_accuracy", ("spec", *accuracy.columns), [(spec_name, *row) for row in accuracy.iter_rows()]
        )
        insert_rows(
            conn,
            "analysis_tables",
            ("spec", "name", "row_index", "row"),
            [
                (spec_name, name, i, as_json(row))
                for name, frame in sorted(report.tables.items())
                for i, row in enumerate(_jsonable(frame))
            ],
        )
        insert_rows(
            conn,
            "analysis_plots",
            ("spec", "name", "png", "sha256"),
            [(spec_name, name, png, hashlib.sha256(png).hexdigest()) for name, png in sorted(report.plots.items())],
        )
    return {
        "accuracy_rows": accuracy.height,
        **{name: frame.height for name, frame in report.tables.items()},
        "plots": len(report.plots),
    }


def load_pool_fit(db: Database, digest: str) -> IrtFit | None:
    """The stored pool IRT fit of this digest (analysis.irt.fit_digest), or None."""
    row = db.query("SELECT discrimination, intercept, abilities FROM irt_pool_fits WHERE fit_digest = %s", (digest,))
    if not row:
        return None
    arrays = [np.frombuffer(bytes(row[0][name]), dtype="<f8").astype(float) for name in _FIT_ARRAYS]
    return IrtFit(discrimination=arrays[0], intercept=arrays[1], abilities=arrays[2])


def store_pool_fit(db: Database, digest: str, fit: IrtFit) -> None:
    values = [np.ascontiguousarray(getattr(fit, name), dtype="<f8").tobytes() for name in _FIT_ARRAYS]
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            """INSERT INTO irt_pool_fits (fit_digest, discrimination, intercept, abilities) VALUES (%s, %s, %s, %s)
               ON CONFLICT (fit_digest) DO NOTHING""",
            (digest, *map(psycopg2.Binary, values)),
        )


_FIT_ARRAYS = ("discrimination", "intercept", "abilities")

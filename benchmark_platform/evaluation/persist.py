"""Evaluation in the system of record: a partition's items in, its evaluation runs and answers out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import polars as pl

from benchmark_platform.evaluation.items import LETTERS, EvalItem
from benchmark_platform.evaluation.results import validate_results
from benchmark_platform.store import Database, as_json, insert_rows, returned

ANSWER_COLUMNS = (
    "evaluation_run_id",
    "item_id",
    "sample_index",
    "predicted_index",
    "correct",
    "raw_output",
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "latency_ms",
    "cost_usd",
    "retried",
)


@dataclass(frozen=True)
class EvaluationRun:
    model: str
    kind: Literal["baseline", "model", "imported"]
    settings: dict[str, Any]
    answers: pl.DataFrame  # the results frame, telemetry columns optional


def load_eval_items(
    db: Database,
    spec_name: str,
    discipline: str,
    include_manual_review: bool = False,
    require_review_approval: bool = False,
) -> list[EvalItem]:
    """The discipline's released items (sql/0020 `released_items`: what the after-audit selection chose): models
    are evaluated on exactly what ships."""
    rows = db.query(
        """SELECT i.item_id, i.discipline, i.question, i.options, i.answer_index
           FROM released_items(%s, %s, %s) r JOIN items i USING (item_id)
           WHERE r.discipline = %s ORDER BY i.item_id""",
        (spec_name, include_manual_review, require_review_approval, discipline),
    )
    return [
        EvalItem(
            item_id=r["item_id"],
            discipline=r["discipline"],
            question=r["question"],
            options=tuple(r["options"]),
            answer=LETTERS[r["answer_index"]],
        )
        for r in rows
    ]


def spec_item_disciplines(db: Database, spec_name: str) -> dict[str, str]:
    return {
        r["item_id"]: r["discipline"]
        for r in db.query("SELECT item_id, discipline FROM items WHERE spec = %s", (spec_name,))
    }


def stored_models(db: Database, spec_name: str, discipline: str) -> set[str]:
    rows = db.query("SELECT model FROM evaluation_runs WHERE spec = %s AND discipline = %s", (spec_name, discipline))
    return {r["model"] for r in rows}


def _answer_rows(run_id: int, answers: pl.DataFrame) -> list[tuple[Any, ...]]:
    frame = answers.with_columns(
        predicted_index=pl.col("prediction").replace_strict(
            {c: i for i, c in enumerate(LETTERS)}, default=None, return_dtype=pl.Int16
        ),
        **{
            c: pl.col(c) if c in answers.columns else pl.lit(d)
            for c, d in (
                ("raw_text", None),
                ("input_tokens", 0),
                ("output_tokens", 0),
                ("reasoning_tokens", 0),
                ("latency_s", 0.0),
                ("cost_usd", 0.0),
                ("retried", False),
            )
        },
    )
    return [
        (run_id, *row)
        for row in frame.select(
            "item_id",
            "sample",
            "predicted_index",
            "correct",
            "raw_text",
            "input_tokens",
            "output_tokens",
            "reasoning_tokens",
            pl.col("latency_s") * 1000,
            "cost_usd",
            "retried",
        ).iter_rows()
    ]


def store_runs(
    db: Database, spec_name: str, discipline: str, runs: list[EvaluationRun], only_these: bool = False
) -> dict[str, int]:
    """Replace the partition's evaluation runs and answers in one transaction (with `only_these`, only the runs of
    the same models: the others stay as stored); returns answers per model."""
    names = [run.model for run in runs]
    if len(set(names)) != len(names):
        raise ValueError(f"{spec_name}/{discipline}: two evaluation runs share a model name: {sorted(names)}")
    for run in runs:
        validate_results(run.answers, f"{spec_name}/{discipline} run {run.model}")
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            "DELETE FROM evaluation_runs WHERE spec = %s AND discipline = %s"
            + (" AND model = ANY(%s)" if only_these else ""),
            (spec_name, discipline, names) if only_these else (spec_name, discipline),
        )
        for run in runs:
            cur.execute(
                """INSERT INTO evaluation_runs (spec, discipline, model, kind, settings)
                           VALUES (%s, %s, %s, %s, %s) RETURNING evaluation_run_id""",
                (spec_name, discipline, run.model, run.kind, as_json(run.settings)),
            )
            insert_rows(conn, "evaluation_answers", ANSWER_COLUMNS, _answer_rows(returned(cur), run.answers))
    return {run.model: run.answers.height for run in runs}

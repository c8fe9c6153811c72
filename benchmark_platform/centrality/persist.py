"""Read a discipline's candidates and write its support-centrality run (sql/0005), replacing the partition."""

from __future__ import annotations

import io

import polars as pl

from benchmark_platform.centrality.config import CentralityParams
from benchmark_platform.centrality.models import Candidate
from benchmark_platform.centrality.scoring import CentralityResult
from benchmark_platform.store import Database, as_json, insert_rows


def read_scores(db: Database, spec: str, discipline: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The stored scores and pairs of a partition, the columns the selection problem is built from."""
    items = pl.DataFrame(
        db.query(
            "SELECT item_id, stratum, mu, in_bank_dedup, shortlisted FROM centrality_scores "
            "WHERE spec = %s AND discipline = %s",
            (spec, discipline),
        ),
        schema={
            "item_id": pl.String,
            "stratum": pl.String,
            "mu": pl.Float64,
            "in_bank_dedup": pl.Boolean,
            "shortlisted": pl.Boolean,
        },
    )
    pairs = pl.DataFrame(
        db.query(
            "SELECT q_id, u_id, u_sym, s, in_support FROM centrality_pairs WHERE spec = %s AND discipline = %s "
            "ORDER BY q_id, u_id",
            (spec, discipline),
        ),
        schema={"q_id": pl.String, "u_id": pl.String, "u_sym": pl.Float64, "s": pl.Float64, "in_support": pl.Boolean},
    )
    return items, pairs


def stored_review(db: Database, spec: str, discipline: str) -> tuple[bool, str | None]:
    """Whether the partition has a stored centrality run, and the manual-review reason it recorded (None: scored)."""
    run = db.query("SELECT manual_review FROM centrality_runs WHERE spec = %s AND discipline = %s", (spec, discipline))
    return (True, run[0]["manual_review"]) if run else (False, None)


def fact_candidates(db: Database, spec: str, discipline: str) -> list[Candidate]:
    """The discipline's question-material facts as candidates: stratum key = extraction method, src = source id.
    A fact the facts stage scored below the spec's salience bar (attributes.salience) is left out."""
    rows = db.query(
        """SELECT f.fact_id, f.text, d.source_id, f.method FROM facts f JOIN documents d USING (document_id)
           WHERE f.spec = %s AND f.discipline = %s
             AND coalesce((f.attributes->'salience'->>'question_material')::boolean, true)
           ORDER BY f.fact_id""",
        (spec, discipline),
    )
    return [Candidate(id=r["fact_id"], text=r["text"], src=r["source_id"], stratum_key=r["method"]) for r in rows]


def write_centrality(
    db: Database, spec: str, result: CentralityResult, import_id: int, params: CentralityParams
) -> None:
    """Replace the partition's run, signatures, scores and pairs in one transaction."""
    d = result.discipline
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM centrality_runs WHERE spec = %s AND discipline = %s", (spec, d))
        cur.execute(
            """INSERT INTO centrality_runs (spec, discipline, import_id, params, manual_review, fallback_used, counts)
               VALUES (%s, %s, %s, %s, %s, %s, %s)""",
            (
                spec,
                d,
                import_id,
                as_json(params.model_dump(mode="json")),
                result.manual_review,
                result.fallback_used,
                as_json(result.counts),
            ),
        )
        if result.items.is_empty():
            return
        items = result.items
        insert_rows(
            conn,
            "item_signatures",
            (
                "spec",
                "discipline",
                "item_id",
                "role",
                "method_family",
                "core_principle",
                "answer_type",
                "constraints",
                "raw_alignment",
                "fallback",
                "rechecked",
            ),
            [
                (
                    spec,
                    d,
                    r["item_id"],
                    r["role"],
                    r["method_family"],
                    r["core_principle"],
                    r["answer_type"],
                    r["constraints"],
                    r["raw_alignment"],
                    r["fallback"],
                    r["rechecked"],
                )
                for r in items.iter_rows(named=True)
            ],
        )
        insert_rows(
            conn,
            "centrality_scores",
            (
                "spec",
                "discipline",
                "item_id",
                "role",
                "stratum",
                "a_hat",
                "a_lq",
                "in_bank",
                "in_bank_dedup",
                "mu",
                "c_hat",
                "c_lq",
                "shortlisted",
            ),
            [
                (
                    spec,
                    d,
                    r["item_id"],
                    r["role"],
                    r["stratum"],
                    r["a_hat"],
                    r["a_lq"],
                    r["in_bank"],
                    r["in_bank_dedup"],
                    r["mu"],
                    r["c_hat"],
                    r["c_lq"],
                    r["shortlisted"],
                )
                for r in items.iter_rows(named=True)
            ],
        )
        # COPY: a large pool has hundreds of thousands of pairs, too many for batched INSERTs
        buffer = io.BytesIO()
        result.pairs.select(pl.lit(spec).alias("spec"), pl.lit(d).alias("discipline"), pl.all()).write_csv(
            buffer, include_header=False
        )
        buffer.seek(0)
        cur.copy_expert(
            "COPY centrality_pairs (spec, discipline, q_id, u_id, t_sym, u_sym, s, in_support) FROM STDIN WITH (FORMAT csv)",
            buffer,
        )

"""KINA's stage-1 screening in a release (KINA 4.1, Table 2): per subfield, what the screening saw, what each rule
(K1 uniqueness, K2 formatting, K3 flagship difficulty) dropped and what it let in; and its effect (the point of K3):
each model's accuracy on the released items against the whole bank the spec imported, flagships marked.

Only for a spec with `audit.kina`; every figure comes from the system of record (latest audit run per discipline,
the released items' answers) and the spec's evaluation.imports files (the bank's answers, which only exist there).
"""

from __future__ import annotations

import polars as pl

from benchmark_platform.audit.config import KinaScreening
from benchmark_platform.evaluation import read_spec_imports
from benchmark_platform.release.persist import ReleaseTable, query_params
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import Database

SCREENING_RULES = {"k1": "K1_uniqueness", "k2": "K2_formatting", "k3": "K3_flagship_difficulty"}

_SCREENING = """WITH latest_audit AS (
    SELECT DISTINCT ON (discipline) audit_run_id, discipline FROM audit_runs WHERE spec = %(spec)s
    ORDER BY discipline, audit_run_id DESC),
judged AS (
    SELECT a.discipline, f.item_id,
           bool_or(f.agent = 'K1_uniqueness' AND f.severity = 'fail') AS k1,
           bool_or(f.agent = 'K2_formatting' AND f.severity = 'fail') AS k2,
           bool_or(f.agent = 'K3_flagship_difficulty' AND f.severity = 'fail') AS k3
    FROM audit_findings f JOIN latest_audit a USING (audit_run_id) GROUP BY a.discipline, f.item_id),
dropped AS (
    SELECT p.item_id FROM audit_policy p JOIN latest_audit a USING (audit_run_id) WHERE p.action = 'drop'),
released AS (SELECT item_id FROM released_items(%(spec)s, %(include_manual_review)s, %(require_review_approval)s))
SELECT j.discipline, count(*)::int AS audited, count(*) FILTER (WHERE k1)::int AS dropped_k1,
       count(*) FILTER (WHERE k2)::int AS dropped_k2, count(*) FILTER (WHERE k3)::int AS dropped_k3,
       count(*) FILTER (WHERE NOT (k1 OR k2 OR k3))::int AS screened_in,
       count(*) FILTER (WHERE NOT (k1 OR k2 OR k3) AND j.item_id IN (SELECT item_id FROM dropped))::int
           AS dropped_by_other_agents,
       count(*) FILTER (WHERE j.item_id IN (SELECT item_id FROM released))::int AS released
FROM judged j GROUP BY j.discipline"""

_BANK_ITEMS = "SELECT item_id FROM item_bank_rows WHERE spec = %(spec)s"
_RELEASED_ANSWERS = """SELECT e.model, a.item_id, a.correct FROM evaluation_answers a
    JOIN evaluation_runs e USING (evaluation_run_id)
    JOIN released_items(%(spec)s, %(include_manual_review)s, %(require_review_approval)s) x ON x.item_id = a.item_id
    WHERE e.spec = %(spec)s"""


def _frame(db: Database, sql: str, params: dict[str, object], schema: dict[str, type[pl.DataType]]) -> pl.DataFrame:
    return pl.DataFrame(db.query(sql, params), schema=schema)


def screening_by_subfield(db: Database, spec: BenchmarkSpec) -> pl.DataFrame:
    """One row per audited subfield with its KINA discipline (the taxonomy's first level)."""
    columns = ["audited", "dropped_k1", "dropped_k2", "dropped_k3", "screened_in", "dropped_by_other_agents"]
    schema: dict[str, type[pl.DataType]] = {"discipline": pl.Utf8, **dict.fromkeys([*columns, "released"], pl.Int64)}
    frame = _frame(db, _SCREENING, query_params(spec), schema)
    level_1 = pl.DataFrame(
        {"discipline": [k for k, _ in spec.leaves], "kina_discipline": [p[0] for _, p in spec.leaves]}
    )
    return level_1.join(frame, on="discipline", how="inner").rename({"discipline": "subfield"})


def screening_effect(db: Database, spec: BenchmarkSpec, kina: KinaScreening) -> pl.DataFrame:
    """Per model: accuracy (%) over the answered items of the whole imported bank and of the release."""
    results = read_spec_imports(spec.evaluation.imports, spec.directory)
    bank_ids = _frame(db, _BANK_ITEMS, query_params(spec), {"item_id": pl.Utf8})
    released = _frame(
        db, _RELEASED_ANSWERS, query_params(spec), {"model": pl.Utf8, "item_id": pl.Utf8, "correct": pl.Boolean}
    )
    if results is None or not released.height:
        return pl.DataFrame()

    def accuracy(frame: pl.DataFrame, where: str) -> pl.DataFrame:
        # a model's several samples of an item count by majority, as K3 counts them
        per_item = frame.group_by("model", "item_id").agg(correct=pl.col("correct").cast(pl.Float64).mean() > 0.5)
        return per_item.group_by("model").agg(
            pl.len().cast(pl.Int64).alias(f"{where}_items"),
            (pl.col("correct").cast(pl.Float64).mean() * 100).alias(f"{where}_accuracy"),
        )

    bank = results.join(bank_ids, on="item_id", how="semi").select("model", "item_id", "correct")
    return (
        accuracy(bank, "bank")
        .join(accuracy(released, "release"), on="model", how="inner")
        .with_columns(
            flagship=pl.col("model").is_in(kina.flagships),
            delta_points=pl.col("release_accuracy") - pl.col("bank_accuracy"),
        )
        .select("model", "flagship", "bank_items", "bank_accuracy", "release_items", "release_accuracy", "delta_points")
    )


def kina_tables(db: Database, spec: BenchmarkSpec) -> list[ReleaseTable]:
    """The screening tables of a KINA-style spec (none for another)."""
    kina = spec.audit.kina
    if kina is None:
        return []
    return [
        ReleaseTable(
            "kina/screening",
            screening_by_subfield(db, spec),
            ("kina_discipline", "subfield"),
            "KINA stage-1 screening per audited subfield (latest audit run): items audited, failed by K1 uniqueness, "
            "K2 formatting and K3 flagship difficulty (an item may fail several), screened in (failed none), "
            "screened in but dropped by another critical audit agent, and released after selection.",
        ),
        ReleaseTable(
            "kina/screening_effect",
            screening_effect(db, spec, kina),
            ("model",),
            "The screening's effect per model: accuracy (%) over the answered items of the whole bank the spec "
            "imported (before screening) and over the released items; flagship: one of the K3 flagships.",
        ),
    ]


def _markdown(frame: pl.DataFrame) -> str:
    def cell(v: object) -> str:
        return f"{v:.1f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.iter_rows()]
    return "\n".join(lines)


def kina_notes(kina: KinaScreening) -> tuple[str, ...]:
    """The datasheet's statement of the flagships and their rule (the spec's configuration)."""
    rule = f" Rule: {kina.flagship_rule.rstrip('.')}." if kina.flagship_rule else ""
    unanswered = " (a flagship with no recorded answer counts as not answering correctly)"
    return (
        f"**KINA flagships (K3).** {', '.join(kina.flagships)}.{rule} K3 drops an item unless at least "
        f"{kina.min_flagships_wrong} of the {len(kina.flagships)} answer it wrongly"
        + (unanswered if kina.unanswered_counts_wrong else "")
        + ".",
    )


def screening_section(tables: dict[str, pl.DataFrame]) -> str:
    """The datasheet's KINA section from the release's own screening tables ('' without them)."""
    screening, effect = tables.get("kina/screening"), tables.get("kina/screening_effect")
    if screening is None or not screening.height:
        return ""
    counts = ["audited", "dropped_k1", "dropped_k2", "dropped_k3", "screened_in", "dropped_by_other_agents", "released"]
    by_discipline = screening.group_by("kina_discipline").agg(pl.col(c).sum() for c in counts).sort("kina_discipline")
    total = by_discipline.select(pl.lit("all").alias("kina_discipline"), *(pl.col(c).sum() for c in counts))
    text = (
        "\n## KINA stage-1 screening\n"
        "Per KINA discipline (sums over its subfields; per subfield in `data/kina/screening.parquet`). An item may fail "
        "several rules, so the dropped columns overlap; `screened_in` failed none of K1-K3.\n\n"
        + _markdown(pl.concat([by_discipline, total]))
        + "\n"
    )
    if effect is not None and effect.height:
        flagships = effect.filter(pl.col("flagship")).sort("bank_accuracy", descending=True)
        text += (
            "\n**The screening's effect.** The flagships' accuracy (%) over the whole imported bank against the "
            "released items (every model in `data/kina/screening_effect.parquet`):\n\n"
            + _markdown(flagships.drop("flagship"))
            + "\n"
        )
    return text

"""The release's tables, read from the system of record. A stage adds its table with one entry in RELEASE_QUERIES.

Released items are what the after-audit selection chose (sql/0020 `released_items`: selected_items among the latest
audit run's survivors, difficulty as the audit relabelled it; disciplines in manual review only when the spec's
release.include_manual_review says so). Every query takes the parameters `spec` (the spec's name) and
`include_manual_review` and `require_review_approval` (then only items the review tournament approved ship). Nothing
time- or run-dependent (timestamps, bigserial ids, latencies) is selected, so the same database content gives the
same release bytes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import polars as pl

from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import Database, as_json

_LATEST_AUDIT = """latest_audit AS (
    SELECT audit_run_id, discipline FROM current_audit_runs WHERE spec = %(spec)s)"""
_RELEASED = f"""WITH {_LATEST_AUDIT},
released AS (
    SELECT i.item_id, i.spec, i.discipline, i.format, i.question, i.options, i.answer_index, i.explanation,
           x.difficulty
    FROM released_items(%(spec)s, %(include_manual_review)s, %(require_review_approval)s) x
    JOIN items i USING (item_id))"""


@dataclass(frozen=True)
class ReleaseQuery:
    sql: str
    sort_by: tuple[str, ...]  # a total order of the rows, so the Parquet bytes are stable
    description: str  # shown in the Croissant manifest and the datasheet
    casts: tuple[tuple[str, Any], ...] = ()  # column dtypes that inference cannot tell (a list column of empty lists)


@dataclass(frozen=True)
class ReleaseTable:
    name: str  # file stem under data/ (may contain '/', e.g. 'analyses/tiers')
    frame: pl.DataFrame
    sort_by: tuple[str, ...]
    description: str

    def sorted_frame(self) -> pl.DataFrame:
        sort_by = [c for c in self.sort_by if c in self.frame.columns]
        return self.frame.sort(sort_by, nulls_last=True) if sort_by and self.frame.height else self.frame


RELEASE_QUERIES: dict[str, ReleaseQuery] = {
    "items": ReleaseQuery(
        f"""{_RELEASED} SELECT r.item_id, r.discipline, r.format, r.question, r.answer_index, r.explanation,
            r.difficulty, g.strategy, g.generator, g.prompt_version, g.gate_result
            FROM released r LEFT JOIN generation_metadata g USING (item_id)""",
        ("item_id",),
        "Released questions: the items the after-audit selection chose in every discipline, with how each was "
        "generated (generated items) or where it was imported from (item-bank items: data/item_provenance).",
    ),
    "options": ReleaseQuery(
        f"""{_RELEASED} SELECT r.item_id, o.ordinality::int - 1 AS position, o.value #>> '{{}}' AS text,
            (o.ordinality - 1 = r.answer_index) AS is_correct,
            ARRAY(SELECT p.fact_id FROM item_option_facts p WHERE p.item_id = r.item_id
                  AND p.position = o.ordinality - 1 ORDER BY p.fact_id) AS proving_fact_ids
            FROM released r, jsonb_array_elements(r.options) WITH ORDINALITY o""",
        ("item_id", "position"),
        "Answer options of each item in presented order; exactly one is correct. proving_fact_ids: the facts "
        "(data/facts) that prove the option's truth value for its stem, checked by the audit's G1_grounding agent "
        "(empty for imported item-bank items, which have no stored facts).",
        (("proving_fact_ids", pl.List(pl.Utf8)),),
    ),
    "item_facts": ReleaseQuery(
        f"""{_RELEASED} SELECT l.item_id, l.fact_id, l.role FROM released r JOIN item_facts l USING (item_id)""",
        ("item_id", "fact_id"),
        "Which facts each item was generated from.",
    ),
    "facts": ReleaseQuery(
        f"""{_RELEASED} SELECT DISTINCT f.fact_id, f.discipline, f.text, f.method, f.confidence, d.source_id,
            s.tier, s.licence, d.url AS document_url, d.content_hash AS document_sha256, f.span_start, f.span_end
            FROM released r JOIN (SELECT item_id, fact_id FROM item_facts
                                  UNION SELECT item_id, fact_id FROM item_option_facts) l USING (item_id)
            JOIN facts f ON f.fact_id = l.fact_id JOIN documents d ON d.document_id = f.document_id JOIN sources s ON s.source_id = d.source_id""",
        ("fact_id",),
        "Atomic facts behind the released items and their options, each a span of a stored source document.",
    ),
    "sources": ReleaseQuery(
        """SELECT s.source_id, s.title, s.publisher, s.base_url, s.tier, s.licence, s.attribution,
           count(d.document_id)::int AS documents
           FROM sources s LEFT JOIN documents d USING (source_id) WHERE s.spec = %(spec)s
           GROUP BY s.source_id""",
        ("source_id",),
        "Sources of the benchmark with tier (1 official, 2 authoritative, 3 reliable) and licence.",
    ),
    "licences": ReleaseQuery(
        f"""{_RELEASED} SELECT s.licence, s.source_id, s.tier, s.attribution,
            count(DISTINCT f.fact_id)::int AS facts, count(DISTINCT r.item_id)::int AS items
            FROM released r JOIN (SELECT item_id, fact_id FROM item_facts
                                  UNION SELECT item_id, fact_id FROM item_option_facts) l USING (item_id)
            JOIN facts f ON f.fact_id = l.fact_id JOIN documents d ON d.document_id = f.document_id JOIN sources s ON s.source_id = d.source_id
            GROUP BY s.licence, s.source_id, s.tier, s.attribution
            UNION ALL
            SELECT b.licence, b.bank_id AS source_id, NULL::smallint AS tier, b.attribution, 0 AS facts,
                   count(*)::int AS items
            FROM released r JOIN item_bank_rows b USING (item_id) GROUP BY b.licence, b.bank_id, b.attribution""",
        ("licence", "source_id"),
        "Licences of the released content: facts and items per source licence.",
    ),
    "audit_findings": ReleaseQuery(
        f"""{_RELEASED} SELECT f.item_id, a.discipline, f.agent, f.agent_version, f.severity,
            f.payload::text AS payload FROM audit_findings f JOIN latest_audit a USING (audit_run_id)
            JOIN released r ON r.item_id = f.item_id""",
        ("item_id", "agent", "agent_version"),
        "Every audit agent's finding on every released item (latest run).",
    ),
    "item_provenance": ReleaseQuery(
        f"""{_RELEASED} SELECT b.item_id, b.bank_id, b.file_name, b.file_sha256, b.row_number, b.upstream_id,
            b.category, b.source, b.licence, b.attribution, b.metadata::text AS metadata
            FROM released r JOIN item_bank_rows b USING (item_id)""",
        ("item_id",),
        "Where each imported (item-bank) item came from: bank file and its sha256, row, upstream id, source, licence, "
        "and the author's own columns (`metadata`, JSON: the bank's metadata column and columns.keep); the author's "
        "difficulty is the item's `difficulty` in data/items.",
    ),
    "selections": ReleaseQuery(
        """SELECT discipline, target, method, k_total, objective, upper_bound, certified_ratio, repairs,
           stratum_counts::text AS stratum_counts, manual_review, response::text AS response
           FROM selections WHERE spec = %(spec)s""",
        ("target", "discipline"),
        "Each discipline's selection (facts: topic pre-approval; items: after the audit, what ships) with its "
        "certificate F(S) / upper bound, or why it went to manual review; `response` (JSON): whether models' answers "
        "entered the item selection and its held-out validation over model splits (Kendall tau, accuracy error, "
        "against stratified random subsets of the same size).",
    ),
    "audit_actions": ReleaseQuery(
        f"""WITH {_LATEST_AUDIT} SELECT p.item_id, a.discipline, p.action, p.reason, p.detail::text AS detail
            FROM audit_policy p JOIN latest_audit a USING (audit_run_id)""",
        ("item_id", "action"),
        "What the audit policy did to an item and why: drop (critical failure), relabel "
        "(difficulty, C4), disclose (closed-book slice, B2) or advise (a critical failure of an agent the gold-label "
        "calibration made advisory: a note, the item ships).",
    ),
    "item_outcomes": ReleaseQuery(
        f"""WITH {_LATEST_AUDIT},
            released AS (SELECT item_id FROM released_items(%(spec)s, %(include_manual_review)s,
                                                           %(require_review_approval)s)),
            audited AS (SELECT DISTINCT f.item_id FROM audit_findings f JOIN latest_audit a USING (audit_run_id)),
            dropped AS (SELECT p.item_id, p.reason FROM audit_policy p JOIN latest_audit a USING (audit_run_id)
                        WHERE p.action = 'drop'),
            sel AS (SELECT discipline, k_total, manual_review, import_id, stratum_counts FROM selections
                    WHERE spec = %(spec)s AND target = 'items'),
            chosen AS (SELECT discipline, item_id FROM selected_items WHERE spec = %(spec)s),
            survivors AS (SELECT i.discipline, count(*)::int AS n FROM items i JOIN audited USING (item_id)
                          WHERE i.spec = %(spec)s AND NOT EXISTS (SELECT 1 FROM dropped d WHERE d.item_id = i.item_id)
                          GROUP BY i.discipline)
            SELECT i.item_id, i.discipline,
                CASE WHEN b.item_id IS NOT NULL THEN 'item_bank' ELSE 'generated' END AS origin,
                (u.item_id IS NOT NULL) AS audited, (d.item_id IS NOT NULL) AS dropped,
                (c.item_id IS NOT NULL) AS selected, (r.item_id IS NOT NULL) AS released,
                CASE
                  WHEN r.item_id IS NOT NULL AND c.item_id IS NOT NULL THEN 'released: selected'
                  WHEN r.item_id IS NOT NULL THEN 'released: manual-review discipline released on request ('
                       || coalesce(m.manual_review, '') || ')'
                  WHEN u.item_id IS NULL THEN 'not audited: the latest audit of its discipline did not see it'
                  WHEN d.item_id IS NOT NULL THEN 'dropped by the audit: ' || d.reason
                  WHEN m.discipline IS NULL THEN 'not selected: the discipline has no item selection'
                  WHEN m.manual_review IS NOT NULL AND NOT %(include_manual_review)s THEN
                       'not released: the discipline went to manual review (' || m.manual_review || ')'
                  WHEN m.manual_review IS NOT NULL THEN
                       'not released: manual-review discipline released up to its K_d=' || m.k_total
                  WHEN c.item_id IS NOT NULL THEN 'not released: not approved by the expert review'
                  WHEN cs.shortlisted IS FALSE THEN 'not selected: not shortlisted by support centrality'
                  WHEN cs.stratum IS NOT NULL AND coalesce((m.stratum_counts ->> cs.stratum)::int, 0)
                       >= st.upper_quota THEN 'not selected: stratum ' || quote_literal(cs.stratum)
                       || ' upper quota U_h=' || st.upper_quota || ' reached'
                  ELSE 'not selected: K_d=' || m.k_total || ' reached (' || m.k_total || ' of '
                       || coalesce(v.n, 0) || ' audit survivors chosen)'
                END AS reason
            FROM items i
            LEFT JOIN item_bank_rows b ON b.item_id = i.item_id
            LEFT JOIN audited u ON u.item_id = i.item_id
            LEFT JOIN dropped d ON d.item_id = i.item_id
            LEFT JOIN chosen c ON c.item_id = i.item_id AND c.discipline = i.discipline
            LEFT JOIN released r ON r.item_id = i.item_id
            LEFT JOIN sel m ON m.discipline = i.discipline
            LEFT JOIN survivors v ON v.discipline = i.discipline
            LEFT JOIN centrality_scores cs ON cs.spec = i.spec AND cs.discipline = i.discipline
                 AND cs.item_id = i.item_id AND cs.role = 'candidate'
            LEFT JOIN anchor_strata st ON st.import_id = m.import_id AND st.name = cs.stratum
            WHERE i.spec = %(spec)s""",
        ("discipline", "item_id"),
        "Every item of the spec (imported from the bank or generated) and what became of it: audited, dropped by "
        "the audit (the agents and what they found), selected, released, and why in one sentence ('not selected: "
        "K_d=5 reached', 'dropped by the audit: critical failure: A1_lexical_hygiene (vague terms: famous)', ...). "
        "The datasheet's counts are computed from this table.",
    ),
    "evaluation_answers": ReleaseQuery(
        f"""{_RELEASED} SELECT e.model, e.kind, a.item_id, a.sample_index, a.predicted_index, a.correct,
            a.raw_output, a.input_tokens, a.output_tokens, a.reasoning_tokens, a.cost_usd, a.retried
            FROM evaluation_answers a JOIN evaluation_runs e USING (evaluation_run_id)
            JOIN released r ON r.item_id = a.item_id WHERE e.spec = %(spec)s""",
        ("model", "item_id", "sample_index"),
        "Each evaluated configuration's answers on the released items.",
    ),
    "gold_calibration": ReleaseQuery(
        """SELECT agent, agent_version, rubric, n, agent_flags, human_defects, kappa, ci_low, ci_high, is_primary,
           advisory FROM audit_calibrations WHERE spec = %(spec)s""",
        ("agent", "agent_version", "rubric"),
        "Cohen's kappa (bootstrap 95% CI) of each audit agent against the "
        "human gold labels of its rubric; an agent under the threshold on its primary rubric is advisory.",
    ),
    "stage_anchors": ReleaseQuery(
        """SELECT DISTINCT ON (a.discipline) a.discipline, a.is_example, a.note LIKE 'DERIVED%%' AS derived,
                  a.note, a.k_total, a.content_hash
           FROM anchor_imports a LEFT JOIN selections s ON s.spec = a.spec AND s.discipline = a.discipline
                AND s.target = 'items' AND s.import_id = a.import_id
           WHERE a.spec = %(spec)s ORDER BY a.discipline, (s.import_id IS NULL), a.import_id DESC""",
        ("discipline",),
        "The anchors each discipline's selection used: expert-elicited, a bundled example, or DERIVED from data "
        "(the last two are not expert-elicited).",
    ),
    "stage_signatures": ReleaseQuery(
        """SELECT discipline, fallback_used, manual_review, counts::text AS counts FROM centrality_runs
           WHERE spec = %(spec)s""",
        ("discipline",),
        "Support centrality of each discipline's fact pool: whether psi came from the deterministic fallback.",
    ),
    "stage_audit_skips": ReleaseQuery(
        f"""WITH {_LATEST_AUDIT} SELECT a.discipline, k.agent, k.agent_version, k.reason
            FROM audit_skips k JOIN latest_audit a USING (audit_run_id)""",
        ("discipline", "agent"),
        "Audit agents that did not run in a discipline's latest audit, and why.",
    ),
    "stage_evaluations": ReleaseQuery(
        """SELECT model, kind, settings ->> 'scoring' AS scoring, settings ->> 'format' AS import_format,
                  settings ->> 'path' AS import_path, count(*)::int AS disciplines
           FROM evaluation_runs WHERE spec = %(spec)s GROUP BY 1, 2, 3, 4, 5""",
        ("kind", "model"),
        "Every evaluated configuration and how: baseline, model (generated or likelihood scoring) or imported.",
    ),
    "leaderboard": ReleaseQuery(
        """SELECT model, n_items, accuracy, ci_low, ci_high, rank, unparsed_answers, answered, missing, unparsed,
           answered_accuracy, answered_ci_low, answered_ci_high, pool_accuracy, pool_ci_low, pool_ci_high
           FROM analysis_accuracy WHERE spec = %(spec)s AND grouping = 'overall'""",
        ("rank", "model"),
        "Accuracy (%) per configuration with bootstrap 95% CI over the released items (accuracy: a missing answer "
        "scores 0), and over the items it answered (answered_accuracy, answered_ci_*); answered / missing: items with "
        "and without a recorded answer; unparsed: answered items with no extractable option (scored wrong), "
        "unparsed_answers the same in answers (samples); rank: by answered_accuracy among the configurations that "
        "answered at least analysis.min_answered_share of the items (null: unranked); pool_*: the item bank-level "
        "estimate from the answered items (analysis/irt.py), where the spec has a bank with recorded answers.",
    ),
    "accuracy_by_group": ReleaseQuery(
        """SELECT grouping, group_value, model, n_items, accuracy, ci_low, ci_high, unparsed_answers, answered,
           missing, unparsed, answered_accuracy, answered_ci_low, answered_ci_high
           FROM analysis_accuracy WHERE spec = %(spec)s AND grouping <> 'overall'""",
        ("grouping", "group_value", "model"),
        "Accuracy (%) with bootstrap 95% CI per item group and configuration, strict (missing answers score 0) and "
        "over the answered items, with the answered, missing and unparsed counts.",
    ),
}

_ANALYSES = "SELECT name, row FROM analysis_tables WHERE spec = %(spec)s ORDER BY name, row_index"
_PLOTS = "SELECT name, png FROM analysis_plots WHERE spec = %(spec)s ORDER BY name"


def query_params(spec: BenchmarkSpec) -> dict[str, object]:
    return {
        "spec": spec.name,
        "include_manual_review": spec.release.include_manual_review,
        "require_review_approval": spec.release.require_review_approval,
    }


def read_release_tables(db: Database, spec: BenchmarkSpec) -> list[ReleaseTable]:
    """Every registered table, then one table per stored analysis (`analyses/<name>`), in a stable order."""
    params = query_params(spec)
    tables = []
    for name, query in RELEASE_QUERIES.items():
        frame = _read(db, query.sql, params).with_columns(pl.col(c).cast(t) for c, t in query.casts)
        tables.append(ReleaseTable(name, frame, query.sort_by, query.description))
    analyses: dict[str, list[dict[str, Any]]] = {}
    for row in db.query(_ANALYSES, params):
        analyses.setdefault(row["name"], []).append(row["row"])
    for name, rows in analyses.items():  # rows keep the analysis' own order: no re-sorting
        tables.append(
            ReleaseTable(
                f"analyses/{name}",
                pl.DataFrame(rows, infer_schema_length=None),
                (),
                f"Analysis table '{name}' of the analysis stage.",
            )
        )
    return tables


def read_plots(db: Database, spec: BenchmarkSpec) -> dict[str, bytes]:
    return {row["name"]: bytes(row["png"]) for row in db.query(_PLOTS, query_params(spec))}


def _read(db: Database, sql: str, params: dict[str, object]) -> pl.DataFrame:
    """The query's rows as a frame; an empty result keeps the query's column names."""
    with db.connect() as conn, conn.cursor() as cur:
        cur.execute(sql, params)
        columns = [c.name for c in cur.description or ()]
        rows = cur.fetchall()
    return pl.DataFrame(rows, schema=columns, orient="row", infer_schema_length=None)


def spec_fingerprint(spec_json: str) -> str:
    return hashlib.sha256(json.dumps(json.loads(spec_json), sort_keys=True).encode()).hexdigest()


def record_release(
    db: Database,
    spec_name: str,
    version: str,
    directory: str,
    manifest: dict[str, object],
    lineage: dict[str, Any] | None = None,
) -> None:
    """Remember the release in the system of record (the latest build of a version replaces the previous one): the
    manifest with the build's lineage under `lineage`; `manifest_hash` is the manifest's alone (same content, same
    hash)."""
    text = json.dumps(manifest, sort_keys=True)
    manifest = {**manifest, "lineage": lineage} if lineage is not None else manifest
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            """INSERT INTO releases (spec, version, path, manifest, manifest_hash) VALUES (%s, %s, %s, %s, %s)
                       ON CONFLICT (spec, version) DO UPDATE SET path = EXCLUDED.path, manifest = EXCLUDED.manifest,
                         manifest_hash = EXCLUDED.manifest_hash, created_at = now()""",
            (spec_name, version, directory, as_json(manifest), hashlib.sha256(text.encode()).hexdigest()),
        )

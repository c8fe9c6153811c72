"""The audit's reads and writes: items with their facts, the previous run's findings, model answers, gold sheets,
calibrations; an audit run with its findings, skips, corpus verdicts and policy actions in one transaction."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from psycopg2.extensions import connection as Connection

from benchmark_platform.audit.agents import AuditItem, Finding, Severity
from benchmark_platform.audit.calibration import GoldSheet, KappaRow, Rating
from benchmark_platform.audit.findings import PreviousFindings, inputs_hash
from benchmark_platform.audit.goldsheet import GoldCandidate
from benchmark_platform.audit.grounding import ProofFact, from_generation
from benchmark_platform.audit.policy import HUMAN_KEY_RUBRIC, Action, KeyRating
from benchmark_platform.audit.pool import Answer
from benchmark_platform.store import Database, as_json, insert_rows, make_current, returned

__all__ = [
    "audit_run_exists",
    "current_audit_run",
    "inputs_hash",
    "load_answers",
    "load_audit_items",
    "load_advisory",
    "load_calibration",
    "load_gold_candidates",
    "gold_digest",
    "load_gold",
    "load_previous",
    "load_related_facts",
    "store_audit",
    "store_calibration",
    "store_gold_sheet",
    "store_gold_sheets",
    "load_key_ratings",
]

OPTIONS_BY_FORMAT = {"mcq4": 4, "pseudo_mcq10": 10}


def load_audit_items(
    db: Database, spec_name: str, discipline: str, expected_options: int | None = None
) -> list[AuditItem]:
    """A discipline's items with their facts' texts, generation strategy / generator, and D3's stratum (the source
    most of its facts come from, else the discipline)."""
    rows = db.query(
        """SELECT i.item_id, i.question, i.options, i.answer_index, i.format, i.difficulty, g.strategy, g.generator,
                  g.parameters,
                  EXISTS (SELECT 1 FROM item_bank_rows b WHERE b.item_id = i.item_id) AS imported,
                  coalesce(array_agg(f.text ORDER BY f.fact_id) FILTER (WHERE f.fact_id IS NOT NULL), '{}') AS facts,
                  coalesce(mode() WITHIN GROUP (ORDER BY d.source_id), i.discipline) AS stratum
           FROM items i LEFT JOIN generation_metadata g USING (item_id)
           LEFT JOIN item_facts l ON l.item_id = i.item_id LEFT JOIN facts f ON f.fact_id = l.fact_id
           LEFT JOIN documents d ON d.document_id = f.document_id
           WHERE i.spec = %s AND i.discipline = %s GROUP BY i.item_id, g.item_id ORDER BY i.item_id""",
        (spec_name, discipline),
    )
    proofs = _option_facts(db, spec_name, discipline)
    related = load_related_facts(db, spec_name, discipline)
    return [
        AuditItem(
            r["item_id"],
            r["question"],
            tuple(r["options"]),
            r["answer_index"],
            tuple(r["facts"]),
            expected_options or OPTIONS_BY_FORMAT.get(r["format"]),
            r["difficulty"],
            r["strategy"],
            r["generator"],
            r["stratum"],
            grounding=from_generation(
                r["parameters"],
                [proofs.get(r["item_id"], {}).get(p, []) for p in range(len(r["options"]))],
                r["generator"],
                r["imported"],
            ),
            related_texts=related.get(r["item_id"], ()),
        )
        for r in rows
    ]


def _option_facts(db: Database, spec_name: str, discipline: str) -> dict[str, dict[int, list[ProofFact]]]:
    """Per item and option position, the proving facts generation recorded (item_option_facts), with their
    structured attributes."""
    rows = db.query(
        """SELECT o.item_id, o.position, f.fact_id, f.text, f.attributes->>'subject' AS subject,
                  f.attributes->>'field' AS field, f.attributes->>'value' AS value,
                  f.attributes->>'entity_type' AS entity_type
           FROM item_option_facts o JOIN items i USING (item_id) JOIN facts f ON f.fact_id = o.fact_id
           WHERE i.spec = %s AND i.discipline = %s ORDER BY o.item_id, o.position, f.fact_id""",
        (spec_name, discipline),
    )
    out: dict[str, dict[int, list[ProofFact]]] = {}
    for r in rows:
        fact = ProofFact(r["fact_id"], r["text"], r["subject"], r["field"], r["value"], r["entity_type"])
        out.setdefault(r["item_id"], {}).setdefault(r["position"], []).append(fact)
    return out


def load_related_facts(db: Database, spec_name: str, discipline: str) -> dict[str, tuple[str, ...]]:
    """Per item of the discipline, the texts of the spec's facts not linked to it that state the same attribute of
    the same entity as one of its linked facts (structured and rulebook facts carry attributes.entity_id and
    .field; prose facts carry neither and relate to items only through their own links). A new such fact supports
    or contradicts the item: it changes the item's audit inputs, so the re-audit sensor re-judges the item."""
    rows = db.query(
        """SELECT l.item_id, array_agg(DISTINCT n.text ORDER BY n.text) AS texts
           FROM items i JOIN item_facts l ON l.item_id = i.item_id JOIN facts f ON f.fact_id = l.fact_id
           JOIN facts n ON n.spec = f.spec AND n.fact_id <> f.fact_id
                AND n.attributes ->> 'entity_id' = f.attributes ->> 'entity_id'
                AND n.attributes ->> 'field' = f.attributes ->> 'field'
           WHERE i.spec = %s AND i.discipline = %s
             AND NOT EXISTS (SELECT 1 FROM item_facts x WHERE x.item_id = i.item_id AND x.fact_id = n.fact_id)
           GROUP BY l.item_id""",
        (spec_name, discipline),
    )
    return {r["item_id"]: tuple(r["texts"]) for r in rows}


def audit_run_exists(db: Database, spec_name: str, discipline: str, digest: str) -> bool:
    """Whether the discipline's current audit run is of exactly these inputs (an earlier run of them that is not
    current, after an input changed and changed back, still has to be made current by the audit)."""
    return bool(
        db.scalar(
            """SELECT 1 FROM current_audit_runs c JOIN audit_runs a USING (audit_run_id)
               WHERE c.spec = %s AND c.discipline = %s AND a.inputs_hash = %s""",
            (spec_name, discipline, digest),
        )
    )


def current_audit_run(db: Database, spec_name: str, discipline: str) -> int | None:
    """The discipline's current audit run (the one its current inputs produced or reused), None before any."""
    run = db.scalar(
        "SELECT audit_run_id FROM current_audit_runs WHERE spec = %s AND discipline = %s", (spec_name, discipline)
    )
    return None if run is None else int(run)


def load_previous(db: Database, spec_name: str, discipline: str) -> tuple[int | None, PreviousFindings]:
    """The current run's findings, each pointing at the run that judged it (for carrying it over)."""
    run = current_audit_run(db, spec_name, discipline)
    if run is None:
        return None, {}
    rows = db.query(
        """SELECT item_id, agent, agent_version, severity, payload, input_hash,
                              coalesce(carried_from, audit_run_id) AS judged_in
                       FROM audit_findings WHERE audit_run_id = %s""",
        (run,),
    )
    return run, {
        (r["item_id"], r["agent"], r["agent_version"]): Finding(
            r["item_id"], r["agent"], r["agent_version"], r["severity"], r["payload"], r["input_hash"], r["judged_in"]
        )
        for r in rows
    }


def load_answers(db: Database, spec_name: str, discipline: str, families: Mapping[str, str]) -> list[Answer]:
    """Every evaluated or imported answer on the discipline's items; a model's family from the spec, else from the
    run's settings ('family'), else its name."""
    rows = db.query(
        """SELECT a.item_id, r.model, r.settings ->> 'family' AS family, a.correct
                       FROM evaluation_answers a JOIN evaluation_runs r USING (evaluation_run_id)
                       WHERE r.spec = %s AND r.discipline = %s AND r.kind <> 'baseline'
                       ORDER BY a.item_id, r.model, a.sample_index""",
        (spec_name, discipline),
    )
    return [
        Answer(r["item_id"], r["model"], families.get(r["model"]) or r["family"] or r["model"], r["correct"])
        for r in rows
    ]


def store_audit(
    db: Database,
    spec_name: str,
    discipline: str,
    digest: str,
    findings: Sequence[Finding],
    dagster_run_id: str | None,
    *,
    corpus: Mapping[tuple[str, str], tuple[Severity, dict[str, Any]]] = {},
    skipped: Mapping[tuple[str, str], str] = {},
    actions: Sequence[Action] = (),
) -> tuple[int, bool]:
    """(audit run id, whether it is new). The same inputs audited again reuse their run: no duplicate rows. A run is
    append-only: findings of earlier runs and of other agent versions are never touched. Either way the run becomes
    the discipline's current one (what selection, review, evaluation and the release read)."""
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            """INSERT INTO audit_runs (spec, discipline, inputs_hash, dagster_run_id) VALUES (%s, %s, %s, %s)
                       ON CONFLICT (spec, discipline, inputs_hash) DO NOTHING RETURNING audit_run_id""",
            (spec_name, discipline, digest, dagster_run_id),
        )
        row = cur.fetchone()
        if row is None:
            cur.execute(
                "SELECT audit_run_id FROM audit_runs WHERE spec = %s AND discipline = %s AND inputs_hash = %s",
                (spec_name, discipline, digest),
            )
            earlier = int(returned(cur))
            cur.execute(
                """SELECT (SELECT count(*) FROM audit_findings WHERE audit_run_id = %(run)s),
                          (SELECT count(*) FROM audit_policy WHERE audit_run_id = %(run)s)""",
                {"run": earlier},
            )
            if tuple(cur.fetchone() or ()) == (len(findings), len(actions)):
                make_current(cur, spec_name, "audit", discipline, earlier)
                return earlier, False
            # The earlier run lost rows: its items were replaced by a build of other inputs, and findings and
            # policy rows go with their items (ON DELETE CASCADE). Reusing it would leave items unaudited (an input
            # changed and changed back), so the same inputs are stored again as a new run.
            cur.execute("DELETE FROM audit_runs WHERE audit_run_id = %s", (earlier,))
            cur.execute(
                """INSERT INTO audit_runs (spec, discipline, inputs_hash, dagster_run_id) VALUES (%s, %s, %s, %s)
                   RETURNING audit_run_id""",
                (spec_name, discipline, digest, dagster_run_id),
            )
            row = (returned(cur),)
        run_id = row[0]  # current from now on (sql/0410's insert trigger)
        insert_rows(
            conn,
            "audit_findings",
            ("audit_run_id", "item_id", "agent", "agent_version", "severity", "payload", "input_hash", "carried_from"),
            [
                (
                    run_id,
                    f.item_id,
                    f.agent,
                    f.agent_version,
                    f.severity,
                    as_json(f.payload),
                    f.input_hash,
                    f.carried_from,
                )
                for f in findings
            ],
        )
        insert_rows(
            conn,
            "audit_skips",
            ("audit_run_id", "agent", "agent_version", "reason"),
            [(run_id, a, v, reason) for (a, v), reason in skipped.items()],
        )
        insert_rows(
            conn,
            "audit_corpus_findings",
            ("audit_run_id", "agent", "agent_version", "severity", "payload"),
            [(run_id, a, v, s, as_json(p)) for (a, v), (s, p) in corpus.items()],
        )
        insert_rows(
            conn,
            "audit_policy",
            ("audit_run_id", "item_id", "action", "reason", "detail"),
            [(run_id, x.item_id, x.action, x.reason, as_json(x.detail)) for x in actions],
        )
        return run_id, True


def store_gold_sheet(db: Database, sheet: GoldSheet) -> None:
    store_gold_sheets(db, [sheet])


def store_gold_sheets(db: Database, sheets: Sequence[GoldSheet]) -> None:
    """Replace each sheet's items and ratings (by sheet name), all sheets in one transaction: a command importing
    several sheets stores all of them or none. A sheet without items is refused (it would only delete)."""
    names = [s.name for s in sheets]
    if len(set(names)) != len(names):
        raise ValueError(
            f"two gold sheets share a name (the file stem): {sorted(n for n in names if names.count(n) > 1)}"
        )
    for sheet in sheets:
        if not sheet.items:
            raise ValueError(f"gold sheet {sheet.name!r} has no items: nothing was imported")
    with db.transaction() as conn:
        for sheet in sheets:
            _replace_gold_sheet(conn, sheet)


def _replace_gold_sheet(conn: Connection, sheet: GoldSheet) -> None:
    with conn.cursor() as cur:
        cur.execute("DELETE FROM gold_labels WHERE sheet = %s", (sheet.name,))
        cur.execute("DELETE FROM gold_items WHERE sheet = %s", (sheet.name,))
        insert_rows(
            conn,
            "gold_items",
            (
                "sheet",
                "item_ref",
                "question",
                "options",
                "answer_index",
                "facts",
                "difficulty",
                "strategy",
                "generator",
                "stratum",
            ),
            [
                (
                    sheet.name,
                    i.item_id,
                    i.question,
                    as_json(list(i.options)),
                    i.answer_index,
                    as_json(list(i.fact_texts)),
                    i.difficulty,
                    i.strategy,
                    i.generator,
                    i.group,
                )
                for i in sheet.items
            ],
        )
        insert_rows(
            conn,
            "gold_labels",
            ("sheet", "item_ref", "reviewer", "rubric", "rating"),
            [(sheet.name, r.item_ref, r.reviewer, r.rubric, r.rating) for r in sheet.ratings],
        )


def load_gold(db: Database, sheets: Iterable[str] = ()) -> tuple[list[AuditItem], list[Rating]]:
    """Gold items (imported sheets) and every rating (sheets and the review app), restricted to `sheets` if given."""
    names = list(sheets)
    where, params = ("WHERE sheet = ANY(%s)", (names,)) if names else ("", ())
    items = [
        AuditItem(
            r["item_ref"],
            r["question"],
            tuple(r["options"]),
            r["answer_index"],
            tuple(r["facts"]),
            None,
            r["difficulty"],
            r["strategy"],
            r["generator"],
            r["stratum"],
        )
        for r in db.query(f"SELECT * FROM gold_items {where} ORDER BY sheet, item_ref", params)
    ]
    ratings = [
        Rating(r["item_ref"], r["reviewer"], r["rubric"], r["rating"])
        for r in db.query(
            f"SELECT item_ref, reviewer, rubric, rating FROM gold_labels {where} ORDER BY 1, 2, 3", params
        )
    ]
    return items, ratings


def gold_digest(db: Database) -> str:
    """md5 over every gold item and rating (imported sheets and the review app): the data version of the observed
    gold labels (defs/inputs). Every sheet counts, whatever a spec names: key ratings match stored items in any sheet."""
    return str(
        db.scalar(
            """SELECT md5(coalesce((SELECT string_agg(md5(g::text), ',' ORDER BY sheet, item_ref) FROM gold_items g), '')
                      || '|' || coalesce((SELECT string_agg(concat_ws(':', sheet, item_ref, reviewer, rubric, rating),
                      ',' ORDER BY sheet, item_ref, reviewer, rubric) FROM gold_labels), ''))"""
        )
    )


def load_latest_findings(db: Database, spec_name: str, item_refs: Iterable[str]) -> list[Finding]:
    """The current runs' findings on stored items that carry gold labels (review-app sheets rate items by id)."""
    rows = db.query(
        """WITH latest AS (SELECT audit_run_id FROM current_audit_runs WHERE spec = %s)
                       SELECT item_id, agent, agent_version, severity FROM audit_findings JOIN latest USING (audit_run_id)
                       WHERE item_id = ANY(%s)""",
        (spec_name, list(item_refs)),
    )
    return [Finding(r["item_id"], r["agent"], r["agent_version"], r["severity"]) for r in rows]


def store_calibration(db: Database, spec_name: str, rows: Sequence[KappaRow]) -> None:
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM audit_calibrations WHERE spec = %s", (spec_name,))
        insert_rows(
            conn,
            "audit_calibrations",
            (
                "spec",
                "agent",
                "agent_version",
                "rubric",
                "n",
                "agent_flags",
                "human_defects",
                "kappa",
                "ci_low",
                "ci_high",
                "is_primary",
                "advisory",
            ),
            [
                (
                    spec_name,
                    r.agent,
                    r.agent_version,
                    r.rubric,
                    r.n,
                    r.agent_flags,
                    r.human_defects,
                    r.kappa,
                    r.ci_low,
                    r.ci_high,
                    r.is_primary,
                    r.advisory,
                )
                for r in rows
            ],
        )


def load_gold_candidates(db: Database, spec_name: str) -> list[GoldCandidate]:
    """The spec's audited items (those its disciplines' latest audit runs judged, dropped ones included: calibration
    needs the audit's failures rated too), with strategy, difficulty, generator and their facts' texts."""
    rows = db.query(
        """WITH latest AS (SELECT DISTINCT ON (discipline) audit_run_id FROM audit_runs WHERE spec = %s
                           ORDER BY discipline, audit_run_id DESC),
                judged AS (SELECT DISTINCT item_id FROM audit_findings JOIN latest USING (audit_run_id))
           SELECT i.item_id, i.discipline, g.strategy, i.difficulty, g.generator, i.question, i.options,
                  i.answer_index,
                  coalesce(array_agg(f.text ORDER BY f.fact_id) FILTER (WHERE f.fact_id IS NOT NULL), '{}') AS facts
           FROM items i JOIN judged USING (item_id) LEFT JOIN generation_metadata g USING (item_id)
           LEFT JOIN item_facts l ON l.item_id = i.item_id LEFT JOIN facts f ON f.fact_id = l.fact_id
           WHERE i.spec = %s GROUP BY i.item_id, g.item_id ORDER BY i.item_id""",
        (spec_name, spec_name),
    )
    return [
        GoldCandidate(
            r["item_id"],
            r["discipline"],
            r["strategy"],
            r["difficulty"],
            r["generator"],
            r["question"],
            tuple(r["options"]),
            r["answer_index"],
            tuple(r["facts"]),
        )
        for r in rows
    ]


def load_calibration(db: Database, spec_name: str) -> list[KappaRow]:
    """The spec's stored calibration (audit_calibration), in a stable order."""
    return [
        KappaRow(
            r["agent"],
            r["agent_version"],
            r["rubric"],
            r["n"],
            r["agent_flags"],
            r["human_defects"],
            r["kappa"],
            r["ci_low"],
            r["ci_high"],
            r["is_primary"],
            r["advisory"],
        )
        for r in db.query(
            """SELECT agent, agent_version, rubric, n, agent_flags, human_defects, kappa, ci_low, ci_high, is_primary,
                      advisory FROM audit_calibrations WHERE spec = %s ORDER BY agent, agent_version, rubric""",
            (spec_name,),
        )
    ]


def load_advisory(db: Database, spec_name: str) -> set[str]:
    return {
        r["agent"]
        for r in db.query("SELECT DISTINCT agent FROM audit_calibrations WHERE spec = %s AND advisory", (spec_name,))
    }


def load_key_ratings(db: Database, spec_name: str, item_ids: Sequence[str], sheets: Sequence[str]) -> list[KeyRating]:
    """Human ratings of the items' keys (rubric `answer_correct`): gold rows naming a stored item by its id, and rows
    of the sheets the spec names (audit.gold_sheets) naming a bank item by its upstream id (the author's own id)."""
    rows = db.query(
        """SELECT i.item_id, g.sheet, g.reviewer, g.rating FROM items i
           LEFT JOIN item_bank_rows b ON b.item_id = i.item_id
           JOIN gold_labels g ON g.rubric = %s
                AND (g.item_ref = i.item_id OR (g.item_ref = b.upstream_id AND g.sheet = ANY(%s)))
           WHERE i.spec = %s AND i.item_id = ANY(%s) ORDER BY i.item_id, g.sheet, g.reviewer""",
        (HUMAN_KEY_RUBRIC, list(sheets), spec_name, list(item_ids)),
    )
    return [KeyRating(r["item_id"], r["sheet"], r["reviewer"], float(r["rating"])) for r in rows]

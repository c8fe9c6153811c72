"""Record an anchor import in the system of record (sql/0001 anchor_imports/anchors + sql/0005 labels, strata, and
sql/0420 the parsed import whole), and read the current one back: the stages after anchors read it from here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmark_platform.anchors.models import AnchorSet
from benchmark_platform.store import Database, clear_current, insert_rows, make_current, returned


def record_import(db: Database, spec: str, anchors: AnchorSet) -> tuple[int, bool]:
    """The import's id, and whether it is new. An import is immutable: the same version is stored once; either way it
    becomes the discipline's current import (a new one by sql/0410's insert trigger)."""
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT import_id FROM anchor_imports WHERE spec = %s AND discipline = %s AND content_hash = %s",
            (spec, anchors.discipline, anchors.version),
        )
        found = cur.fetchone()
        document = anchors.model_dump_json()
        if found:
            # an import stored before sql/0420 has no document yet: the same files give it one
            cur.execute(
                "UPDATE anchor_imports SET anchor_set = %s WHERE import_id = %s AND anchor_set IS NULL",
                (document, int(found[0])),
            )
            make_current(cur, spec, "anchors", anchors.discipline, int(found[0]))
            return int(found[0]), False
        cur.execute(
            """INSERT INTO anchor_imports
                   (spec, discipline, file_name, content_hash, is_example, k_total, note, files, anchor_set)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING import_id""",
            (
                spec,
                anchors.discipline,
                "anchors.yaml",
                anchors.version,
                anchors.is_example,
                anchors.k_total,
                anchors.note,
                list(anchors.files),
                document,
            ),
        )
        import_id = int(returned(cur))
        kinds = {
            "methods": "method",
            "problems": "problem",
            "theorems": "theorem",
            "concepts": "concept",
            "applications": "application",
        }
        rows: list[tuple[Any, ...]] = [
            (import_id, spec, anchors.discipline, kinds[name], text, None, None, None)
            for name, entries in anchors.prototype.components().items()
            for text in entries
        ]
        rows += [
            (import_id, spec, anchors.discipline, "anchor_item", a.text, a.stratum, a.id, a.weight)
            for a in anchors.anchor_items
        ]
        insert_rows(
            conn, "anchors", ("import_id", "spec", "discipline", "kind", "text", "stratum", "item_ref", "weight"), rows
        )
        insert_rows(
            conn,
            "anchor_strata",
            ("import_id", "name", "omega", "lower_quota", "upper_quota", "keys"),
            [(import_id, s.name, s.omega, s.lower, s.upper, list(s.keys)) for s in anchors.strata],
        )
        insert_rows(
            conn,
            "anchor_item_labels",
            ("import_id", "item_ref", "text", "src", "y_a"),
            [(import_id, i.id, i.text, i.src, i.y_A) for i in anchors.item_labels],
        )
        insert_rows(
            conn,
            "anchor_pair_labels",
            ("import_id", "q_ref", "u_ref", "y_t", "y_u"),
            [(import_id, p.q, p.u, p.y_T, p.y_U) for p in anchors.pair_labels],
            on_conflict="ON CONFLICT DO NOTHING",
        )
        return import_id, True


def latest_import_versions(db: Database, spec: str) -> dict[str, str]:
    """Each discipline's current anchor version (content hash): what the stored anchors are now."""
    rows = db.query(
        """SELECT c.discipline, a.content_hash FROM current_anchor_imports c JOIN anchor_imports a USING (import_id)
           WHERE c.spec = %s""",
        (spec,),
    )
    return {r["discipline"]: r["content_hash"] for r in rows}


def clear_import(db: Database, spec: str, discipline: str) -> None:
    """The discipline has no anchor files now: no import is current (stored imports are kept, immutable)."""
    with db.transaction() as conn, conn.cursor() as cur:
        clear_current(cur, spec, "anchors", discipline)


class StaleAnchorImportError(LookupError):
    """The current import was stored before sql/0420 and has no parsed document: the anchors stage must run again."""


@dataclass(frozen=True)
class StoredAnchors:
    import_id: int
    anchor_set: AnchorSet


def current_anchors(db: Database, spec: str, discipline: str) -> StoredAnchors | None:
    """The discipline's current anchor import as the anchors stage parsed it; None when it has none (no files)."""
    rows = db.query(
        """SELECT a.import_id, a.anchor_set::text AS anchor_set
           FROM current_anchor_imports c JOIN anchor_imports a USING (import_id)
           WHERE c.spec = %s AND c.discipline = %s""",
        (spec, discipline),
    )
    if not rows:
        return None
    if rows[0]["anchor_set"] is None:
        raise StaleAnchorImportError(
            f"anchors[{discipline}]: import {rows[0]['import_id']} of spec {spec!r} was stored before the parsed "
            "document was kept (sql/0420): materialise the anchors asset again for this discipline"
        )
    # the JSON the anchors stage wrote (model_dump_json): the same tuples in the same order and the same floats
    return StoredAnchors(int(rows[0]["import_id"]), AnchorSet.model_validate_json(rows[0]["anchor_set"]))

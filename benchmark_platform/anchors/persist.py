"""Record an anchor import in the system of record (sql/0001 anchor_imports/anchors + sql/0005 labels, strata)."""

from __future__ import annotations

from typing import Any

from benchmark_platform.anchors.models import AnchorSet
from benchmark_platform.store import Database, insert_rows
from benchmark_platform.store.current import make_current
from benchmark_platform.store.db import returned


def record_import(db: Database, spec: str, anchors: AnchorSet) -> tuple[int, bool]:
    """The import's id, and whether it is new. An import is immutable: the same version is stored once; either way it
    becomes the discipline's current import (a new one by sql/0410's insert trigger)."""
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT import_id FROM anchor_imports WHERE spec = %s AND discipline = %s AND content_hash = %s",
            (spec, anchors.discipline, anchors.version),
        )
        found = cur.fetchone()
        if found:
            make_current(cur, spec, "anchors", anchors.discipline, int(found[0]))
            return int(found[0]), False
        cur.execute(
            """INSERT INTO anchor_imports (spec, discipline, file_name, content_hash, is_example, k_total, note, files)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING import_id""",
            (
                spec,
                anchors.discipline,
                "anchors.yaml",
                anchors.version,
                anchors.is_example,
                anchors.k_total,
                anchors.note,
                list(anchors.files),
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

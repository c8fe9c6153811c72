"""The facts edge of the automation: candidates changed by a new document rebuild exactly the disciplines they fall in."""

from __future__ import annotations

import dagster as dg

from benchmark_platform.defs.common import TRIGGER_TAG, DatabaseResource, discipline_partitions, key
from benchmark_platform.defs.facts.assets import new_candidates_sensor
from benchmark_platform.store import Database, insert_rows
from benchmark_platform_tests.audit.corpus import audit_spec, seed_corpus


def candidate(db: Database, spec: str, discipline: str, start: int, text: str) -> None:
    with db.transaction() as conn:
        insert_rows(
            conn,
            "fact_candidates",
            (
                "spec",
                "source_id",
                "document_id",
                "span_start",
                "span_end",
                "discipline",
                "text",
                "source_text",
                "confidence",
                "method",
            ),
            [(spec, f"{spec}_src", f"{spec}_doc", start, start + 5, discipline, text, text, 1.0, "sentence")],
        )


def test_new_candidates_rebuild_only_the_disciplines_they_touch_once(db) -> None:
    spec = audit_spec("candidates_sensor")
    seed_corpus(db, spec.name, ())  # its source and document
    candidate(db, spec.name, "regions", 0, "Napa Valley is an AVA.")
    candidate(db, spec.name, "producers", 10, "Opus One is a winery.")
    sensor = new_candidates_sensor(spec)

    @dg.asset(key=key(spec, "facts"), partitions_def=discipline_partitions(spec))
    def facts() -> None: ...

    resources = {"database": DatabaseResource(url=db.url)}
    defs = dg.Definitions(assets=[facts], sensors=[sensor], resources=resources)
    with dg.instance_for_test() as instance:

        def tick(cursor: str | None) -> dg.SensorResult:
            context = dg.build_sensor_context(instance=instance, definitions=defs, cursor=cursor, resources=resources)
            return sensor.evaluate_tick(context)

        deployed = tick(None)  # the candidates as deployed: nothing requested
        assert deployed.run_requests == []
        assert tick(deployed.cursor).run_requests == []  # unchanged (and after a daemon restart: same cursor)
        candidate(db, spec.name, "regions", 20, "Atlas Peak is an AVA in Napa County.")
        changed = tick(deployed.cursor)
        assert [(r.partition_key, r.tags[TRIGGER_TAG]) for r in changed.run_requests] == [("regions", "new_candidates")]
        assert tick(changed.cursor).run_requests == []

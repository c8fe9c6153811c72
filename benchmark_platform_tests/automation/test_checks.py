"""Release-input checks read the tables and fail meaningfully; a failed blocking check stops the release job."""

import hashlib

import dagster as dg
import pytest

from benchmark_platform.defs.automation.checks import AGENTS, release_input_checks, release_job
from benchmark_platform.defs.common import DatabaseResource, discipline_partitions, key
from benchmark_platform.store import Database

SPEC = "autocheck"


@pytest.fixture
def spec(wine_spec):
    return wine_spec.model_copy(update={"name": SPEC})


def _seed(db: Database, discipline: str) -> None:
    """Item good: linked to a fact of a stored document, distinct options, every agent's verdict.
    Item bad: no fact, 'Paris' offered twice, one agent missing; and an LLM judge without calibration."""
    digest = hashlib.sha256(b"doc").hexdigest()
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            """INSERT INTO sources VALUES ('autocheck_src', %s, 'html', 'Atlas', 'Pub', 'https://x.test', 1,
                       'CC0', 'Pub') ON CONFLICT DO NOTHING""",
            (SPEC,),
        )
        cur.execute(
            """INSERT INTO documents (document_id, source_id, url, retrieved_at, media_type, content_hash, raw,
                       text, title) VALUES ('autocheck_doc', 'autocheck_src', 'https://x.test/a', now(), 'text/html',
                       %s, 'Paris is the capital.', 'Paris is the capital.', 'A')""",
            (digest,),
        )
        cur.execute(
            """INSERT INTO facts (fact_id, spec, discipline, document_id, span_start, span_end, text, text_hash,
                       method) VALUES ('autocheck_fact', %s, %s, 'autocheck_doc', 0, 21, 'Paris is the capital.',
                       %s, 'sentence')""",
            (SPEC, discipline, digest),
        )
        for item_id, options in (
            ("good", '["Paris", "Lyon", "Nice", "Metz"]'),
            ("bad", '["Paris", " paris ", "Nice", "Metz"]'),
        ):
            cur.execute(
                """INSERT INTO items (item_id, spec, discipline, format, question, options, answer_index,
                           explanation) VALUES (%s, %s, %s, 'mcq4', 'Capital of France?', %s, 0, '')""",
                (f"autocheck_{item_id}", SPEC, discipline, options),
            )
        cur.execute("INSERT INTO item_facts VALUES ('autocheck_good', 'autocheck_fact', 'answer')")
        cur.execute(
            """INSERT INTO audit_runs (spec, discipline, inputs_hash) VALUES (%s, %s, 'h')
                       RETURNING audit_run_id""",
            (SPEC, discipline),
        )
        run_id = cur.fetchone()[0]
        verdicts = [("autocheck_good", agent) for agent in AGENTS] + [("autocheck_bad", a) for a in AGENTS[1:]]
        verdicts.append(("autocheck_good", "D1_llm_judge"))
        for item_id, agent in verdicts:
            cur.execute("INSERT INTO audit_findings VALUES (%s, %s, %s, '1', 'pass', '{}')", (run_id, item_id, agent))


def _clean(db: Database) -> None:
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM audit_runs WHERE spec = %s", (SPEC,))
        cur.execute("DELETE FROM audit_calibrations WHERE spec = %s", (SPEC,))
        cur.execute("DELETE FROM items WHERE spec = %s", (SPEC,))
        cur.execute("DELETE FROM sources WHERE spec = %s", (SPEC,))


@pytest.fixture
def seeded(db, spec):
    _seed(db, spec.discipline_keys[0])
    yield db
    _clean(db)


def test_each_release_input_check_names_what_fails(seeded, spec) -> None:
    database = DatabaseResource(url=seeded.url)
    results = {
        check.check_specs_by_output_name[next(iter(check.check_specs_by_output_name))].name: check(database)
        for check in release_input_checks(spec)
    }
    assert {name: r.passed for name, r in results.items()} == {
        "no_duplicate_options": False,
        "audit_policy_applied": False,
        "calibrated_agents_present": False,
        "items_linked_to_facts_and_sources": False,
    }
    assert all(r.severity == dg.AssetCheckSeverity.ERROR for r in results.values())
    for name in ("no_duplicate_options", "audit_policy_applied", "items_linked_to_facts_and_sources"):
        assert results[name].metadata["offending"].value == 1
        assert results[name].metadata["sample"].value[0]["item_id"] == "autocheck_bad"
    assert results["audit_policy_applied"].metadata["sample"].value[0]["missing_agents"] == str([AGENTS[0]])
    assert results["calibrated_agents_present"].metadata["sample"].value[0]["agent"] == "D1_llm_judge"


def test_failed_input_checks_block_the_release_and_passing_ones_let_it_run(seeded, spec) -> None:
    ran = []

    @dg.asset(key=key(spec, "audit_findings"), partitions_def=discipline_partitions(spec))
    def audit_findings() -> None: ...

    @dg.asset(key=key(spec, "release"), deps=[audit_findings])
    def release() -> None:
        ran.append(True)

    defs = dg.Definitions(
        assets=[audit_findings, release],
        asset_checks=release_input_checks(spec),
        jobs=[release_job(spec)],
        resources={"database": DatabaseResource(url=seeded.url)},
    )
    job = defs.resolve_job_def(f"{SPEC}_release_job")
    with dg.instance_for_test() as instance:
        blocked = job.execute_in_process(instance=instance, raise_on_error=False)
        assert not blocked.success and ran == []
        assert {e.check_name for e in blocked.get_asset_check_evaluations() if not e.passed} == {
            "no_duplicate_options",
            "audit_policy_applied",
            "calibrated_agents_present",
            "items_linked_to_facts_and_sources",
        }

        with seeded.transaction() as conn, conn.cursor() as cur:
            cur.execute("DELETE FROM items WHERE item_id = 'autocheck_bad'")
            cur.execute(
                """INSERT INTO audit_calibrations VALUES (%s, 'D1_llm_judge', '1', 'accuracy', 120, 14, 12, 0.71,
                           0.58, 0.82, true, false)""",
                (SPEC,),
            )
        released = job.execute_in_process(instance=instance)
        assert released.success and ran == [True]

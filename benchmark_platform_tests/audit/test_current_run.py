"""Issue 40 item 2: reverting an input makes the earlier audit run (and anchor import) current again.

The audit keys its runs by the inputs' digest and reuses a run when the inputs match one seen before; every reader
(selection, the review queue, the release checks and tables, the re-audit sensor) must then see that run, not the
latest id. Here the input changed is one agent's version (part of the digest), then changed back."""

from __future__ import annotations

import asyncio
import dataclasses

from benchmark_platform.anchors import load_anchor_set
from benchmark_platform.anchors.persist import latest_import_versions, record_import
from benchmark_platform.audit import agents as agents_module
from benchmark_platform.audit import findings
from benchmark_platform.audit.persist import current_audit_run, load_previous
from benchmark_platform.audit.run import audit_discipline, pending_audit
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.selection.persist import audited_item_candidates
from benchmark_platform.spec import load_spec
from benchmark_platform_tests.audit.corpus import audit_spec, seed_corpus

EMBEDDER = StaticEmbedder()


def _readers(db, spec_name: str) -> dict[str, object]:
    """The audit run each reader takes as the discipline's current one."""
    return {
        "audit": current_audit_run(db, spec_name, "regions"),
        "carry_over": load_previous(db, spec_name, "regions")[0],
        "selection": audited_item_candidates(db, spec_name, "regions")[1],
        "release_checks": db.scalar(  # the view released_items / release_candidates reads
            "SELECT audit_run_id FROM current_audit_runs WHERE spec = %s AND discipline = 'regions'", (spec_name,)
        ),
    }


def test_reverted_input_makes_the_earlier_audit_run_current_for_every_reader(db) -> None:
    spec = audit_spec("audit_revert")
    seed_corpus(db, spec.name, ("regions",))
    first = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    assert set(_readers(db, spec.name).values()) == {first.audit_run_id}

    # the input changes (A1's version is part of the digest): a new run, current
    v2 = dataclasses.replace(agents_module.A1_LEXICAL_HYGIENE, version="2")
    changed = tuple(v2 if a.name == v2.name else a for a in findings.AGENTS)
    second = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER, agents=changed))
    assert second.new_run and set(_readers(db, spec.name).values()) == {second.audit_run_id}
    # the current inputs (default agents) are not what the current run audited: the re-audit sensor sees it
    assert pending_audit(db, spec, "regions") is not None

    # changed back: the first run is reused (no new rows) and is the current one again, for every reader, although
    # the second run's id is the larger
    reverted = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    assert (reverted.audit_run_id, reverted.new_run) == (first.audit_run_id, False)
    assert set(_readers(db, spec.name).values()) == {first.audit_run_id} and first.audit_run_id < second.audit_run_id
    assert pending_audit(db, spec, "regions") is None


def test_reimported_anchor_version_is_current_again(db, tmp_path) -> None:
    spec = load_spec("wine")
    name = "anchors_revert"
    original = load_anchor_set(spec.anchors_dir / "regions")
    folder = tmp_path / "regions"
    folder.mkdir()
    for path in (spec.anchors_dir / "regions").iterdir():
        if path.is_file():
            (folder / path.name).write_bytes(path.read_bytes())
    main = next(p for p in folder.iterdir() if p.name == "anchors.yaml")
    main.write_text(main.read_text() + "\n# an edit that changes the content hash\n")
    edited = load_anchor_set(folder)
    assert edited.version != original.version

    first_id, _ = record_import(db, name, original)
    second_id, _ = record_import(db, name, edited)
    assert latest_import_versions(db, name) == {"regions": edited.version}
    again_id, new = record_import(db, name, original)
    assert (again_id, new) == (first_id, False) and second_id > first_id
    assert latest_import_versions(db, name) == {"regions": original.version}


def test_an_earlier_run_that_lost_rows_is_not_reused(db) -> None:
    """Issue 40 item 2, the fact-source case the faults bench found: a build of other inputs replaces the items, and
    findings and policy rows go with their items (ON DELETE CASCADE). Changed back, the items return with the same
    ids and the same digest, but the earlier run no longer judges them: it must be stored again, not reused."""
    spec = audit_spec("audit_cascade")
    seed_corpus(db, spec.name, ("regions",))
    first = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    lost = db.scalar("SELECT min(item_id) FROM audit_findings WHERE audit_run_id = %s", (first.audit_run_id,))
    with db.transaction() as conn, conn.cursor() as cur:  # what the cascade of that item's deletion did to the run
        cur.execute("DELETE FROM audit_findings WHERE audit_run_id = %s AND item_id = %s", (first.audit_run_id, lost))
    again = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    assert again.new_run and again.audit_run_id != first.audit_run_id
    assert set(_readers(db, spec.name).values()) == {again.audit_run_id}
    judged = db.scalar(
        "SELECT count(*) FROM audit_findings WHERE audit_run_id = %s AND item_id = %s", (again.audit_run_id, lost)
    )
    assert judged > 0
    assert not db.scalar("SELECT count(*) FROM audit_runs WHERE audit_run_id = %s", (first.audit_run_id,))
    # and an intact run is still reused
    third = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    assert (third.audit_run_id, third.new_run) == (again.audit_run_id, False)

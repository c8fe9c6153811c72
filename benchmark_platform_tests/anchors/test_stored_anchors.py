"""Data flows forward (issue 37): the anchors stage parses a discipline's files once and the stages after it read the
stored import, which must be the very set the files parse to (order, floats, labels), or a release would change."""

from __future__ import annotations

import shutil

import pytest

from benchmark_platform.anchors import (
    StaleAnchorImportError,
    current_anchors,
    has_anchor_files,
    import_anchors,
    load_anchor_set,
)
from benchmark_platform.spec import load_spec
from benchmark_platform.store import Database


def _forget_documents(db: Database) -> None:
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("UPDATE anchor_imports SET anchor_set = NULL")


@pytest.mark.slow  # over 3 s with its setup: the full suite only
@pytest.mark.parametrize("name", ["wine", "mmlu_pro", "kina_mmlu_pro"])
def test_the_stored_import_reads_back_as_the_parsed_files(migrated_database, name):
    db = Database(migrated_database("bp_stored_anchors"))
    spec = load_spec(name)
    disciplines = [d for d in spec.discipline_keys if has_anchor_files(spec.anchors_dir / d)]
    assert disciplines
    for discipline in disciplines:
        stored = import_anchors(db, spec, discipline)
        read = current_anchors(db, spec.name, discipline)
        assert read is not None and read.import_id == stored.import_id
        assert read.anchor_set == load_anchor_set(spec.anchors_dir / discipline)
        # bit-for-bit floats too (== on floats already is, but the weights' repr is what a release would carry)
        assert [repr(a.weight) for a in read.anchor_set.anchor_items] == [
            repr(a.weight) for a in load_anchor_set(spec.anchors_dir / discipline).anchor_items
        ]


def test_gone_files_leave_no_current_import_and_an_old_import_is_named(migrated_database, tmp_path):
    db = Database(migrated_database("bp_stored_anchors_gone"))
    spec = load_spec("wine")
    discipline = spec.discipline_keys[0]
    first = import_anchors(db, spec, discipline)
    assert first.new and current_anchors(db, spec.name, discipline) is not None

    copy = tmp_path / "wine"
    shutil.copytree(spec.anchors_dir, copy / "anchors")
    shutil.rmtree(copy / "anchors" / discipline)
    bare = spec.model_copy(update={"directory": copy})
    assert import_anchors(db, bare, discipline).anchor_set is None
    assert current_anchors(db, spec.name, discipline) is None
    assert db.scalar("SELECT count(*) FROM anchor_imports WHERE spec = 'wine'") == 1  # imports are kept

    # an import stored before sql/0420 (no document): readers say which asset to run; the same files fill it in
    _forget_documents(db)
    again = import_anchors(db, spec, discipline)
    assert not again.new and again.import_id == first.import_id
    assert current_anchors(db, spec.name, discipline) is not None
    _forget_documents(db)
    with pytest.raises(StaleAnchorImportError, match=rf"anchors\[{discipline}\].*materialise the anchors asset"):
        current_anchors(db, spec.name, discipline)

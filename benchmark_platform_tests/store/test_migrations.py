from pathlib import Path

import pytest

from benchmark_platform.paths import SQL_DIR
from benchmark_platform.store import Database, MigrationError, migrate


def test_migrations_apply_once_then_are_a_no_op(fresh_database):
    db = Database(fresh_database())
    first = migrate(db)
    assert first == sorted(p.name for p in SQL_DIR.glob("*.sql"))
    tables = db.scalar("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")
    assert migrate(db) == []
    assert db.scalar("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'") == tables
    assert db.scalar("SELECT count(*) FROM schema_migrations") == len(first)


def test_a_changed_applied_migration_is_an_error_naming_the_file(fresh_database, tmp_path: Path):
    db = Database(fresh_database())
    (tmp_path / "0001_first.sql").write_text("CREATE TABLE t (x int);")
    assert migrate(db, tmp_path) == ["0001_first.sql"]
    (tmp_path / "0001_first.sql").write_text("CREATE TABLE t (x int, y int);")
    with pytest.raises(MigrationError, match="0001_first.sql"):
        migrate(db, tmp_path)


def test_a_failing_migration_applies_nothing_and_names_the_file(fresh_database, tmp_path: Path):
    db = Database(fresh_database())
    (tmp_path / "0001_ok.sql").write_text("CREATE TABLE ok (x int);")
    (tmp_path / "0002_broken.sql").write_text("CREATE TABLE broken (x nonsense_type);")
    with pytest.raises(MigrationError, match="0002_broken.sql"):
        migrate(db, tmp_path)
    # one transaction: the good file before it was rolled back too
    assert db.scalar("SELECT to_regclass('ok') IS NULL")
    assert db.scalar("SELECT to_regclass('schema_migrations') IS NULL")


def test_badly_named_migration_files_are_refused(tmp_path: Path, fresh_database):
    (tmp_path / "1_first.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationError, match="1_first.sql"):
        migrate(Database(fresh_database()), tmp_path)

"""One error boundary in the CLI (issue 22, 6): expected failures are one `error:` line (exit 2) wherever they are
raised, even wrapped by Dagster; --debug shows the traceback; a bug keeps its traceback."""

from __future__ import annotations

import subprocess
import sys

import dagster as dg
import psycopg2
import pytest
from dagster_postgres.utils import DagsterPostgresException

from benchmark_platform.cli.main import expected_error, main
from benchmark_platform.ingest.snapshot import SnapshotError
from benchmark_platform.spec import SpecError, load_spec

pytestmark = pytest.mark.slow  # runs the CLI in subprocesses against a real database


def _raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:
        return caught


def test_a_failure_inside_a_dagster_step_is_unwrapped_to_its_message():
    @dg.asset
    def corrupted() -> None:
        raise SnapshotError("snapshot/bodies/ab12.gz: content hash differs from the exchange; re-record the source")

    with pytest.raises(Exception) as info:
        dg.materialize([corrupted], raise_on_error=True)
    assert expected_error(info.value) == (
        "snapshot/bodies/ab12.gz: content hash differs from the exchange; re-record the source"
    )


def test_a_lost_database_is_named_with_what_to_do():
    try:
        try:
            psycopg2.connect("postgresql://nobody@127.0.0.1:1/none", connect_timeout=2)
        except psycopg2.OperationalError as lost:
            raise DagsterPostgresException("too many retries for DB connection") from lost
    except DagsterPostgresException as exc:
        message = expected_error(exc)
    assert message.startswith("lost the database (") and "benchmark-platform db status" in message
    wrapped = _raised(ValueError("half a row"))
    wrapped.__context__ = _raised(psycopg2.OperationalError("server closed the connection unexpectedly"))
    assert expected_error(wrapped).startswith("lost the database (server closed the connection unexpectedly)")


def test_a_bug_is_not_an_expected_error():
    assert expected_error(_raised(KeyError("files"))) is None
    assert expected_error(_raised(AttributeError("x"))) is None


def test_a_multi_line_message_is_one_line():
    assert expected_error(_raised(SpecError("a.yaml: bad\n  in line 3\n"))) == "a.yaml: bad in line 3"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmark_platform.cli.main", *args], capture_output=True, text=True, check=False
    )


def test_debug_shows_the_traceback_and_without_it_one_line(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_bytes("name: caf\xe9\n".encode("latin-1"))
    plain = _cli("run", "--spec", str(spec))
    assert plain.returncode == 2
    assert plain.stderr.strip().splitlines() == [
        f"error: {spec}: not UTF-8 (byte 9: invalid continuation byte); save the file as UTF-8"
    ]
    debug = _cli("run", "--spec", str(spec), "--debug")
    assert debug.returncode != 0 and "Traceback (most recent call last)" in debug.stderr and "SpecError" in debug.stderr


def test_includes_stay_in_the_spec_folder_unless_allowed(tmp_path, capsys):
    outside = tmp_path / "shared" / "taxonomy.yaml"
    outside.parent.mkdir()
    outside.write_text("- {name: Wine, children: [{name: Regions, key: regions}]}\n")
    folder = tmp_path / "spec"
    folder.mkdir()
    (folder / "spec.yaml").write_text("name: x\ntaxonomy: !include ../shared/taxonomy.yaml\n")
    with pytest.raises(SpecError, match="outside the spec's folder"):
        load_spec(folder / "spec.yaml")
    with pytest.raises(SpecError, match="invalid spec"):  # allowed: read, then validated like any spec
        load_spec(folder / "spec.yaml", include_roots=[outside.parent])
    (folder / "spec.yaml").write_text("name: x\ntaxonomy: !include /etc/hostname\n")
    assert main(["run", "--spec", str(folder / "spec.yaml")]) == 2
    assert "reads /etc/hostname, outside the spec's folder" in capsys.readouterr().err

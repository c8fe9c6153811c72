"""A killed run never blocks the next one (issue 22, 1): real `benchmark-platform run` subprocesses killed with
SIGKILL inside a step that holds the `database` pool slot, then recovered by `runs recover` and by the next run."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.test_utils import create_run_for_test

from benchmark_platform.bench._faultkit import (
    cli,
    cli_env,
    run_status,
    slots_held,
    trimmed_spec,
    wait_inside_step,
    write_spec,
)
from benchmark_platform.defs.automation.recovery import HOST_TAG, recover_runs, worker_status
from benchmark_platform.processes import process_alive

pytestmark = pytest.mark.slow  # kills build processes and waits for their recovery

BLOCKED = b"blocked by limit for pool"


@pytest.fixture(scope="module")
def spec_file(tmp_path_factory) -> Path:
    return write_spec(trimmed_spec(), tmp_path_factory.mktemp("spec"))


def finish(process: subprocess.Popen[bytes], out: Path) -> int:
    """The exit code, or a failure as soon as the run reports it waits on a pool slot held by a dead run."""
    while process.poll() is None:
        if BLOCKED in out.with_suffix(".stderr").read_bytes():
            process.kill()
            process.wait()
            pytest.fail(f"the run is blocked on a pool slot: {out.with_suffix('.stderr')}")
        time.sleep(0.2)
    return process.returncode


def kill_inside(step: str, spec_file: Path, db_url: str, out: Path) -> str:
    process = cli(["run", "--spec", str(spec_file)], cli_env(db_url), out)
    run_id = wait_inside_step(db_url, step, process)
    assert run_id, f"the run ended before {step}: {out.with_suffix('.stderr').read_text()[-2000:]}"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    # the failure of the issue: the dead run stays STARTED and keeps its `database` pool slot
    assert run_status(db_url, run_id) == "STARTED"
    return run_id


def test_a_run_killed_mid_ingest_is_recovered_and_the_rerun_completes(spec_file, fresh_database, tmp_path):
    db_url = fresh_database()
    killed = kill_inside("wine__source_documents", spec_file, db_url, tmp_path / "killed")
    assert slots_held(db_url, killed) == 1, "the killed ingest step holds its `database` pool slot"

    recover = cli(["runs", "recover"], cli_env(db_url), tmp_path / "recover")
    assert recover.wait() == 0, (tmp_path / "recover.stderr").read_text()
    said = (tmp_path / "recover.stdout").read_text()
    assert f"run {killed}" in said and "marked failed by crashed-run recovery" in said and "is gone" in said
    assert run_status(db_url, killed) == "FAILURE" and slots_held(db_url, killed) == 0

    rerun = cli(["run", "--spec", str(spec_file)], cli_env(db_url), tmp_path / "rerun")
    assert finish(rerun, tmp_path / "rerun") == 0, (tmp_path / "rerun.stderr").read_text()[-3000:]
    assert f"release: {tmp_path / 'releases' / 'wine'}" in (tmp_path / "rerun.stdout").read_text()  # not the user's


def test_the_next_run_recovers_a_run_killed_in_the_release_by_itself(spec_file, fresh_database, tmp_path):
    db_url = fresh_database()
    killed = kill_inside("wine__release", spec_file, db_url, tmp_path / "killed")
    rerun = cli(["run", "--spec", str(spec_file)], cli_env(db_url), tmp_path / "rerun")
    assert finish(rerun, tmp_path / "rerun") == 0, (tmp_path / "rerun.stderr").read_text()[-3000:]
    said = (tmp_path / "rerun.stdout").read_text()
    assert f"run {killed}" in said and "marked failed by crashed-run recovery" in said
    assert run_status(db_url, killed) == "FAILURE" and slots_held(db_url, killed) == 0


def test_recovery_leaves_live_runs_and_other_hosts_alone(tmp_path):
    """A run whose process lives is RUNNING; one tagged with another host is UNKNOWN; neither is failed."""
    with dg.instance_for_test() as instance:

        @dg.asset
        def probe(context) -> None:
            run = context.instance.get_run_by_id(context.run.run_id)
            status, why = worker_status(context.instance, run)
            assert status.value == "RUNNING", why
            assert recover_runs(context.instance) == []  # its own, live run is not touched

        assert dg.materialize([probe], instance=instance).success
        other = create_run_for_test(
            instance, job_name="elsewhere_job", status=dg.DagsterRunStatus.STARTED, tags={HOST_TAG: "elsewhere"}
        )
        event = dg.DagsterEvent(dg.DagsterEventType.RUN_START.value, job_name=other.job_name, pid=2**22 + 12345)
        instance.report_dagster_event(event, run_id=other.run_id)
        assert worker_status(instance, instance.get_run_by_id(other.run_id))[0].value == "UNKNOWN"
        assert recover_runs(instance) == []


def test_a_reused_pid_is_not_the_process_that_started_the_run():
    started = time.time()
    assert process_alive(os.getpid(), started)
    assert not process_alive(os.getpid(), started - 3600), "this process started after that moment"
    assert not process_alive(2**22 + 12345, started)


def test_a_database_lost_mid_run_is_one_error_line_and_the_next_run_recovers(spec_file, tmp_path):
    """A throwaway PostgreSQL cluster (never the machine's) stopped while the run is inside a step: the CLI says so
    in one line; once the server is back, the next run fails the interrupted one, frees its slots and completes."""
    from benchmark_platform.store.embedded import EmbeddedPostgres

    cluster = EmbeddedPostgres(tmp_path / "pg")
    try:
        url = cluster.up().url()
        out = tmp_path / "lost"
        process = cli(["run", "--spec", str(spec_file)], cli_env(url), out)
        run_id = wait_inside_step(url, "wine__facts", process)
        assert run_id, out.with_suffix(".stderr").read_text()[-2000:]
        cluster.down()
        assert process.wait() == 2
        err = out.with_suffix(".stderr").read_text()
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and errors[0].startswith("error: lost the database"), err[-3000:]
        assert "Traceback (most recent call last)" not in err and "Stack Trace:" not in err, err[-3000:]

        url = cluster.up().url()  # back (on a new port)
        assert run_status(url, run_id) == "STARTED", "the lost run could not record its end"
        rerun = cli(["run", "--spec", str(spec_file)], cli_env(url), tmp_path / "rerun")
        assert finish(rerun, tmp_path / "rerun") == 0, (tmp_path / "rerun.stderr").read_text()[-3000:]
        assert f"run {run_id}" in (tmp_path / "rerun.stdout").read_text()
        assert run_status(url, run_id) == "FAILURE" and slots_held(url, run_id) == 0
    finally:
        cluster.down()


def test_the_daemons_run_monitoring_fails_a_run_whose_worker_is_gone(fresh_database, monkeypatch):
    """`make dev`: dagster.yaml's launcher answers run monitoring's health check, so the daemon fails a dead run
    (monitor_started_run is what the daemon calls every poll_interval_seconds)."""
    import logging

    from dagster._daemon.monitoring.run_monitoring import monitor_started_run

    from benchmark_platform.defs.automation.recovery import LocalRunLauncher
    from benchmark_platform.paths import PROJECT_ROOT
    from benchmark_platform.store.settings import DAGSTER_DATABASE_URL_ENV, dagster_database_url

    monkeypatch.setenv("BENCHMARK_PLATFORM_DATABASE_URL", fresh_database())
    monkeypatch.setenv(DAGSTER_DATABASE_URL_ENV, dagster_database_url())
    gone = subprocess.Popen(["true"])
    gone.wait()
    with dg.DagsterInstance.from_config(str(PROJECT_ROOT)) as instance:
        assert isinstance(instance.run_launcher, LocalRunLauncher) and instance.run_monitoring_enabled
        assert instance.run_monitoring_max_resume_run_attempts == 0
        run = create_run_for_test(instance, job_name="dead_job", status=dg.DagsterRunStatus.STARTED)
        event = dg.DagsterEvent(dg.DagsterEventType.RUN_START.value, job_name=run.job_name, pid=gone.pid)
        instance.report_dagster_event(event, run_id=run.run_id)
        record = instance.get_run_records(dg.RunsFilter(run_ids=[run.run_id]))[0]
        monitor_started_run(instance, None, record, logging.getLogger("test"))
        assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE

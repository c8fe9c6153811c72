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
    assert "release:" in (tmp_path / "rerun.stdout").read_text()


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
        def probe(context) -> None:  # noqa: ANN001 - dagster reads a string annotation as a wrong type
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

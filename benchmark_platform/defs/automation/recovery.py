"""Crashed-run recovery: a run whose process is gone is failed with a reason and its concurrency slots are freed,
so a killed run never blocks the next one (a dead run keeps its `database` pool slot for ever otherwise).

Three callers share `worker_status`: `benchmark-platform run` before it starts, `benchmark-platform runs recover`,
and, under `make dev`, the daemon's run monitoring through `LocalRunLauncher.check_run_worker_health` (dagster.yaml).
A run's process is the pid its RUN_START event recorded (the CLI's in-process run, or a launched run worker); a run
tagged with another host is left alone (its process cannot be seen from here).
"""

from __future__ import annotations

from dataclasses import dataclass

import dagster as dg
from dagster._core.launcher import CheckRunHealthResult, DefaultRunLauncher, WorkerStatus

from benchmark_platform.processes import hostname, process_alive

HOST_TAG = "benchmark_platform/host"
ACTIVE_STATUSES = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]


def run_tags() -> dict[str, str]:
    """Tags a run started from this process carries, so recovery on another machine leaves it alone."""
    return {HOST_TAG: hostname()}


def worker_status(instance: dg.DagsterInstance, run: dg.DagsterRun) -> tuple[WorkerStatus, str]:
    """(RUNNING | FAILED | UNKNOWN, why) for a run that is not finished."""
    host = run.tags.get(HOST_TAG, hostname())
    if host != hostname():
        return WorkerStatus.UNKNOWN, f"its process runs on host {host}, not this one"
    records = instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.RUN_START, limit=1).records
    event = records[0].event_log_entry if records else None
    if event is None or event.dagster_event is None or event.dagster_event.pid is None:
        return WorkerStatus.UNKNOWN, "it has not recorded its process yet"
    pid = event.dagster_event.pid
    if process_alive(pid, event.timestamp):
        return WorkerStatus.RUNNING, f"process {pid} is alive"
    return WorkerStatus.FAILED, f"its process {pid} on {host} is gone (killed or crashed)"


@dataclass(frozen=True)
class Recovered:
    run_id: str
    job_name: str
    status: str  # the status it was left in
    reason: str  # why it was failed, or "finished" for a finished run that still held slots


def recover_runs(instance: dg.DagsterInstance) -> list[Recovered]:
    """Fail every unfinished run of this host whose process is gone, and free the concurrency slots of every run
    that is no longer running. Idempotent; a live run is never touched."""
    recovered = []
    for run in instance.get_runs(dg.RunsFilter(statuses=ACTIVE_STATUSES)):
        status, why = worker_status(instance, run)
        if status != WorkerStatus.FAILED:
            continue
        reason = f"marked failed by crashed-run recovery: {why}"
        instance.report_run_failed(run, reason)
        recovered.append(Recovered(run.run_id, run.job_name, run.status.value, reason))
    storage = instance.event_log_storage
    holders = storage.get_concurrency_run_ids() if storage.supports_global_concurrency_limits else set()
    if holders:
        active = {r.run_id for r in instance.get_runs(dg.RunsFilter(run_ids=list(holders), statuses=ACTIVE_STATUSES))}
        failed_now = {r.run_id for r in recovered}
        for run_id in sorted(holders - active):
            storage.free_concurrency_slots_for_run(run_id)
            if run_id not in failed_now:
                gone = instance.get_run_by_id(run_id)
                recovered.append(
                    Recovered(
                        run_id, gone.job_name if gone else "?", gone.status.value if gone else "deleted", "finished"
                    )
                )
    return recovered


class LocalRunLauncher(DefaultRunLauncher):
    """Dagster's default launcher plus a worker health check, so the daemon's run monitoring fails a run whose
    process was killed (the default launcher cannot tell) and then frees its slots."""

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: dg.DagsterRun) -> CheckRunHealthResult:
        status, why = worker_status(self._instance, run)
        return CheckRunHealthResult(status, why)

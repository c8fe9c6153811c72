"""Local scale-out for tests and benches: a Dagster instance on PostgreSQL in a DAGSTER_HOME, and celery workers.

Production runs its workers the same way (docs/scale-out.md): `celery -A dagster_celery.app worker -Q dagster`
with the code on PYTHONPATH, the same DAGSTER_HOME, and the broker given in a `dagster_celery_config` module.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

from benchmark_platform.paths import PROJECT_ROOT

CELERY_QUEUE = "dagster"  # the queue dagster-celery routes steps to


def write_dagster_home(home: Path, storage_url: str) -> Path:
    """A DAGSTER_HOME whose run, event-log and schedule storage live in `storage_url` (PostgreSQL)."""
    home.mkdir(parents=True, exist_ok=True)
    config = {
        "storage": {"postgres": {"postgres_url": storage_url}},
        "run_coordinator": {"module": "dagster._core.run_coordinator", "class": "DefaultRunCoordinator"},
        "telemetry": {"enabled": False},
    }
    (home / "dagster.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return home


def write_celery_config(directory: Path, broker: str, preload: tuple[str, ...] = ()) -> Path:
    """The `dagster_celery_config` module workers import: broker, result backend, one unacked task per worker, and
    the code modules to import before the pool forks (the first step then need not import the job's code)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "dagster_celery_config.py").write_text(
        f"broker_url = {broker!r}\nresult_backend = {broker!r}\nimports = {list(preload)!r}\n"
        "task_acks_late = True\nworker_prefetch_multiplier = 1\n",
        encoding="utf-8",
    )
    return directory


@dataclass
class Workers:
    names: list[str]
    processes: list[subprocess.Popen[bytes]]
    log_dir: Path

    def log(self, name: str) -> Path:
        return self.log_dir / f"{name.split('@')[0]}.log"

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        """Until every worker consumes the queue (so each can take a task); a worker that exits is an error."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self.processes):
                raise RuntimeError(f"a celery worker exited at start; see the logs in {self.log_dir}")
            if all(" ready." in self.log(name).read_text(errors="replace") for name in self.names):
                return
            time.sleep(0.2)
        raise TimeoutError(f"celery workers not ready after {timeout_s} s; see the logs in {self.log_dir}")


@contextmanager
def celery_workers(
    count: int, broker: str, dagster_home: Path, env: dict[str, str], log_dir: Path, preload: tuple[str, ...] = ()
) -> Iterator[Workers]:
    """Start `count` workers (`w1@bench` ...) on the dagster queue; stops them on exit. They start in the background:
    call `wait_ready()` before work whose spread over the workers matters."""
    config_dir = write_celery_config(log_dir / "celery_config", broker, preload)
    worker_env = {
        **os.environ,
        **env,
        "DAGSTER_HOME": str(dagster_home),
        "PYTHONPATH": os.pathsep.join([str(config_dir), str(PROJECT_ROOT)]),
    }
    workers = Workers([f"w{n}@bench" for n in range(1, count + 1)], [], log_dir)
    try:
        for name in workers.names:
            log = workers.log(name).open("w")
            workers.processes.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "celery",
                        "-A",
                        "dagster_celery.app",
                        "worker",
                        "-Q",
                        CELERY_QUEUE,
                        "--prefetch-multiplier=1",
                        "--concurrency=1",
                        "-n",
                        name,
                        "--without-gossip",
                        "--without-mingle",
                        "--loglevel=INFO",
                    ],
                    env=worker_env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=log_dir,
                )
            )
        yield workers
    finally:
        for process in workers.processes:
            process.terminate()
        for process in workers.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

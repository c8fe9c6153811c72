"""What the daemon end-to-end tests and the automation bench share: a code location for a spec file, a real
`dagster-daemon` and `dagster-webserver` process tree on the test's Postgres, run counts through GraphQL, and a new
recording of a document in a spec copy's replay store."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from benchmark_platform.bench._faultkit import _poll, cli_env
from benchmark_platform.ingest.snapshot import Exchange, SnapshotStore, sha256_hex
from benchmark_platform.paths import PROJECT_ROOT
from benchmark_platform.store.settings import DAGSTER_DATABASE_URL_ENV

RUNS_QUERY = "{ runsOrError { ... on Runs { results { runId status tags { key value } } } } }"


def workspace(spec_file: Path, folder: Path, releases_dir: Path | None = None) -> Path:
    """A workspace with one code location, `location`: the spec file's asset graph (releases written under
    `releases_dir` when given, else the project's releases/)."""
    module = folder / "location.py"
    text = (
        "from benchmark_platform.defs import build_definitions\n"
        "from benchmark_platform.spec import load_spec\n\n"
        f"defs = build_definitions(load_spec({str(spec_file)!r}))\n"
    )
    if releases_dir is not None:
        text += (
            "from dagster._record import replace\n\n"
            "from benchmark_platform.defs.release.assets import ReleaseDirectory\n\n"
            f"release_directory = ReleaseDirectory(root={str(releases_dir)!r})\n"
            "defs = replace(defs, resources={**(defs.resources or {}), 'release_directory': release_directory})\n"
        )
    module.write_text(text)
    path = folder / "workspace.yaml"
    path.write_text(f"load_from:\n  - python_file:\n      relative_path: {module}\n      attribute: defs\n")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Daemon:
    processes: list[subprocess.Popen[bytes]]
    port: int

    def graphql(self, query: str, variables: dict | None = None) -> dict:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/graphql",
            data=json.dumps({"query": query, "variables": variables or {}}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())["data"]

    def runs(self) -> list[dict]:
        """Every run the instance holds, through the webserver's GraphQL (as the UI sees them)."""
        return list(self.graphql(RUNS_QUERY)["runsOrError"]["results"])

    def wait_ready(self, timeout_s: float = 600) -> None:
        deadline = time.monotonic() + timeout_s  # only so a broken webserver cannot hang the caller
        while time.monotonic() < deadline:
            try:
                self.runs()
                return
            except OSError:
                time.sleep(1)
        raise RuntimeError(f"dagster-webserver did not answer on port {self.port}")


@contextmanager
def daemon_tree(workspace_file: Path, db_url: str, logs: Path) -> Iterator[Daemon]:
    """`dagster-daemon run` and `dagster-webserver` on `workspace_file`, Dagster's storage in `db_url`'s database
    (dagster.yaml of the project); each in its own session with SIGINT restored, stopped with SIGINT then killed."""
    env = cli_env(db_url)
    env[DAGSTER_DATABASE_URL_ENV] = db_url.replace("postgresql://", "postgresql+psycopg2://", 1)
    env["DAGSTER_HOME"] = str(PROJECT_ROOT)
    env["DAGSTER_DISABLE_TELEMETRY"] = "1"
    port = free_port()
    bin_dir = Path(sys.executable).parent
    commands = {
        "daemon": [str(bin_dir / "dagster-daemon"), "run", "-w", str(workspace_file)],
        "webserver": [
            str(bin_dir / "dagster-webserver"),
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-w",
            str(workspace_file),
        ],
    }
    processes = []
    try:
        for name, command in commands.items():
            processes.append(
                subprocess.Popen(
                    command,
                    env=env,
                    cwd=logs,
                    stdout=(logs / f"{name}.stdout").open("wb"),
                    stderr=(logs / f"{name}.stderr").open("wb"),
                    start_new_session=True,
                    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                )
            )
        yield Daemon(processes, port)
    finally:
        for process in processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGINT)
        for process in processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass
            # what is left of the tree (a code server restarted under load outlived its parent once): killed, as
            # it is in the tree's own process group, nothing else is
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()


def record_new_version(store_dir: Path, url: str, append: dict[str, str]) -> None:
    """A newer recording of `url` in the replay store whose GeoJSON properties gain the `append` values (another
    '|'-separated entry, as a live re-fetch of an amended upstream file would record); the older recording stays,
    as the store keeps history."""
    store = SnapshotStore(store_dir)
    resolved = store.resolve("GET", url)
    assert resolved is not None, f"{url} is not recorded in {store_dir}"
    old = resolved[0]
    data = json.loads(store.body(old))
    for feature in data.get("features", []):
        properties = feature["properties"]
        for name, value in append.items():
            properties[name] = f"{properties[name]}|{value}" if properties.get(name) else value
    body = json.dumps(data).encode()
    now = datetime.now(UTC)
    exchange = Exchange.model_validate(
        {
            **old.model_dump(mode="json"),
            "body_sha256": sha256_hex(body),
            "body_size": len(body),
            "recorded_at": now.isoformat().replace("+00:00", "Z"),
        }
    )
    store.put(exchange, body)


def ticks(db_url: str, sensor: str) -> int:
    """Evaluations (ticks) of a sensor the daemon stored so far."""
    rows = _poll(db_url, "SELECT count(*) FROM job_ticks WHERE tick_body LIKE %s", (f'%"job_name": "{sensor}"%',))
    return int(rows[0][0]) if rows else 0


def ticked(db_url: str, sensor: str) -> bool:
    """Whether the sensor's first tick finished (its cursor then records the state as deployed)."""
    sql = "SELECT 1 FROM job_ticks WHERE tick_body LIKE %s AND status <> 'STARTED' LIMIT 1"
    return bool(_poll(db_url, sql, (f'%"job_name": "{sensor}"%',)))


def run_partition(tags: dict[str, str]) -> str:
    """The partition a run materialises (`dagster/partition`), or its range `start..end` (a single-run asset's run,
    e.g. from a backfill: Dagster then tags only the range, `start` alone when it holds one key); "-" for none."""
    start, end = tags.get("dagster/asset_partition_range_start"), tags.get("dagster/asset_partition_range_end")
    if "dagster/partition" in tags:
        return tags["dagster/partition"]
    if start and end:
        return start if start == end else f"{start}..{end}"
    return "-"


def runs_since(db_url: str, since: datetime) -> list[dict[str, str]]:
    """Runs created after `since`: their tags, plus run_id, status and partition (run_partition)."""
    sql = """SELECT r.run_id, r.status, coalesce(json_object_agg(t.key, t.value) FILTER (WHERE t.key IS NOT NULL), '{}')
             FROM runs r LEFT JOIN run_tags t ON t.run_id = r.run_id
             WHERE r.create_timestamp > %s GROUP BY r.run_id, r.status"""
    return [
        {**tags, "run_id": run_id, "status": status, "partition": run_partition(tags)}
        for run_id, status, tags in _poll(db_url, sql, (since.replace(tzinfo=None),))
    ]


def wait_for(condition: Callable[[], bool], polls: int = 200, every_s: float = 2.0) -> bool:
    """Poll `condition` up to `polls` times; the bound only keeps a broken daemon from hanging the caller."""
    for _ in range(polls):
        if condition():
            return True
        time.sleep(every_s)
    return False

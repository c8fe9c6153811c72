"""Issue 41 through the Dagster UI: after one anchor file changes, the webserver (real HTTP, the GraphQL the UI sends)
marks the same stale set as `benchmark-platform run --plan`; materialising what it calls unsynced, round after round
as a user clicking "Materialize unsynced" would, leaves a graph the CLI finds up to date and a release byte-identical
to a `run --force` build (bar lineage.json, which names the runs).

The trimmed wine spec (one source, two disciplines) is built by `benchmark-platform run`; `dagster-webserver` and
`dagster-daemon` (which dequeues the launched runs) share its Postgres database. Sensors are off, so every run in the
instance comes from the test's launches. Waits poll; their bound is a number of polls only."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from benchmark_platform.bench._daemonkit import Daemon, daemon_tree, wait_for, workspace
from benchmark_platform.bench._faultkit import cli, cli_env, trimmed_spec, write_spec
from benchmark_platform.bench.rebuild import release_differences

pytestmark = pytest.mark.slow  # a whole (trimmed) build three times and a webserver + daemon

CHANGED, KEPT = "regions", "grape_varieties"
UNSYNCED = {"STALE", "MISSING"}  # what the UI's "Materialize unsynced" dialog lists (stale or never materialised)

NODES = """{ assetNodes { assetKey { path } isMaterializable isObservable isPartitioned partitionKeys
                          staleStatus } }"""
BY_PARTITION = """query ($keys: [AssetKeyInput!]!) {
  assetNodes(assetKeys: $keys) { assetKey { path } staleStatusByPartition } }"""
LAUNCH = """mutation ($params: ExecutionParams!) {
  launchPipelineExecution(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on InvalidSubsetError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  } }"""
LOCATION = "{ repositoriesOrError { ... on RepositoryConnection { nodes { name location { name } } } } }"
RUN = """query ($id: ID!) { runOrError(runId: $id) { ... on Run { status } } }"""
DONE = {"SUCCESS", "FAILURE", "CANCELED"}


class Ui:
    """What the asset graph page asks and launches, over the webserver's HTTP GraphQL endpoint."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        [repository] = daemon.graphql(LOCATION)["repositoriesOrError"]["nodes"]
        self.location, self.repository = repository["location"]["name"], repository["name"]

    def unsynced(self) -> set[tuple[str, str | None]]:
        """(asset name, partition) of every materialisable asset partition the UI marks stale or missing."""
        nodes = [n for n in self.daemon.graphql(NODES)["assetNodes"] if n["isMaterializable"]]
        out = {
            (n["assetKey"]["path"][-1], None) for n in nodes if not n["isPartitioned"] and n["staleStatus"] in UNSYNCED
        }
        partitioned = [n for n in nodes if n["isPartitioned"]]
        keys = [{"path": n["assetKey"]["path"]} for n in partitioned]
        statuses = {
            tuple(n["assetKey"]["path"]): n["staleStatusByPartition"]
            for n in self.daemon.graphql(BY_PARTITION, {"keys": keys})["assetNodes"]
        }
        for n in partitioned:
            for partition, status in zip(n["partitionKeys"], statuses[tuple(n["assetKey"]["path"])], strict=True):
                if status in UNSYNCED:
                    out.add((n["assetKey"]["path"][-1], partition))
        return out

    def launch(self, prefix: list[str], names: list[str], partition: str | None) -> str:
        """One run of the asset job over `names` (one partition, or unpartitioned), as the launch dialog sends it."""
        params = {
            "selector": {
                "repositoryLocationName": self.location,
                "repositoryName": self.repository,
                "pipelineName": "__ASSET_JOB",
                "assetSelection": [{"path": [*prefix, name]} for name in names],
            },
            "mode": "default",
            "runConfigData": {},
            "executionMetadata": {"tags": [{"key": "dagster/partition", "value": partition}] if partition else []},
        }
        result = self.daemon.graphql(LAUNCH, {"params": params})["launchPipelineExecution"]
        assert result["__typename"] == "LaunchRunSuccess", result
        return str(result["run"]["runId"])

    def status(self, run_id: str) -> str:
        return str(self.daemon.graphql(RUN, {"id": run_id})["runOrError"]["status"])

    def run_all(self, prefix: list[str], unsynced: set[tuple[str, str | None]]) -> None:
        """Materialise `unsynced`: one run per partition, and wait until every run has ended, successfully."""
        by_partition: dict[str | None, list[str]] = defaultdict(list)
        for name, partition in sorted(unsynced, key=lambda x: (x[1] or "", x[0])):
            by_partition[partition].append(name)
        runs = [self.launch(prefix, names, partition) for partition, names in by_partition.items()]
        assert wait_for(lambda: all(self.status(r) in DONE for r in runs), polls=2400, every_s=0.5), runs
        assert [self.status(r) for r in runs] == ["SUCCESS"] * len(runs), runs


def _planned(stdout: str) -> set[tuple[str, str | None]]:
    """`run --plan`'s lines `<prefix>/<asset>: p1, p2` as (asset, partition) pairs."""
    out: set[tuple[str, str | None]] = set()
    for line in stdout.splitlines():
        if line.startswith("==") or ": " not in line:
            continue
        asset, partitions = line.split(": ", 1)
        for p in partitions.split(", "):
            out.add((asset.split("/")[-1], None if p == "(unpartitioned)" else p))
    return out


def _cli(args: list[str], db_url: str, out: Path) -> str:
    out.parent.mkdir(parents=True, exist_ok=True)
    process = cli(args, cli_env(db_url), out)
    assert process.wait() == 0, out.with_suffix(".stderr").read_text()[-3000:]
    return out.with_suffix(".stdout").read_text()


def test_the_ui_marks_and_materialises_what_the_cli_does(fresh_database, tmp_path: Path) -> None:
    spec = trimmed_spec((CHANGED, KEPT))
    spec = spec.model_copy(update={"automation": spec.automation.model_copy(update={"sensors_running": False})})
    spec_file = write_spec(spec, tmp_path / "spec")
    db_url = fresh_database()
    _cli(["run", "--spec", str(spec_file)], db_url, tmp_path / "first" / "run")

    anchors = spec_file.parent / "anchors" / CHANGED / "anchors.yaml"
    anchors.write_text(anchors.read_text(encoding="utf-8") + "\n# one expert's note\n", encoding="utf-8")

    prefix = [spec.name]
    ui_releases = tmp_path / "ui" / "releases"
    with daemon_tree(workspace(spec_file, tmp_path, ui_releases), db_url, tmp_path) as daemon:
        daemon.wait_ready()
        ui = Ui(daemon)
        # "Observe sources" on the inputs group: the UI then compares against the files as they are now
        nodes = daemon.graphql(NODES)["assetNodes"]
        inputs = sorted(n["assetKey"]["path"][-1] for n in nodes if n["isObservable"])
        assert "anchor_files" in inputs, nodes  # the code location loaded
        for name in inputs:  # one run each: they are partitioned differently
            ui.run_all(prefix, {(name, None)})

        marked = ui.unsynced()
        planned = _planned(_cli(["run", "--plan", "--spec", str(spec_file)], db_url, tmp_path / "plan" / "run"))
        assert marked == planned == {("anchors", CHANGED)}

        rounds = []
        while unsynced := ui.unsynced():
            assert len(rounds) < 20, rounds  # the graph is 12 assets deep: more rounds is a loop
            assert all(p in (CHANGED, None) for _, p in unsynced), unsynced  # the kept discipline stays current
            rounds.append(sorted(unsynced, key=lambda x: (x[1] or "", x[0])))
            ui.run_all(prefix, unsynced)
    print(f"UI rounds: {len(rounds)}: {rounds}")
    assert rounds[0] == [("anchors", CHANGED)] and any(("release", None) in r for r in rounds), rounds

    # the CLI finds nothing to do on what the UI built, and a forced rebuild writes the same release
    after = _cli(["run", "--spec", str(spec_file)], db_url, tmp_path / "after" / "run")
    labels = [line.split("]")[0] for line in after.splitlines() if line.startswith("[") and "release" not in line]
    assert labels and all(line.endswith("up to date") for line in after.splitlines() if line.split("]")[0] in labels)
    _cli(["run", "--force", "--spec", str(spec_file)], db_url, tmp_path / "forced" / "run")
    release = Path(spec.name) / spec.release.version
    assert (ui_releases / release / "manifest.json").is_file()
    assert release_differences(ui_releases / release, tmp_path / "forced" / "releases" / release) == []

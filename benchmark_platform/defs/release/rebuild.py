"""Rebuild a kept release from what its manifest recorded and prove the files byte-identical.

The spec is the one stored in the release (`spec.json`), so an old version rebuilds even after the bundled spec moved
on. Every asset is re-materialised (sources replay from the bundled snapshot, LLM calls from the gateway's cache);
the new bundle goes to a temporary folder and its file hashes are compared with the kept manifest. The kept release
is never touched.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import ValidationError

from benchmark_platform.defs.release.assets import ReleaseDirectory
from benchmark_platform.llm.cache import cached_responses
from benchmark_platform.release.bundle import (
    compare_files,
    read_lineage,
    read_manifest,
    recorded_spec_sha256,
    verify_release,
)
from benchmark_platform.release.persist import record_release, spec_fingerprint
from benchmark_platform.spec import BenchmarkSpec, SpecError, load_spec
from benchmark_platform.store import Database


@dataclass
class RebuildReport:
    directory: Path
    files: int
    differences: list[str] = field(default_factory=list)  # empty: byte-identical
    code_changes: list[str] = field(default_factory=list)  # assets whose code version moved since the release
    data_changes: list[str] = field(default_factory=list)  # upstream partitions whose data version moved
    new_llm_calls: int = 0  # responses the gateway had to fetch: 0 when every call replayed from its cache

    @property
    def identical(self) -> bool:
        return not self.differences


def recorded_spec(directory: Path, code_revision: str | None, spec_directory: Path | None = None) -> BenchmarkSpec:
    """The spec a release was built from, with its data folder: `spec_directory` when given (a spec by path), else the
    folder the release recorded (lineage.json `spec_directory`) when it still exists, else the bundled spec's."""
    data = json.loads((directory / "spec.json").read_text())
    recorded = read_lineage(directory).get("spec_directory")
    if spec_directory is None and isinstance(recorded, str) and Path(recorded).is_dir():
        spec_directory = Path(recorded)
    try:
        folder = spec_directory if spec_directory is not None else load_spec(data["name"]).directory
        return BenchmarkSpec.model_validate({**data, "directory": folder})
    except ValidationError as exc:
        raise SpecError(
            f"{directory / 'spec.json'} no longer validates against this code ({exc.error_count()} "
            f"errors, first: {'.'.join(map(str, exc.errors()[0]['loc']))}: {exc.errors()[0]['msg']}); "
            f"rebuild it from the code revision it was built with: {code_revision or 'not recorded'}"
        ) from exc


def rebuild_release(
    directory: Path,
    instance: dg.DagsterInstance,
    resources: dict[str, Any],
    log: Callable[[str], None] = print,
    spec_directory: Path | None = None,
) -> RebuildReport:
    """Re-materialise everything the release at `directory` was built from and compare the new files with it."""
    from benchmark_platform.defs import build_definitions
    from benchmark_platform.defs.pipeline import materialize_all  # the one way of running the whole graph

    problems = verify_release(directory)
    if problems:
        raise ValueError(
            f"{directory}: the kept release does not verify, so there is nothing to compare against: "
            + "; ".join(problems[:5])
        )
    kept, kept_lineage = read_manifest(directory), read_lineage(directory)
    spec = recorded_spec(directory, kept_lineage.get("code_revision"), spec_directory)
    if spec_fingerprint(spec.model_dump_json()) != recorded_spec_sha256(directory):
        raise ValueError(f"{directory}/spec.json does not match the spec fingerprint in the manifest")
    recorded = kept_lineage.get("assets") or {}
    current = {
        a.key.to_user_string(): a.code_versions_by_key.get(a.key)
        for a in build_definitions(spec).assets or []
        if isinstance(a, dg.AssetsDefinition)
    }
    report = RebuildReport(directory, len(kept["files"]))
    for asset, partitions in recorded.items():
        versions = {p["code_version"] for p in partitions.values() if p}
        if current.get(asset) is not None and versions and versions != {current[asset]}:
            report.code_changes.append(f"{asset}: {', '.join(sorted(versions))} -> {current[asset]}")
    db = resources["database"].db if "database" in resources else None
    cached_before = _cached_calls(db)
    with tempfile.TemporaryDirectory(prefix="rebuild_") as scratch:
        log(f"rebuilding {spec.name} {spec.release.version} from {len(recorded)} upstream assets")
        materialize_all(
            spec,
            instance=instance,
            log=log,
            resources={**resources, "release_directory": ReleaseDirectory(root=scratch)},
            force=True,  # a rebuild proves the bytes: every asset runs again
        )
        rebuilt_dir = Path(scratch) / spec.name / spec.release.version
        rebuilt, rebuilt_lineage = read_manifest(rebuilt_dir), read_lineage(rebuilt_dir)
    report.differences = compare_files(kept, rebuilt)
    report.new_llm_calls = _cached_calls(db) - cached_before
    for asset, partitions in recorded.items():
        for partition, before in partitions.items():
            after = rebuilt_lineage.get("assets", {}).get(asset, {}).get(partition)
            if before and after and before["data_version"] != after["data_version"]:
                report.data_changes.append(f"{asset}[{partition or '-'}]")
    if db is not None:  # the system of record points at the kept release again, not the scratch copy
        record_release(db, spec.name, spec.release.version, str(directory), kept, kept_lineage)
    return report


def _cached_calls(db: Database | None) -> int:
    return cached_responses(db) if db is not None else 0

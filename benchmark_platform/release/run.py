"""The release stage (unpartitioned): what the release asset and `release rebuild` call.

`build_release` reads the release tables and plots, assembles the bundle, writes it with its manifest and lineage,
and records it; `prepare_rebuild` and `compare_rebuild` are the two halves of a rebuild around re-materialising the
graph (which is Dagster's, so defs/release/rebuild.py runs it between them).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchmark_platform.paths import PROJECT_ROOT
from benchmark_platform.release.bundle import (
    assemble,
    compare_files,
    files_digest,
    manifest_of,
    read_lineage,
    read_manifest,
    recorded_spec_sha256,
    verify_release,
    write_release,
)
from benchmark_platform.release.kina import kina_tables
from benchmark_platform.release.persist import read_plots, read_release_tables, record_release, spec_fingerprint
from benchmark_platform.spec import BenchmarkSpec, SpecError, load_spec
from benchmark_platform.store import Database

RELEASE_CODE_VERSION = "release-3"  # recorded in the manifest: a new bundle format or policy moves it


def code_revision() -> str | None:
    """The checkout's git commit (with '+changes' when the tree differs from it); None outside a git checkout."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(PROJECT_ROOT), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        return commit + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")
    except (OSError, subprocess.CalledProcessError):
        return None


@dataclass(frozen=True)
class BuiltRelease:
    directory: Path
    files: int
    rows: dict[str, int]  # rows per bundle file
    split: dict[str, int]  # the sealed test split's counts
    digest: str  # the files' digest: the asset's data version


def build_release(
    db: Database,
    spec: BenchmarkSpec,
    root: Path,
    release_key: str | None,
    run_id: str,
    provenance: dict[str, Any],
) -> BuiltRelease:
    """Write the spec's release bundle to <root>/<spec>/<version>/ and record it. `provenance` is the upstream
    assets' latest versions (the Dagster instance's, read by the asset): it goes to lineage.json only."""
    tables = read_release_tables(db, spec) + kina_tables(db, spec)
    files, rows, split = assemble(spec, tables, read_plots(db, spec), release_key)
    fingerprint = spec_fingerprint(spec.model_dump_json())
    manifest = manifest_of(spec, files, rows, split, fingerprint, RELEASE_CODE_VERSION)
    lineage = {
        "canary": spec.release.canary,  # every file of a release carries it
        "spec_sha256": fingerprint,
        "dagster_run_id": run_id,
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "code_revision": code_revision(),
        # where the spec's files (bank, anchors, imports) live: `release rebuild` of a spec given by path
        "spec_directory": str(spec.directory),
        "assets": provenance,
    }
    directory = root / spec.name / spec.release.version
    write_release(directory, files, manifest, lineage)
    record_release(db, spec.name, spec.release.version, str(directory), manifest, lineage)
    return BuiltRelease(directory, len(files), rows, split, files_digest(manifest))


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


@dataclass(frozen=True)
class KeptRelease:
    """A kept release, verified, with the spec it was built from."""

    directory: Path
    spec: BenchmarkSpec
    manifest: dict[str, Any]
    lineage: dict[str, Any]


def prepare_rebuild(directory: Path, spec_directory: Path | None = None) -> KeptRelease:
    """The kept release at `directory`, verified, and its recorded spec (ValueError when there is nothing to compare
    against: files that do not verify, or a spec.json that is not the one the manifest fingerprints)."""
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
    return KeptRelease(directory, spec, kept, kept_lineage)


def compare_rebuild(
    kept: KeptRelease,
    current_code_versions: dict[str, str | None],
    rebuilt_dir: Path,
    new_llm_calls: int,
    db: Database | None,
) -> RebuildReport:
    """What differs between the kept release and the one rebuilt into `rebuilt_dir`: files, code versions (the
    assets' now, `current_code_versions`) and upstream data versions. The system of record points at the kept
    release again afterwards, not at the scratch copy."""
    recorded = kept.lineage.get("assets") or {}
    report = RebuildReport(kept.directory, len(kept.manifest["files"]), new_llm_calls=new_llm_calls)
    for asset, partitions in recorded.items():
        versions = {p["code_version"] for p in partitions.values() if p}
        now = current_code_versions.get(asset)
        if now is not None and versions and versions != {now}:
            report.code_changes.append(f"{asset}: {', '.join(sorted(versions))} -> {now}")
    rebuilt, rebuilt_lineage = read_manifest(rebuilt_dir), read_lineage(rebuilt_dir)
    report.differences = compare_files(kept.manifest, rebuilt)
    for asset, partitions in recorded.items():
        for partition, before in partitions.items():
            after = rebuilt_lineage.get("assets", {}).get(asset, {}).get(partition)
            if before and after and before["data_version"] != after["data_version"]:
                report.data_changes.append(f"{asset}[{partition or '-'}]")
    if db is not None:
        record_release(db, kept.spec.name, kept.spec.release.version, str(kept.directory), kept.manifest, kept.lineage)
    return report

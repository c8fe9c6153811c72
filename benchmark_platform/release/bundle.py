"""A release: one deterministic Parquet file per table plus a manifest of content hashes.

Same database content and spec give the same bytes: rows are sorted, ids are content-derived, no timestamps are
written, and every file carries the spec's canary string (Parquet key-value metadata, and a manifest field).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from benchmark_platform.store import Database

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class ReleaseTable:
    name: str
    frame: pl.DataFrame
    sort_by: tuple[str, ...]


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_release(directory: Path, spec_name: str, version: str, canary: str, tables: list[ReleaseTable],
                  provenance: dict[str, object]) -> dict[str, object]:
    """Write the bundle into `directory` atomically (a sibling temp dir renamed into place); return the manifest."""
    staging = directory.with_name(directory.name + ".partial")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    files = {}
    for table in sorted(tables, key=lambda t: t.name):
        path = staging / f"{table.name}.parquet"
        frame = table.frame.sort(list(table.sort_by)) if table.sort_by and table.frame.height else table.frame
        frame.write_parquet(path, compression="zstd", compression_level=3, statistics=False,
                            metadata={"canary": canary, "benchmark": f"{spec_name} {version}"})
        files[path.name] = {"sha256": sha256_file(path), "bytes": path.stat().st_size, "rows": frame.height}
    manifest = {"benchmark": spec_name, "version": version, "canary": canary, "files": files,
                "provenance": provenance}
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    if directory.exists():
        shutil.rmtree(directory)
    staging.rename(directory)
    return manifest


def verify_release(directory: Path) -> list[str]:
    """Problems found (empty when every file matches its recorded hash and no file is unlisted)."""
    manifest = json.loads((directory / MANIFEST).read_text())
    problems = []
    for name, entry in manifest["files"].items():
        path = directory / name
        if not path.exists():
            problems.append(f"{name}: missing")
        elif sha256_file(path) != entry["sha256"]:
            problems.append(f"{name}: content hash differs from the manifest")
    unlisted = {p.name for p in directory.iterdir()} - set(manifest["files"]) - {MANIFEST}
    problems += [f"{name}: not listed in the manifest" for name in sorted(unlisted)]
    return problems


def record_release(db: Database, spec_name: str, version: str, directory: Path, manifest: dict[str, object]) -> None:
    """Remember the release in the system of record (the latest build of a version replaces the previous one)."""
    from benchmark_platform.store import as_json

    text = json.dumps(manifest, sort_keys=True)
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("""INSERT INTO releases (spec, version, path, manifest, manifest_hash) VALUES (%s, %s, %s, %s, %s)
                       ON CONFLICT (spec, version) DO UPDATE SET path = EXCLUDED.path, manifest = EXCLUDED.manifest,
                         manifest_hash = EXCLUDED.manifest_hash, created_at = now()""",
                    (spec_name, version, str(directory), as_json(manifest), hashlib.sha256(text.encode()).hexdigest()))

"""Content versions of what the graph reads from outside Dagster (files, recordings) and of the spec settings each
asset reads. An input's version is the data version of its observable source asset (defs/inputs) and of the asset
that reads it; a setting's hash is part of the reading asset's code version. Both feed Dagster's stale status."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from benchmark_platform.anchors import MAIN_FILE, anchor_files, version_of
from benchmark_platform.ingest import SnapshotStore, recorded_version
from benchmark_platform.ingest.config import SourceConfig
from benchmark_platform.spec import BenchmarkSpec

# the observable source assets' names (defs/inputs), which the reading assets name as deps
ANCHOR_FILES, SOURCE_RECORDINGS, ITEM_BANK_FILE, RESULT_FILES, GOLD_LABELS = (
    "anchor_files",
    "source_recordings",
    "item_bank_file",
    "result_files",
    "gold_labels",
)
NO_ANCHORS = "none"  # a discipline without anchor files (it goes to manual review)


def settings_hash(*parts: Any) -> str:
    """12 hex digits over JSON-able parts (pydantic models are dumped): what a code version carries of the spec."""
    dumped = [p.model_dump(mode="json") if hasattr(p, "model_dump") else p for p in parts]
    return hashlib.sha256(json.dumps(dumped, sort_keys=True, default=str).encode()).hexdigest()[:12]


def anchors_version(spec: BenchmarkSpec, discipline: str) -> str:
    """The content hash of the discipline's anchor files (the import's version), or NO_ANCHORS."""
    folder = spec.anchors_dir / discipline
    return version_of(anchor_files(folder)) if (folder / MAIN_FILE).is_file() else NO_ANCHORS


def source_version(source: SourceConfig, store: SnapshotStore) -> str:
    """The source's settings and what replaying it serves: its listed URLs' bodies, or (an adapter that builds its
    own requests) every recording in the store."""
    urls = source.listed_urls()
    served = recorded_version(store, urls) if urls else recorded_version(store, [e.url for e in store.exchanges()])
    return hashlib.sha256(f"{source.model_dump_json()}\n{served}".encode()).hexdigest()[:16]


def files_version(paths: list[Path]) -> str:
    """sha256 over the files' names and bytes (a missing file counts as missing: reading it will say why)."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(str(path).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest() if path.is_file() else b"missing")
    return digest.hexdigest()[:16]


def bank_version(spec: BenchmarkSpec) -> str:
    """The item bank file's sha256 (16 hex digits), as bank_items records it."""
    assert spec.item_bank is not None
    path = spec.item_bank.path if spec.item_bank.path.is_absolute() else spec.directory / spec.item_bank.path
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.is_file() else "missing"


def result_paths(spec: BenchmarkSpec) -> list[Path]:
    return [p if p.is_absolute() else spec.directory / p for p in (i.path for i in spec.evaluation.imports)]

"""The anchors stage for one partition: parse the discipline's files once and store the import (what the asset calls).

Every later stage (centrality, selection) reads the stored import (`persist.current_anchors`), never the files: a
discipline whose files are gone has no current import, so those stages send it to manual review.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchmark_platform.anchors.io import MAIN_FILE, load_anchor_set
from benchmark_platform.anchors.models import AnchorSet
from benchmark_platform.anchors.persist import clear_import, record_import
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import Database


@dataclass(frozen=True)
class AnchorImport:
    """What one partition's import stored: the parsed set with its import id, or no files (manual review)."""

    folder: Path
    anchor_set: AnchorSet | None = None
    import_id: int | None = None
    new: bool = False


def import_anchors(db: Database, spec: BenchmarkSpec, discipline: str) -> AnchorImport:
    """Parse and store the discipline's anchor files (AnchorFileError names the file and row; nothing is written
    then). Without files, no import stays current."""
    folder = spec.anchors_dir / discipline
    if not (folder / MAIN_FILE).is_file():
        clear_import(db, spec.name, discipline)
        return AnchorImport(folder)
    anchor_set = load_anchor_set(folder)
    import_id, new = record_import(db, spec.name, anchor_set)
    return AnchorImport(folder, anchor_set, import_id, new)

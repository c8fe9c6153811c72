"""Rebuild a kept release from what its manifest recorded and prove the files byte-identical.

The spec is the one stored in the release (`spec.json`), so an old version rebuilds even after the bundled spec moved
on. Every asset is re-materialised (sources replay from the bundled snapshot, LLM calls from the gateway's cache);
the new bundle goes to a temporary folder and its file hashes are compared with the kept manifest
(release/run.py `prepare_rebuild` and `compare_rebuild`; re-materialising is Dagster's, so it is here). The kept
release is never touched.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg

from benchmark_platform.defs.release.assets import ReleaseDirectory
from benchmark_platform.llm import cached_responses
from benchmark_platform.release import RebuildReport, compare_rebuild, prepare_rebuild


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

    kept = prepare_rebuild(directory, spec_directory)
    spec = kept.spec
    current = {
        a.key.to_user_string(): a.code_versions_by_key.get(a.key)
        for a in build_definitions(spec).assets or []
        if isinstance(a, dg.AssetsDefinition)
    }
    db = resources["database"].db if "database" in resources else None
    cached_before = cached_responses(db) if db is not None else 0
    with tempfile.TemporaryDirectory(prefix="rebuild_") as scratch:
        log(
            f"rebuilding {spec.name} {spec.release.version} from {len(kept.lineage.get('assets') or {})} upstream assets"
        )
        materialize_all(
            spec,
            instance=instance,
            log=log,
            resources={**resources, "release_directory": ReleaseDirectory(root=scratch)},
            force=True,  # a rebuild proves the bytes: every asset runs again
        )
        new_calls = (cached_responses(db) if db is not None else 0) - cached_before
        return compare_rebuild(kept, current, Path(scratch) / spec.name / spec.release.version, new_calls, db)

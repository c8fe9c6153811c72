"""A bundled spec's whole graph built in-process, as `benchmark-platform run` builds it, for the pipeline tests."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from benchmark_platform.defs.common import DatabaseResource
from benchmark_platform.defs.llm.resources import LLMGatewayResource
from benchmark_platform.defs.pipeline import materialize_all
from benchmark_platform.defs.release.assets import ReleaseDirectory
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import Database
from benchmark_platform.store.settings import DATABASE_URL_ENV


def build_release(spec: BenchmarkSpec, db: Database, root: Path) -> Path:
    """Materialise every asset of `spec` into `db` on a fresh Dagster instance; the release folder under `root`."""
    database = DatabaseResource(url=db.url)
    with pytest.MonkeyPatch.context() as env, dg.instance_for_test() as instance:
        env.setenv(DATABASE_URL_ENV, db.url)  # resources that read the URL themselves (the gateway's cache)
        materialize_all(
            spec,
            instance=instance,
            log=lambda _: None,
            resources={
                "database": database,
                "llm": LLMGatewayResource(database=database),
                "release_directory": ReleaseDirectory(root=str(root)),
            },
        )
    return root / spec.name / spec.release.version

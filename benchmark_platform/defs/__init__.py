"""Dagster wiring, one sub-package per stage. Each exports `build_defs(spec) -> dagster.Definitions`."""

from __future__ import annotations

import importlib
import pkgutil

import dagster as dg

from benchmark_platform.defs.common import default_resources
from benchmark_platform.spec import BenchmarkSpec


def stage_modules() -> list[str]:
    """Every stage folder under defs/ (discovered, so adding a stage needs no edit here)."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if info.ispkg)


def build_definitions(spec: BenchmarkSpec) -> dg.Definitions:
    parts = [importlib.import_module(f"{__name__}.{name}").build_defs(spec) for name in stage_modules()]
    return dg.Definitions.merge(*parts, dg.Definitions(resources=default_resources()))

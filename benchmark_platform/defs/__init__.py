"""Dagster wiring, one sub-package per stage. Each exports `build_defs(spec) -> dagster.Definitions`."""

from __future__ import annotations

import importlib
import pkgutil
import warnings

import dagster as dg

from benchmark_platform.defs.common import default_resources
from benchmark_platform.spec import BenchmarkSpec

# Dagster flags APIs this project uses on purpose: `backfill_policy` (beta; the single-run backfills of README "What
# runs by itself"), `observable_source_asset` (beta; the spec's input files) and the freshness-check builders of
# `<spec>_source_freshness_sensor` (superseded; kept until that sensor moves to their successor). Their ~30 warnings at
# each `make dev` start (three code locations) say nothing a team can act on: only these are silenced, by message;
# any other Dagster warning still shows.
for _category, _api in (
    (dg.BetaWarning, r"Parameter `backfill_policy` of function `asset`"),
    (dg.BetaWarning, r"Function `observable_source_asset`"),
    (dg.SupersessionWarning, r"Function `build_sensor_for_freshness_checks`"),
    (dg.SupersessionWarning, r"Function `build_last_update_freshness_checks`"),
):
    warnings.filterwarnings("ignore", message=_api, category=_category)


def stage_modules() -> list[str]:
    """Every stage folder under defs/ (discovered, so adding a stage needs no edit here)."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if info.ispkg)


def build_definitions(spec: BenchmarkSpec) -> dg.Definitions:
    parts = [importlib.import_module(f"{__name__}.{name}").build_defs(spec) for name in stage_modules()]
    return dg.Definitions.merge(*parts, dg.Definitions(resources=default_resources()))

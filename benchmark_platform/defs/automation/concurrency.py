"""Concurrency pools. Dagster gives a step one pool, so each stage asset takes exactly one:

- `llm_<provider>` (llm.config.pool_name) when the step calls models: the provider's rate and concurrency limits are
  the scarce resource, shared by every stage and spec that calls it, so the LLM-calling step queues there
  (defs/llm `busiest_pool`); one step per provider at a time, the gateway spreading its calls up to the limits;
- `stage_<asset>` (defs/common `stage_pool`) for a discipline stage that calls none: one step of a stage at a time,
  shared by every spec of the instance. A step is CPU-bound (numpy, faiss, spaCy on 2 cores) and replaces its
  partitions' rows in the stage's own tables; a scheduled backfill is one step over all its disciplines, so the
  limit orders a backfill against a sensor's run of the same stage, never one discipline against another;
- `database` for the steps that write or scan most of the database regardless of discipline (ingest, release).

Slots are instance state; `benchmark-platform dev` writes these limits before it starts the daemon
(`set_pool_limits`, idempotent), and dagster.yaml's `pools.default_limit: 1` covers a pool not written yet."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import dagster as dg

from benchmark_platform.llm.config import ModelConfig, pool_name, provider_limits

DATABASE_POOL = "database"
DATABASE_POOL_SLOTS = 2  # bulk writers at once: more only queue on the server's locks and the 2 cores
STEPS_PER_PROVIDER = 1  # the gateway spreads one step's calls up to the provider's max_concurrency/rpm/tpm
STAGE_POOL_PREFIX = "stage_"
STAGE_POOL_SLOTS = 1  # one step per stage: a step already covers a whole range of disciplines (single-run policy)


def limit_of(pool: str) -> int:
    if pool == DATABASE_POOL:
        return DATABASE_POOL_SLOTS
    if pool.startswith(STAGE_POOL_PREFIX):
        return STAGE_POOL_SLOTS
    return STEPS_PER_PROVIDER  # llm_<provider>


def pool_limits(models: list[ModelConfig], pools: Iterable[str] = ()) -> dict[str, int]:
    """The limits of the database pool, of each provider's pool for these models, and of `pools` (e.g. stages)."""
    names = [DATABASE_POOL, *(pool_name(provider) for provider in provider_limits(models)), *pools]
    return {name: limit_of(name) for name in names}


def definitions_pools(defs: dg.Definitions) -> set[str]:
    """Every pool an asset of these definitions queues on."""
    return {
        pool
        for asset in defs.assets or []
        if isinstance(asset, dg.AssetsDefinition)
        for pool in [getattr(asset.node_def, "pool", None)]
        if pool
    }


def workspace_pool_limits(workspace_file: Path) -> dict[str, int]:
    """The limits of every pool used by the code locations of a workspace.yaml (`python_module` entries)."""
    import importlib

    from benchmark_platform.safeyaml import read_yaml

    workspace = read_yaml(workspace_file)
    entries = workspace.get("load_from") if isinstance(workspace, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"{workspace_file}: no `load_from` list of code locations")
    pools: set[str] = set()
    for entry in entries:
        module = entry["python_module"]
        defs = getattr(importlib.import_module(module["module_name"]), module.get("attribute", "defs"))
        pools |= definitions_pools(defs)
    return pool_limits([], sorted(pools))


def set_pool_limits(instance: dg.DagsterInstance, limits: dict[str, int]) -> None:
    for pool, slots in limits.items():
        instance.event_log_storage.set_concurrency_slots(pool, slots)

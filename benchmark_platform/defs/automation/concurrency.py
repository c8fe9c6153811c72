"""Concurrency pools: one per LLM provider (`llm_<provider>`, from llm.config.pool_name) and one for steps that
write or scan much of the database. Slots are instance state; `set_pool_limits` writes them (idempotent)."""

import dagster as dg

from benchmark_platform.llm.config import ModelConfig, pool_name, provider_limits

DATABASE_POOL = "database"
DATABASE_POOL_SLOTS = 2  # bulk writers at once: more only queue on the server's locks and the 2 cores
STEPS_PER_PROVIDER = 1  # the gateway spreads one step's calls up to the provider's max_concurrency/rpm/tpm


def pool_limits(models: list[ModelConfig]) -> dict[str, int]:
    return {DATABASE_POOL: DATABASE_POOL_SLOTS} | {
        pool_name(provider): STEPS_PER_PROVIDER for provider in provider_limits(models)
    }


def set_pool_limits(instance: dg.DagsterInstance, limits: dict[str, int]) -> None:
    for pool, slots in limits.items():
        instance.event_log_storage.set_concurrency_slots(pool, slots)

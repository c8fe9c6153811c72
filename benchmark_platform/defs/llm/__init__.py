"""Dagster wiring of the LLM gateway: the `llm` resource (used by every stage that calls a model)."""

from __future__ import annotations

import dagster as dg

from benchmark_platform.defs.common import DatabaseResource
from benchmark_platform.defs.llm.resources import (
    LLMGatewayResource,
    busiest_pool,
    gateway_sessions,
    llm_metadata,
    provider_pools,
)
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import DATABASE_URL_ENV

__all__ = ["LLMGatewayResource", "build_defs", "busiest_pool", "gateway_sessions", "llm_metadata", "provider_pools"]


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    del spec  # the resource is the same for every spec; model configs come with each call
    database = DatabaseResource(url=dg.EnvVar(DATABASE_URL_ENV))
    return dg.Definitions(resources={"llm": LLMGatewayResource(database=database)})

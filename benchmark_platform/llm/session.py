"""How a stage's run module reaches the LLM gateway without knowing what opens it (the Dagster `llm` resource, or a
test's scripted gateway): as callables bound by the caller to the spec's gateway settings and the run id."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager

from benchmark_platform.llm.config import ModelConfig
from benchmark_platform.llm.gateway import CallResult, ChatRequest, Gateway, GatewayTotals

OpenGateway = Callable[[Sequence[ModelConfig]], AbstractAsyncContextManager[Gateway]]
"""Opens a gateway session for these model configs (e.g. `LLMGatewayResource.open`)."""

RunBatch = Callable[[Sequence[ModelConfig], Sequence[ChatRequest]], tuple[list[CallResult], GatewayTotals]]
"""Sends one batch of chat requests through a gateway session of its own (e.g. `LLMGatewayResource.run`)."""

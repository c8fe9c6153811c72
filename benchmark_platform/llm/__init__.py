"""The LLM gateway: every model call of the platform, cached in PostgreSQL, limited per provider, retried, priced.

- `config`: `ModelConfig` (a spec's model configurations), `GatewaySettings` (cost cap, retries, breaker, flushing).
- `gateway`: `Gateway` with `ChatRequest` / `ScoreRequest` -> `CallResult`, and `GatewayTotals` for asset metadata.
- `structured`: `extract` (OenoBench B.3's fenced / raw / prefix JSON extraction under a pydantic schema).
- `mcq`: option-likelihood multiple-choice answers; `local`: the bundled llama.cpp model (extra `local-llm`);
  `double`: the scripted OpenAI-compatible loopback server used by tests and the benchmark.
"""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.llm.cache import cached_responses
    from benchmark_platform.llm.gateway import (
        CallResult,
        ChatRequest,
        Gateway,
        GatewayTotals,
        MissingApiKey,
        ScoreRequest,
    )
    from benchmark_platform.llm.local import LocalModelServer
    from benchmark_platform.llm.session import OpenGateway, RunBatch
    from benchmark_platform.llm.structured import ExtractionError, extract
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "CallResult",
    "ChatRequest",
    "ExtractionError",
    "Gateway",
    "GatewayTotals",
    "LocalModelServer",
    "MissingApiKey",
    "OpenGateway",
    "RunBatch",
    "ScoreRequest",
    "cached_responses",
    "extract",
]

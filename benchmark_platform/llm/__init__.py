"""The LLM gateway: every model call of the platform, cached in PostgreSQL, limited per provider, retried, priced.

- `config`: `ModelConfig` (a spec's model configurations), `GatewaySettings` (cost cap, retries, breaker, flushing).
- `gateway`: `Gateway` with `ChatRequest` / `ScoreRequest` -> `CallResult`, and `GatewayTotals` for asset metadata.
- `structured`: `extract` (OenoBench B.3's fenced / raw / prefix JSON extraction under a pydantic schema).
- `mcq`: option-likelihood multiple-choice answers; `local`: the bundled llama.cpp model (extra `local-llm`);
  `double`: the scripted OpenAI-compatible loopback server used by tests and the benchmark.
"""

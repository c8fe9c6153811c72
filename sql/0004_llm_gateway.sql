-- 0004: LLM gateway telemetry. One row per call the gateway answered (a cache hit, a coalesced duplicate or a
-- provider call), written in batches; `llm_call_cache` (0001) keeps the responses themselves.
CREATE TABLE llm_calls (
    call_id          text PRIMARY KEY,            -- '<gateway instance>-<sequence>': replaying a journal is idempotent
    run_id           text NOT NULL,               -- the Dagster run id, or the label a caller gave
    request_hash     text NOT NULL,
    model            text NOT NULL,               -- model configuration name
    provider         text NOT NULL,
    started_at       timestamptz NOT NULL,
    latency_ms       double precision NOT NULL,   -- from first attempt to answer, retry waits included
    input_tokens     integer NOT NULL DEFAULT 0,
    output_tokens    integer NOT NULL DEFAULT 0,
    reasoning_tokens integer NOT NULL DEFAULT 0,
    cost_usd         double precision NOT NULL DEFAULT 0,  -- paid by this call: 0 for a cache hit or a coalesced one
    cost_source      text NOT NULL CHECK (cost_source IN ('provider', 'prices', 'none')),
    cache_hit        boolean NOT NULL,
    coalesced        boolean NOT NULL,
    retries          integer NOT NULL DEFAULT 0,
    status           text NOT NULL CHECK (status IN ('ok', 'invalid', 'error', 'cost_cap', 'circuit_open')),
    error            text
);
CREATE INDEX llm_calls_run ON llm_calls (run_id);
CREATE INDEX llm_calls_request ON llm_calls (request_hash);

ALTER TABLE llm_call_cache
    ADD COLUMN provider    text NOT NULL DEFAULT '',
    ADD COLUMN cost_source text NOT NULL DEFAULT 'prices' CHECK (cost_source IN ('provider', 'prices', 'none'));

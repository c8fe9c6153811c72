-- 0001: the first schema of the system of record.
-- Partition writes replace a discipline's (or source's) rows inside one transaction, so most tables carry
-- `spec` and `discipline` columns and cascade from their parents. Content hashes are hex sha256.

CREATE TABLE sources (
    source_id      text PRIMARY KEY,            -- id from the spec, e.g. 'ttb_ava_geojson'
    spec           text NOT NULL,
    adapter        text NOT NULL,               -- adapter kind that reads it
    title          text NOT NULL,
    publisher      text NOT NULL,
    base_url       text NOT NULL,
    tier           smallint NOT NULL CHECK (tier IN (1, 2, 3)),  -- 1 official, 2 authoritative, 3 reliable
    licence        text NOT NULL,
    attribution    text NOT NULL,
    updated_at     timestamptz NOT NULL DEFAULT now()
);

-- Exactly what an authority served: the bytes' hash, where and when.
CREATE TABLE documents (
    document_id    text PRIMARY KEY,            -- sha256(source_id, url)[:20]: stable across re-ingestion
    source_id      text NOT NULL REFERENCES sources(source_id) ON DELETE CASCADE,
    url            text NOT NULL,
    retrieved_at   timestamptz NOT NULL,
    content_date   date,
    media_type     text NOT NULL,
    content_hash   text NOT NULL CHECK (length(content_hash) = 64),
    raw            bytea NOT NULL,
    text           text NOT NULL,               -- cleaned text that fact spans index into
    title          text NOT NULL,
    metadata       jsonb NOT NULL DEFAULT '{}'::jsonb,
    UNIQUE (source_id, url)
);
CREATE INDEX documents_content_hash ON documents (content_hash);

CREATE TABLE disciplines (
    spec           text NOT NULL,
    discipline     text NOT NULL,               -- partition key (taxonomy leaf)
    path           text[] NOT NULL,             -- ancestors from the root, leaf last
    PRIMARY KEY (spec, discipline)
);

CREATE TABLE facts (
    fact_id        text PRIMARY KEY,            -- content-derived: stable across reruns, so releases rebuild byte for byte
    spec           text NOT NULL,
    discipline     text NOT NULL,
    document_id    text NOT NULL REFERENCES documents(document_id) ON DELETE CASCADE,
    span_start     integer NOT NULL CHECK (span_start >= 0),
    span_end       integer NOT NULL CHECK (span_end > span_start),
    text           text NOT NULL,
    text_hash      text NOT NULL,
    confidence     real NOT NULL DEFAULT 1.0,
    method         text NOT NULL,               -- 'sentence' | 'template:<field>' | ...
    attributes     jsonb NOT NULL DEFAULT '{}'::jsonb,  -- structured facts: subject, field, value
    UNIQUE (spec, discipline, document_id, span_start, span_end)
);
CREATE INDEX facts_partition ON facts (spec, discipline);

CREATE TABLE fact_entities (
    fact_id        text NOT NULL REFERENCES facts(fact_id) ON DELETE CASCADE,
    entity_id      text NOT NULL,               -- canonical id, e.g. 'ava:atlas_peak'
    entity_type    text NOT NULL,
    surface        text NOT NULL,
    PRIMARY KEY (fact_id, entity_id, surface)
);

CREATE TABLE anchor_imports (
    import_id      bigserial PRIMARY KEY,
    spec           text NOT NULL,
    discipline     text NOT NULL,
    file_name      text NOT NULL,
    content_hash   text NOT NULL,
    is_example     boolean NOT NULL,            -- bundled examples are not expert-elicited
    imported_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (spec, discipline, content_hash)
);

CREATE TABLE anchors (
    anchor_id      bigserial PRIMARY KEY,
    import_id      bigint NOT NULL REFERENCES anchor_imports(import_id) ON DELETE CASCADE,
    spec           text NOT NULL,
    discipline     text NOT NULL,
    kind           text NOT NULL CHECK (kind IN ('method', 'problem', 'theorem', 'concept', 'application', 'anchor_item')),
    text           text NOT NULL,
    stratum        text
);
CREATE INDEX anchors_partition ON anchors (spec, discipline);

-- Facts chosen for generation by the selection stage (KINA topic pre-approval).
CREATE TABLE selected_facts (
    spec           text NOT NULL,
    discipline     text NOT NULL,
    fact_id        text NOT NULL REFERENCES facts(fact_id) ON DELETE CASCADE,
    rank           integer NOT NULL,
    gain           double precision NOT NULL,
    PRIMARY KEY (spec, discipline, fact_id)
);

CREATE TABLE items (
    item_id        text PRIMARY KEY,            -- content-derived, stable across reruns
    spec           text NOT NULL,
    discipline     text NOT NULL,
    format         text NOT NULL CHECK (format IN ('mcq4', 'pseudo_mcq10')),
    question       text NOT NULL,
    options        jsonb NOT NULL,              -- list of option texts, in presented order
    answer_index   smallint NOT NULL,
    explanation    text NOT NULL,
    difficulty     text,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX items_partition ON items (spec, discipline);

CREATE TABLE item_facts (
    item_id        text NOT NULL REFERENCES items(item_id) ON DELETE CASCADE,
    fact_id        text NOT NULL REFERENCES facts(fact_id) ON DELETE CASCADE,
    role           text NOT NULL DEFAULT 'answer',
    PRIMARY KEY (item_id, fact_id)
);

CREATE TABLE generation_metadata (
    item_id        text PRIMARY KEY REFERENCES items(item_id) ON DELETE CASCADE,
    strategy       text NOT NULL,
    generator      text NOT NULL,               -- model name, or 'deterministic'
    prompt_version text NOT NULL,
    parameters     jsonb NOT NULL DEFAULT '{}'::jsonb,
    gate_result    text
);

CREATE TABLE audit_runs (
    audit_run_id   bigserial PRIMARY KEY,
    spec           text NOT NULL,
    discipline     text NOT NULL,
    inputs_hash    text NOT NULL,               -- hash of the audited items and agent versions: same inputs, same run
    started_at     timestamptz NOT NULL DEFAULT now(),
    dagster_run_id text,
    UNIQUE (spec, discipline, inputs_hash)
);

-- A new agent version adds findings; it never overwrites an old version's.
CREATE TABLE audit_findings (
    audit_run_id   bigint NOT NULL REFERENCES audit_runs(audit_run_id) ON DELETE CASCADE,
    item_id        text NOT NULL REFERENCES items(item_id) ON DELETE CASCADE,
    agent          text NOT NULL,
    agent_version  text NOT NULL,
    severity       text NOT NULL CHECK (severity IN ('pass', 'warn', 'fail')),
    payload        jsonb NOT NULL DEFAULT '{}'::jsonb,
    UNIQUE (audit_run_id, item_id, agent, agent_version)
);

CREATE TABLE gold_labels (
    gold_label_id  bigserial PRIMARY KEY,
    sheet          text NOT NULL,               -- file or review round it came from
    item_ref       text NOT NULL,               -- item id or the sheet's own question id
    reviewer       text NOT NULL,
    rubric         text NOT NULL,
    rating         double precision NOT NULL,
    imported_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (sheet, item_ref, reviewer, rubric)
);

CREATE TABLE evaluation_runs (
    evaluation_run_id bigserial PRIMARY KEY,
    spec           text NOT NULL,
    discipline     text NOT NULL,
    model          text NOT NULL,               -- configuration name
    kind           text NOT NULL CHECK (kind IN ('baseline', 'model', 'imported')),
    settings       jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (spec, discipline, model, kind)
);

CREATE TABLE evaluation_answers (
    evaluation_run_id bigint NOT NULL REFERENCES evaluation_runs(evaluation_run_id) ON DELETE CASCADE,
    item_id        text NOT NULL,
    sample_index   integer NOT NULL DEFAULT 0,
    predicted_index smallint,                   -- NULL when unparseable
    correct        boolean NOT NULL,
    raw_output     text,
    PRIMARY KEY (evaluation_run_id, item_id, sample_index)
);

-- Every LLM response, keyed by the hash of (model, messages, parameters, seed, sample index).
CREATE TABLE llm_call_cache (
    request_hash   text PRIMARY KEY,
    model          text NOT NULL,
    request        jsonb NOT NULL,
    response       jsonb NOT NULL,
    input_tokens   integer NOT NULL DEFAULT 0,
    output_tokens  integer NOT NULL DEFAULT 0,
    reasoning_tokens integer NOT NULL DEFAULT 0,
    cost_usd       double precision NOT NULL DEFAULT 0,
    latency_ms     double precision NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE releases (
    spec           text NOT NULL,
    version        text NOT NULL,
    path           text NOT NULL,
    manifest       jsonb NOT NULL,
    manifest_hash  text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (spec, version)
);

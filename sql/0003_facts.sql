-- 0003: the facts stage (OenoBench 3.3, B.1). Candidates and rejections are written per (spec, source) by the
-- extraction asset; facts, near-duplicates and the quality report per (spec, discipline) by the facts asset.

-- Every candidate that passed the five filters, before near-duplicate removal.
CREATE TABLE fact_candidates (
    spec           text NOT NULL,
    source_id      text NOT NULL,
    document_id    text NOT NULL REFERENCES documents(document_id) ON DELETE CASCADE,
    span_start     integer NOT NULL CHECK (span_start >= 0),
    span_end       integer NOT NULL CHECK (span_end > span_start),
    discipline     text NOT NULL,
    text           text NOT NULL,               -- the atomic sentence, references resolved
    source_text    text NOT NULL,               -- the evidence as written: documents.text[span_start:span_end]
    confidence     real NOT NULL,
    method         text NOT NULL,               -- 'sentence' | 'clause' | 'template:<field>'
    attributes     jsonb NOT NULL DEFAULT '{}'::jsonb,
    mentions       jsonb NOT NULL DEFAULT '[]'::jsonb,  -- [{entity_id, entity_type, surface, ner_label}]
    PRIMARY KEY (spec, document_id, span_start, span_end, method, discipline)
);
CREATE INDEX fact_candidates_partition ON fact_candidates (spec, discipline);
CREATE INDEX fact_candidates_source ON fact_candidates (spec, source_id);

-- Why each dropped candidate was dropped: the stage (filter) and a stable reason, plus free-text detail.
CREATE TABLE fact_rejections (
    spec           text NOT NULL,
    source_id      text NOT NULL,
    document_id    text NOT NULL REFERENCES documents(document_id) ON DELETE CASCADE,
    span_start     integer NOT NULL,
    span_end       integer NOT NULL,
    stage          text NOT NULL CHECK (stage IN ('split', 'resolve', 'classify', 'validate', 'on_topic', 'template')),
    reason         text NOT NULL,
    detail         text NOT NULL DEFAULT '',
    discipline     text,                        -- NULL when dropped before classification
    text           text NOT NULL
);
CREATE INDEX fact_rejections_source ON fact_rejections (spec, source_id);

-- The rejection-reason table of a spec.
CREATE VIEW fact_rejection_counts AS
    SELECT spec, source_id, stage, reason, count(*) AS rejected
    FROM fact_rejections GROUP BY spec, source_id, stage, reason;

-- Candidates removed as near-duplicates of a kept fact (cosine >= the spec's threshold).
CREATE TABLE fact_duplicates (
    spec           text NOT NULL,
    discipline     text NOT NULL,
    document_id    text NOT NULL REFERENCES documents(document_id) ON DELETE CASCADE,
    span_start     integer NOT NULL,
    span_end       integer NOT NULL,
    text           text NOT NULL,
    kept_fact_id   text NOT NULL REFERENCES facts(fact_id) ON DELETE CASCADE,
    cosine         real NOT NULL
);
CREATE INDEX fact_duplicates_partition ON fact_duplicates (spec, discipline);

-- The gazetteer's correction of the small model's entity label (e.g. Barolo tagged PERSON).
ALTER TABLE fact_entities ADD COLUMN ner_label text;

-- Fact-quality report per discipline and source.
CREATE TABLE fact_quality (
    spec               text NOT NULL,
    discipline         text NOT NULL,
    source_id          text NOT NULL,
    tier               smallint,
    facts              integer NOT NULL,
    full_confidence    integer NOT NULL,        -- 5-30 words
    reduced_confidence integer NOT NULL,        -- 31-50 words
    words_mean         real,
    words_median       real,
    words_max          integer,
    with_entities      integer NOT NULL,        -- facts with at least one linked entity
    ner_corrections    integer NOT NULL,        -- entity labels of the small model overridden by the gazetteer
    duplicates_removed integer NOT NULL,
    rejected           integer NOT NULL,        -- candidates of this discipline dropped by validation / on-topic
    rejections         jsonb NOT NULL DEFAULT '{}'::jsonb,  -- "stage: reason" -> count
    paraphrased        integer NOT NULL,
    text_mode          text NOT NULL,           -- 'validated sentence' or 'paraphrase: <model>'
    PRIMARY KEY (spec, discipline, source_id)
);

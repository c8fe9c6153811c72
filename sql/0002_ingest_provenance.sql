-- 0002: ingest provenance. Every HTTP exchange a stored document came from (request, status, headers, time, body),
-- each document's trace into it (verified by the database on insertion), the records adapters rejected, and the
-- per-source licence table a release publishes.

CREATE TABLE http_exchanges (
    exchange_id      text PRIMARY KEY CHECK (length(exchange_id) = 64),  -- sha256 of the exchange record
    method           text NOT NULL,
    url              text NOT NULL,
    request_headers  jsonb NOT NULL DEFAULT '{}'::jsonb,                 -- never credentials
    status           smallint NOT NULL,
    response_headers jsonb NOT NULL DEFAULT '{}'::jsonb,
    body_sha256      text NOT NULL,
    body             bytea NOT NULL,
    recorded_at      timestamptz NOT NULL,
    elapsed_ms       double precision NOT NULL DEFAULT 0,
    capture          jsonb NOT NULL,                                     -- {"kind": "live"|"import", origin, note}
    CHECK (encode(sha256(body), 'hex') = body_sha256)
);
-- uncompressed out-of-line storage: substring() of a trace span reads only the chunks it needs
ALTER TABLE http_exchanges ALTER COLUMN body SET STORAGE EXTERNAL;
CREATE INDEX http_exchanges_url ON http_exchanges (url);

-- A document is the byte span [span_start, span_end) of one recorded body. The trigger refuses a trace whose span
-- does not hash to the document's content_hash, differs from its raw bytes, or was recorded at another time.
CREATE TABLE document_traces (
    document_id  text PRIMARY KEY REFERENCES documents(document_id) ON DELETE CASCADE,
    exchange_id  text NOT NULL REFERENCES http_exchanges(exchange_id),
    span_start   integer NOT NULL CHECK (span_start >= 0),
    span_end     integer NOT NULL CHECK (span_end > span_start),
    locator      text NOT NULL DEFAULT ''                                -- e.g. 'row=12' (RFC 7111), 'sheet=...'
);
CREATE INDEX document_traces_exchange ON document_traces (exchange_id);

CREATE FUNCTION verify_document_trace() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    doc record;
    exch record;
    span bytea;
BEGIN
    SELECT content_hash, raw, retrieved_at INTO doc FROM documents WHERE document_id = NEW.document_id;
    SELECT octet_length(body) AS size, recorded_at INTO exch FROM http_exchanges WHERE exchange_id = NEW.exchange_id;
    IF NEW.span_end > exch.size THEN
        RAISE EXCEPTION 'document %: span [%, %) lies outside the % bytes of exchange %',
            NEW.document_id, NEW.span_start, NEW.span_end, exch.size, NEW.exchange_id;
    END IF;
    SELECT substring(body FROM NEW.span_start + 1 FOR NEW.span_end - NEW.span_start) INTO span
        FROM http_exchanges WHERE exchange_id = NEW.exchange_id;
    IF encode(sha256(span), 'hex') <> doc.content_hash OR span <> doc.raw THEN
        RAISE EXCEPTION 'document %: bytes [%, %) of exchange % do not match its raw bytes and content hash',
            NEW.document_id, NEW.span_start, NEW.span_end, NEW.exchange_id;
    END IF;
    IF doc.retrieved_at <> exch.recorded_at THEN
        RAISE EXCEPTION 'document %: retrieved_at % differs from the exchange''s recorded_at %',
            NEW.document_id, doc.retrieved_at, exch.recorded_at;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER document_traces_verify BEFORE INSERT OR UPDATE ON document_traces
    FOR EACH ROW EXECUTE FUNCTION verify_document_trace();

-- Documents with no verified trace (must stay empty for ingested sources; the ingest asset checks it).
CREATE VIEW untraced_documents AS
    SELECT d.document_id, d.source_id, d.url FROM documents d
    LEFT JOIN document_traces t USING (document_id) WHERE t.document_id IS NULL;

-- Records an adapter refused, replaced with the source's partition; nothing disappears silently.
CREATE TABLE ingest_rejections (
    source_id  text NOT NULL REFERENCES sources(source_id) ON DELETE CASCADE,
    locator    text NOT NULL,                                           -- URL plus position (#row=N)
    reason     text NOT NULL,
    excerpt    text NOT NULL DEFAULT '',
    PRIMARY KEY (source_id, locator, reason)
);

-- Per-source licensing (OenoBench Table 16): what a release must credit and may redistribute.
CREATE TABLE source_licences (
    source_id      text PRIMARY KEY REFERENCES sources(source_id) ON DELETE CASCADE,
    licence        text NOT NULL,
    licence_url    text NOT NULL DEFAULT '',
    attribution    text NOT NULL,
    redistribution text NOT NULL CHECK (redistribution IN ('allowed', 'attribution', 'share_alike', 'tests_only')),
    basis          text NOT NULL DEFAULT '',
    homepage       text NOT NULL
);

CREATE VIEW source_licence_table AS
    SELECT s.spec, s.source_id, s.title, s.publisher, s.tier, l.licence, l.licence_url, l.attribution,
           l.redistribution, l.basis, l.homepage, count(d.document_id) AS documents
    FROM sources s JOIN source_licences l USING (source_id) LEFT JOIN documents d USING (source_id)
    GROUP BY s.spec, s.source_id, s.title, s.publisher, s.tier, l.licence, l.licence_url, l.attribution,
             l.redistribution, l.basis, l.homepage;

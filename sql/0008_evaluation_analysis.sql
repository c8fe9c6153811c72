-- 0008: evaluation telemetry per answer, and the analyses' results.

-- Per-answer telemetry (OenoBench E.4): tokens, latency and cost of the call(s) behind an answer, summed over
-- the retry of the five-stop protocol when there was one. Imported and baseline answers keep the defaults.
ALTER TABLE evaluation_answers
    ADD COLUMN input_tokens     integer NOT NULL DEFAULT 0,
    ADD COLUMN output_tokens    integer NOT NULL DEFAULT 0,
    ADD COLUMN reasoning_tokens integer NOT NULL DEFAULT 0,
    ADD COLUMN latency_ms       double precision NOT NULL DEFAULT 0,
    ADD COLUMN cost_usd         double precision NOT NULL DEFAULT 0,
    ADD COLUMN retried          boolean NOT NULL DEFAULT false;

CREATE INDEX evaluation_runs_spec ON evaluation_runs (spec, discipline);

-- Accuracy with its bootstrap 95% CI per configuration, overall (grouping 'overall', group_value '') and per item
-- group (discipline, taxonomy level, difficulty, strategy, ...). Accuracies are in percent.
CREATE TABLE analysis_accuracy (
    spec        text NOT NULL,
    grouping    text NOT NULL,
    group_value text NOT NULL,
    model       text NOT NULL,
    n_items     integer NOT NULL,
    accuracy    double precision NOT NULL,
    ci_low      double precision NOT NULL,
    ci_high     double precision NOT NULL,
    rank        integer,                        -- overall only
    PRIMARY KEY (spec, grouping, group_value, model)
);

-- Every other analysis table (ranking stability, pairwise resolvability, tiers, discrimination indices,
-- self-preference, family matrix, reasoning lift, tool-use deltas, closed-book slices, cost frontier, scaling,
-- telemetry), one row per table row, in the table's order.
CREATE TABLE analysis_tables (
    spec      text NOT NULL,
    name      text NOT NULL,
    row_index integer NOT NULL,
    row       jsonb NOT NULL,
    PRIMARY KEY (spec, name, row_index)
);

-- Plots as PNG bytes (reproducible: same data, same bytes).
CREATE TABLE analysis_plots (
    spec   text NOT NULL,
    name   text NOT NULL,
    png    bytea NOT NULL,
    sha256 text NOT NULL CHECK (encode(sha256(png), 'hex') = sha256),
    PRIMARY KEY (spec, name)
);

-- 0007: audit (issue 8). Findings remember what they judged (input_hash) and whether they were reused from an earlier
-- run (carried_from), so a re-audit re-judges exactly the changed items; agents that did not run say why; corpus-level
-- verdicts; gold-sheet items for calibration; per-agent kappa; and the drop / relabel / disclose policy per run.

ALTER TABLE audit_findings ADD COLUMN input_hash text NOT NULL DEFAULT '';
ALTER TABLE audit_findings ADD COLUMN carried_from bigint;   -- the audit run that judged it; NULL: judged in this run
CREATE INDEX audit_findings_run_agent ON audit_findings (audit_run_id, agent);

-- An agent that did not run (no judge models, not escalated, too little data) is recorded here, never as a pass.
CREATE TABLE audit_skips (
    audit_run_id   bigint NOT NULL REFERENCES audit_runs(audit_run_id) ON DELETE CASCADE,
    agent          text NOT NULL,
    agent_version  text NOT NULL,
    reason         text NOT NULL,
    PRIMARY KEY (audit_run_id, agent, agent_version)
);

-- Corpus-level verdicts (A2 test statistics, A4 held-out AUC, D1 self-preference, D3 skew).
CREATE TABLE audit_corpus_findings (
    audit_run_id   bigint NOT NULL REFERENCES audit_runs(audit_run_id) ON DELETE CASCADE,
    agent          text NOT NULL,
    agent_version  text NOT NULL,
    severity       text NOT NULL CHECK (severity IN ('pass', 'warn', 'fail')),
    payload        jsonb NOT NULL DEFAULT '{}'::jsonb,
    PRIMARY KEY (audit_run_id, agent, agent_version)
);

-- The audited questions of an imported gold sheet (its ratings are in gold_labels under the same sheet name).
CREATE TABLE gold_items (
    sheet          text NOT NULL,
    item_ref       text NOT NULL,
    question       text NOT NULL,
    options        jsonb NOT NULL,
    answer_index   smallint NOT NULL,
    facts          jsonb NOT NULL,
    difficulty     text,
    strategy       text,
    generator      text,
    stratum        text NOT NULL DEFAULT '',
    PRIMARY KEY (sheet, item_ref)
);

-- Cohen's kappa of an agent version against each matching rubric (bootstrap CI); advisory agents do not drop items.
CREATE TABLE audit_calibrations (
    spec           text NOT NULL,
    agent          text NOT NULL,
    agent_version  text NOT NULL,
    rubric         text NOT NULL,
    n              integer NOT NULL,
    agent_flags    integer NOT NULL,
    human_defects  integer NOT NULL,
    kappa          double precision,            -- NULL when undefined (a constant rater)
    ci_low         double precision,
    ci_high        double precision,
    is_primary     boolean NOT NULL,            -- the rubric that decides advisory status
    advisory       boolean NOT NULL,
    PRIMARY KEY (spec, agent, agent_version, rubric)
);

-- What the policy does to each item of a run, and why: the release reads this.
CREATE TABLE audit_policy (
    audit_run_id   bigint NOT NULL REFERENCES audit_runs(audit_run_id) ON DELETE CASCADE,
    item_id        text NOT NULL REFERENCES items(item_id) ON DELETE CASCADE,
    action         text NOT NULL CHECK (action IN ('drop', 'relabel', 'disclose')),
    reason         text NOT NULL,
    detail         jsonb NOT NULL DEFAULT '{}'::jsonb,
    PRIMARY KEY (audit_run_id, item_id, action)
);

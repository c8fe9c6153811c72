-- 0410 (issues 40 item 2, 41): which stored run of a digest-keyed stage is current. The audit (audit_runs, keyed by
-- its inputs' digest) and the anchors (anchor_imports, keyed by the files' content hash) reuse an earlier run when
-- the inputs match one seen before; "the latest id" is then not the run the inputs describe (change an input, run,
-- change it back, run: the latest run is the changed input's). The stage that reuses or writes a run points here.
CREATE TABLE current_runs (
    spec           text NOT NULL,
    stage          text NOT NULL CHECK (stage IN ('audit', 'anchors')),
    partition_key  text NOT NULL,               -- the discipline
    run_id         bigint NOT NULL,             -- audit_runs.audit_run_id / anchor_imports.import_id
    made_current_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (spec, stage, partition_key)
);

-- a database built before this migration: the latest run was the current one
INSERT INTO current_runs (spec, stage, partition_key, run_id)
SELECT spec, 'audit', discipline, max(audit_run_id) FROM audit_runs GROUP BY spec, discipline;
INSERT INTO current_runs (spec, stage, partition_key, run_id)
SELECT spec, 'anchors', discipline, max(import_id) FROM anchor_imports GROUP BY spec, discipline;

-- a run written for new inputs is current at once (whoever inserts it); a reused run is made current by its stage
CREATE FUNCTION make_run_current() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO current_runs (spec, stage, partition_key, run_id)
    VALUES (NEW.spec, TG_ARGV[0], NEW.discipline, (to_jsonb(NEW) ->> TG_ARGV[1])::bigint)
    ON CONFLICT (spec, stage, partition_key) DO UPDATE SET run_id = EXCLUDED.run_id, made_current_at = now();
    RETURN NEW;
END $$;
CREATE TRIGGER audit_runs_current AFTER INSERT ON audit_runs FOR EACH ROW
    EXECUTE FUNCTION make_run_current('audit', 'audit_run_id');
CREATE TRIGGER anchor_imports_current AFTER INSERT ON anchor_imports
    FOR EACH ROW EXECUTE FUNCTION make_run_current('anchors', 'import_id');

CREATE VIEW current_audit_runs AS
SELECT c.spec, c.partition_key AS discipline, c.run_id AS audit_run_id
FROM current_runs c JOIN audit_runs a ON a.audit_run_id = c.run_id WHERE c.stage = 'audit';

CREATE VIEW current_anchor_imports AS
SELECT c.spec, c.partition_key AS discipline, c.run_id AS import_id
FROM current_runs c JOIN anchor_imports a ON a.import_id = c.run_id WHERE c.stage = 'anchors';

-- what the release, evaluation and analysis see: the current audit run's survivors (was: the latest run's)
CREATE OR REPLACE VIEW release_candidates AS
SELECT i.spec, i.discipline, i.item_id, coalesce(r.detail ->> 'to', i.difficulty) AS difficulty,
       EXISTS (SELECT 1 FROM selected_items s WHERE s.spec = i.spec AND s.discipline = i.discipline
               AND s.item_id = i.item_id) AS selected,
       (SELECT m.manual_review FROM selections m WHERE m.spec = i.spec AND m.discipline = i.discipline
        AND m.target = 'items') AS manual_review
FROM items i JOIN current_audit_runs a ON a.spec = i.spec AND a.discipline = i.discipline
LEFT JOIN audit_policy r ON r.audit_run_id = a.audit_run_id AND r.item_id = i.item_id AND r.action = 'relabel'
WHERE EXISTS (SELECT 1 FROM audit_findings f WHERE f.audit_run_id = a.audit_run_id AND f.item_id = i.item_id)
  AND NOT EXISTS (SELECT 1 FROM audit_policy p WHERE p.audit_run_id = a.audit_run_id AND p.item_id = i.item_id
                  AND p.action = 'drop');

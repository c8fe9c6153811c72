-- 0020 (issue 18): item banks and "the release is the selection".
-- Imported items are MCQs with any number of options (format 'mcq'); each keeps its provenance (bank file, its
-- sha256, row number, upstream id). `release_candidates` is the one definition of what may ship: the latest audit
-- run's survivors (no 'drop'), difficulty as the audit relabelled it, whether the after-audit selection chose the
-- item, and why its discipline went to manual review (if it did). Consumers ship `selected` items only, plus the
-- survivors of manual-review disciplines when the spec says so.

ALTER TABLE items DROP CONSTRAINT items_format_check;
ALTER TABLE items ADD CONSTRAINT items_format_check CHECK (format IN ('mcq4', 'pseudo_mcq10', 'mcq'));

CREATE TABLE item_bank_rows (
    item_id        text PRIMARY KEY REFERENCES items(item_id) ON DELETE CASCADE,
    spec           text NOT NULL,
    discipline     text NOT NULL,
    bank_id        text NOT NULL,
    file_name      text NOT NULL,
    file_sha256    text NOT NULL CHECK (length(file_sha256) = 64),
    row_number     integer NOT NULL CHECK (row_number > 0),
    upstream_id    text NOT NULL,
    category       text NOT NULL,               -- the file's category, mapped to `discipline` by the spec
    source         text NOT NULL,               -- upstream source of the item (e.g. MMLU-Pro's src)
    licence        text NOT NULL,
    attribution    text NOT NULL,
    stratum_key    text NOT NULL,               -- what the anchors' stratum map h sees
    metadata       jsonb NOT NULL DEFAULT '{}'::jsonb,
    UNIQUE (spec, bank_id, upstream_id)
);
CREATE INDEX item_bank_rows_partition ON item_bank_rows (spec, discipline);

CREATE VIEW release_candidates AS
WITH latest AS (
    SELECT DISTINCT ON (spec, discipline) spec, discipline, audit_run_id FROM audit_runs
    ORDER BY spec, discipline, audit_run_id DESC)
SELECT i.spec, i.discipline, i.item_id, coalesce(r.detail ->> 'to', i.difficulty) AS difficulty,
       EXISTS (SELECT 1 FROM selected_items s WHERE s.spec = i.spec AND s.discipline = i.discipline
               AND s.item_id = i.item_id) AS selected,
       (SELECT m.manual_review FROM selections m WHERE m.spec = i.spec AND m.discipline = i.discipline
        AND m.target = 'items') AS manual_review
FROM items i JOIN latest a ON a.spec = i.spec AND a.discipline = i.discipline
LEFT JOIN audit_policy r ON r.audit_run_id = a.audit_run_id AND r.item_id = i.item_id AND r.action = 'relabel'
WHERE EXISTS (SELECT 1 FROM audit_findings f WHERE f.audit_run_id = a.audit_run_id AND f.item_id = i.item_id)
  AND NOT EXISTS (SELECT 1 FROM audit_policy p WHERE p.audit_run_id = a.audit_run_id AND p.item_id = i.item_id
                  AND p.action = 'drop');

-- What a release ships (and what evaluation and analysis see): the selected candidates, plus the audit survivors of
-- disciplines in manual review when the spec includes them (release.include_manual_review).
CREATE FUNCTION released_items(p_spec text, p_include_manual_review boolean)
RETURNS TABLE (spec text, discipline text, item_id text, difficulty text)
LANGUAGE sql STABLE AS $$
    SELECT c.spec, c.discipline, c.item_id, c.difficulty FROM release_candidates c
    WHERE c.spec = p_spec AND (c.selected OR (p_include_manual_review AND c.manual_review IS NOT NULL))
$$;

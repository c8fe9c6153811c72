-- 0420 (issue 37): data flows forward. The anchors stage parses a discipline's files once and stores the parsed
-- import whole (AnchorSet as JSON, order and floats as parsed); centrality and selection read it from here instead of
-- parsing the files again. json, not jsonb: the text is kept as written, so it reads back to the same floats.
-- NULL for an import stored before this migration: the anchors asset fills it when it next meets the same files.
ALTER TABLE anchor_imports ADD COLUMN anchor_set json;

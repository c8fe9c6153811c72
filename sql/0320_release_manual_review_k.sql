-- 0320 (issue 32): a discipline whose selection went to manual review, released on request
-- (release.include_manual_review), still respects its K_d when its anchors gave one (selections.import_id set): its
-- audit survivors are released up to K_d, in item-id order. Without anchors there is no K_d: every survivor ships.

CREATE OR REPLACE FUNCTION released_items(p_spec text, p_include_manual_review boolean)
RETURNS TABLE (spec text, discipline text, item_id text, difficulty text)
LANGUAGE sql STABLE AS $$
    SELECT c.spec, c.discipline, c.item_id, c.difficulty
    FROM (SELECT x.*, row_number() OVER (PARTITION BY x.discipline ORDER BY x.item_id) AS n
          FROM release_candidates x WHERE x.spec = p_spec) c
    LEFT JOIN selections m ON m.spec = c.spec AND m.discipline = c.discipline AND m.target = 'items'
    WHERE c.selected OR (p_include_manual_review AND c.manual_review IS NOT NULL
                         AND (m.import_id IS NULL OR c.n <= m.k_total))
$$;

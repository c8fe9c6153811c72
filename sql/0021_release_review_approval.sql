-- 0021 (issue 18): where the spec enables expert review for the release, only items the review tournament approved
-- ship: the committee's latest decision on the item is 'approved'. released_items gains that switch (3 arguments).

CREATE FUNCTION released_items(p_spec text, p_include_manual_review boolean, p_require_review_approval boolean)
RETURNS TABLE (spec text, discipline text, item_id text, difficulty text)
LANGUAGE sql STABLE AS $$
    SELECT r.spec, r.discipline, r.item_id, r.difficulty FROM released_items(p_spec, p_include_manual_review) r
    WHERE NOT p_require_review_approval OR (
        SELECT d.decision FROM review_committee_decisions d WHERE d.item_id = r.item_id
        ORDER BY d.round DESC LIMIT 1) = 'approved'
$$;

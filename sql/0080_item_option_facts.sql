-- 0080: option-level provenance (issue 24). Per option of an item, the facts that prove its truth value for the
-- stem (the key: that it is right; a distractor: that it is wrong). Written by generation, checked by the audit's
-- G1_grounding agent, shipped as options.parquet's proving_fact_ids.

CREATE TABLE item_option_facts (
    item_id        text NOT NULL REFERENCES items(item_id) ON DELETE CASCADE,
    position       smallint NOT NULL,            -- index into items.options
    fact_id        text NOT NULL REFERENCES facts(fact_id) ON DELETE CASCADE,
    PRIMARY KEY (item_id, position, fact_id)
);
CREATE INDEX item_option_facts_fact ON item_option_facts (fact_id);

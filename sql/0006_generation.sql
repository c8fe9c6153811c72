-- 0006: generation (issue 7). Per-option explanations of 10-option pseudo-MCQs (KINA E.2.3) and the closed-book
-- reserve pool (OenoBench B.4): solvable items over the corpus cap, kept out of `items` but not thrown away.

CREATE TABLE item_option_explanations (
    item_id        text NOT NULL REFERENCES items(item_id) ON DELETE CASCADE,
    position       smallint NOT NULL,            -- index into items.options
    explanation    text NOT NULL,
    sources        jsonb NOT NULL,               -- fact ids the explanation rests on
    PRIMARY KEY (item_id, position)
);

CREATE TABLE generation_reserve (
    item_id        text PRIMARY KEY,             -- the id the item would have in `items`
    spec           text NOT NULL,
    discipline     text NOT NULL,
    strategy       text NOT NULL,
    generator      text NOT NULL,
    gate_result    text NOT NULL,
    item           jsonb NOT NULL                -- the whole item: question, options, answer, facts, parameters
);
CREATE INDEX generation_reserve_partition ON generation_reserve (spec, discipline);

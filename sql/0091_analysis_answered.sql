-- Issue 31: a missing answer is not a wrong one. Per model and group: items answered, missing, answered with no
-- extractable option (unparsed: scored wrong), the accuracy over the answered items with its bootstrap CI, and on
-- the overall rows of an item bank the bank-level estimate (analysis/irt.py) with its interval.
ALTER TABLE analysis_accuracy
    ADD COLUMN answered integer,
    ADD COLUMN missing integer,
    ADD COLUMN unparsed integer,
    ADD COLUMN answered_accuracy double precision,
    ADD COLUMN answered_ci_low double precision,
    ADD COLUMN answered_ci_high double precision,
    ADD COLUMN pool_accuracy double precision,
    ADD COLUMN pool_ci_low double precision,
    ADD COLUMN pool_ci_high double precision;

-- 0430 (issue 41): the item bank pool's IRT fit, keyed by all it is a function of (the correctness matrix's bytes,
-- the priors and the source of analysis.irt.fit_irt). Any build whose pool answers did not change (every change of
-- anchors, selection or audit) reads it instead of fitting again: about 10 s of mmlu_pro's 15 s analysis.
-- bytea: the float64 arrays little-endian, bit for bit, so a read fit gives the release the bytes a fresh fit gives.
CREATE TABLE irt_pool_fits (
    fit_digest text PRIMARY KEY,
    discrimination bytea NOT NULL,
    intercept bytea NOT NULL,
    abilities bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- 0005: KINA Appendix B. Anchor imports gain their labels, strata and K_d; signatures psi(q), support-centrality
-- scores and pair scores per discipline; selections with their certificate (F(S), an upper bound on the optimum,
-- the certified ratio). Partition writes replace a (spec, discipline) partition's rows in one transaction.

ALTER TABLE anchor_imports
    ADD COLUMN k_total integer CHECK (k_total > 0),
    ADD COLUMN note text NOT NULL DEFAULT '',
    ADD COLUMN files text[] NOT NULL DEFAULT '{}';

ALTER TABLE anchors
    ADD COLUMN item_ref text,                   -- id of an anchor item (kind 'anchor_item') in its files
    ADD COLUMN weight double precision;         -- pi_a before normalisation

CREATE TABLE anchor_strata (
    import_id      bigint NOT NULL REFERENCES anchor_imports(import_id) ON DELETE CASCADE,
    name           text NOT NULL,
    omega          double precision NOT NULL CHECK (omega > 0),
    lower_quota    integer NOT NULL CHECK (lower_quota >= 0),
    upper_quota    integer NOT NULL CHECK (upper_quota >= lower_quota),
    keys           text[] NOT NULL DEFAULT '{}', -- candidate stratum keys h maps to this stratum ('*' = the rest)
    PRIMARY KEY (import_id, name)
);

CREATE TABLE anchor_item_labels (
    import_id      bigint NOT NULL REFERENCES anchor_imports(import_id) ON DELETE CASCADE,
    item_ref       text NOT NULL,
    text           text NOT NULL,
    src            text NOT NULL DEFAULT '',
    y_a            smallint NOT NULL CHECK (y_a IN (0, 1)),
    PRIMARY KEY (import_id, item_ref)
);

CREATE TABLE anchor_pair_labels (
    import_id      bigint NOT NULL REFERENCES anchor_imports(import_id) ON DELETE CASCADE,
    q_ref          text NOT NULL,
    u_ref          text NOT NULL,
    y_t            smallint NOT NULL CHECK (y_t IN (0, 1)),
    y_u            smallint NOT NULL CHECK (y_u IN (0, 1)),
    PRIMARY KEY (import_id, q_ref, u_ref)
);

-- One scoring of a discipline's pool; replaced as a whole when the partition is rematerialised.
CREATE TABLE centrality_runs (
    spec           text NOT NULL,
    discipline     text NOT NULL,
    import_id      bigint NOT NULL REFERENCES anchor_imports(import_id) ON DELETE CASCADE,
    params         jsonb NOT NULL,
    manual_review  text,                        -- why automatic selection was skipped (empty bank, no anchors), else NULL
    fallback_used  boolean NOT NULL,            -- psi came from deterministic features, not an LLM
    counts         jsonb NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (spec, discipline)
);

CREATE TABLE item_signatures (
    spec           text NOT NULL,
    discipline     text NOT NULL,
    item_id        text NOT NULL,               -- a fact or item id, or an anchor item's ref
    role           text NOT NULL CHECK (role IN ('candidate', 'anchor')),
    method_family  text NOT NULL,
    core_principle text NOT NULL,
    answer_type    text NOT NULL,
    constraints    text[] NOT NULL,
    raw_alignment  double precision NOT NULL,
    fallback       boolean NOT NULL,
    rechecked      boolean NOT NULL,
    PRIMARY KEY (spec, discipline, item_id),
    FOREIGN KEY (spec, discipline) REFERENCES centrality_runs(spec, discipline) ON DELETE CASCADE
);

CREATE TABLE centrality_scores (
    spec           text NOT NULL,
    discipline     text NOT NULL,
    item_id        text NOT NULL,
    role           text NOT NULL CHECK (role IN ('candidate', 'anchor')),
    stratum        text NOT NULL,
    a_hat          double precision NOT NULL,   -- calibrated alignment
    a_lq           double precision NOT NULL,   -- BootLQ_{delta_A}
    in_bank        boolean NOT NULL,            -- B_d
    in_bank_dedup  boolean NOT NULL,            -- B-bar_d
    mu             double precision NOT NULL,
    c_hat          double precision,            -- support centrality (candidates only)
    c_lq           double precision,            -- BootLQ_{delta_C}
    shortlisted    boolean NOT NULL,            -- in K_d
    PRIMARY KEY (spec, discipline, item_id),
    FOREIGN KEY (spec, discipline) REFERENCES centrality_runs(spec, discipline) ON DELETE CASCADE
);

CREATE TABLE centrality_pairs (
    spec           text NOT NULL,
    discipline     text NOT NULL,
    q_id           text NOT NULL,
    u_id           text NOT NULL,
    t_sym          double precision NOT NULL,
    u_sym          double precision NOT NULL,
    s              double precision NOT NULL,   -- [T_sym - lambda_dup U_sym]_+
    in_support     boolean NOT NULL,            -- {q, u} with u in G(q) or q in G(u); else a shortlist duplicate check
    PRIMARY KEY (spec, discipline, q_id, u_id),
    FOREIGN KEY (spec, discipline) REFERENCES centrality_runs(spec, discipline) ON DELETE CASCADE
);

-- A selection and its certificate. target 'facts' = topic pre-approval before generation, 'items' = after audit.
CREATE TABLE selections (
    spec           text NOT NULL,
    discipline     text NOT NULL,
    target         text NOT NULL CHECK (target IN ('facts', 'items')),
    import_id      bigint REFERENCES anchor_imports(import_id) ON DELETE SET NULL,
    method         text NOT NULL,               -- lazy_greedy | greedy | mip | ...+mip_bound | manual_review
    k_total        integer NOT NULL,
    objective      double precision,            -- F_d^sp(S)
    upper_bound    double precision,            -- proven bound on the constrained optimum
    certified_ratio double precision CHECK (certified_ratio BETWEEN 0 AND 1),
    gain_evaluations bigint NOT NULL DEFAULT 0,
    repairs        integer NOT NULL DEFAULT 0,
    stratum_counts jsonb NOT NULL DEFAULT '{}'::jsonb,
    manual_review  text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (spec, discipline, target)
);

CREATE TABLE selected_items (
    spec           text NOT NULL,
    discipline     text NOT NULL,
    item_id        text NOT NULL REFERENCES items(item_id) ON DELETE CASCADE,
    rank           integer NOT NULL,
    gain           double precision NOT NULL,
    PRIMARY KEY (spec, discipline, item_id)
);

-- 0011: two-reviewer double-blind review under the bonus-on-bar tournament (KINA 3.2, 4.1, App. C, 5.3).
-- Reviewers log in to the review web app; ratings also land in gold_labels (sheet 'review:<spec>:<discipline>')
-- for the audit stage's kappa calibration. Money is in the spec's currency units.

CREATE TABLE review_reviewers (
    reviewer_id        text PRIMARY KEY,                 -- login name; never shown to another reviewer
    role               text NOT NULL CHECK (role IN ('reviewer', 'admin')),
    password_hash      text NOT NULL,                    -- scrypt$n$r$p$salt$hash, never the password
    disciplines        text[] NOT NULL DEFAULT '{}',
    affiliation        text NOT NULL DEFAULT '',
    exam_round1_passed boolean NOT NULL DEFAULT false,   -- discipline depth test (KINA 4.1, E.1)
    exam_round2_passed boolean NOT NULL DEFAULT false,   -- one-shot formal item simulation
    whitelisted        boolean NOT NULL DEFAULT true,
    declared_conflicts text[] NOT NULL DEFAULT '{}',
    created_at         timestamptz NOT NULL DEFAULT now()
);

-- Only a hash of the session token is stored; a stolen table does not log anyone in.
CREATE TABLE review_sessions (
    token_hash     text PRIMARY KEY,
    reviewer_id    text NOT NULL REFERENCES review_reviewers(reviewer_id) ON DELETE CASCADE,
    csrf_token     text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL
);
CREATE INDEX review_sessions_reviewer ON review_sessions (reviewer_id);

-- blind_id is the only handle a reviewer ever sees: random, and it names one (item, reviewer, round).
CREATE TABLE review_assignments (
    assignment_id  bigserial PRIMARY KEY,
    blind_id       text NOT NULL UNIQUE,
    spec           text NOT NULL,
    discipline     text NOT NULL,
    item_id        text NOT NULL REFERENCES items(item_id) ON DELETE CASCADE,
    reviewer_id    text NOT NULL REFERENCES review_reviewers(reviewer_id) ON DELETE CASCADE,
    round          integer NOT NULL DEFAULT 1 CHECK (round >= 1),
    phase          text NOT NULL DEFAULT 'tournament' CHECK (phase IN ('flat', 'tournament')),
    assigned_at    timestamptz NOT NULL DEFAULT now(),
    opened_at      timestamptz,
    UNIQUE (item_id, reviewer_id, round)
);
CREATE INDEX review_assignments_partition ON review_assignments (spec, discipline);
CREATE INDEX review_assignments_reviewer ON review_assignments (reviewer_id);

CREATE TABLE review_ratings (
    assignment_id   bigint PRIMARY KEY REFERENCES review_assignments(assignment_id) ON DELETE CASCADE,
    scores          jsonb NOT NULL,                     -- rubric -> 1..5, the six rubrics of KINA 4.1
    verdict         text NOT NULL CHECK (verdict IN ('approve', 'revise', 'reject', 'escalate')),
    comment         text NOT NULL DEFAULT '',
    seconds_on_page double precision NOT NULL CHECK (seconds_on_page >= 0),
    submitted_at    timestamptz NOT NULL DEFAULT now()
);

-- The principal's validated rubric reference for an item's round: what S_i measures agreement with.
CREATE TABLE review_validations (
    item_id        text NOT NULL REFERENCES items(item_id) ON DELETE CASCADE,
    round          integer NOT NULL,
    reference      jsonb NOT NULL,
    validator      text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (item_id, round)
);

-- Core-committee arbitration of escalated items (E.3).
CREATE TABLE review_committee_decisions (
    item_id        text NOT NULL REFERENCES items(item_id) ON DELETE CASCADE,
    round          integer NOT NULL,
    decision       text NOT NULL CHECK (decision IN ('approved', 'revise', 'rejected')),
    decided_by     text NOT NULL,
    note           text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (item_id, round)
);

-- Stochastic principal audit of approved items; flawed is NULL until the principal has looked.
CREATE TABLE review_audits (
    item_id        text NOT NULL REFERENCES items(item_id) ON DELETE CASCADE,
    round          integer NOT NULL,
    spec           text NOT NULL,
    discipline     text NOT NULL,
    selected_at    timestamptz NOT NULL DEFAULT now(),
    flawed         boolean,
    auditor        text,
    note           text NOT NULL DEFAULT '',
    PRIMARY KEY (item_id, round)
);

CREATE TABLE review_appeals (
    appeal_id      bigserial PRIMARY KEY,
    item_id        text NOT NULL REFERENCES items(item_id) ON DELETE CASCADE,
    from_round     integer NOT NULL,
    evidence       text NOT NULL CHECK (length(btrim(evidence)) > 0),
    filed_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (item_id, from_round)
);

-- The payout ledger: replaced per (spec, discipline) by each settlement, in one transaction.
CREATE TABLE review_ledger (
    spec            text NOT NULL,
    discipline      text NOT NULL,
    reviewer_id     text NOT NULL,
    item_id         text NOT NULL,
    round           integer NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('base', 'bonus', 'penalty')),
    amount          numeric(12, 2) NOT NULL,
    validated_score double precision,
    PRIMARY KEY (spec, discipline, reviewer_id, item_id, round, kind)
);

-- Per-discipline bonus calibration (Corollary 1) and the Table 5 metrics, replaced per partition.
CREATE TABLE review_calibrations (
    spec           text NOT NULL,
    discipline     text NOT NULL,
    calibration    jsonb NOT NULL,
    PRIMARY KEY (spec, discipline)
);

CREATE TABLE review_metrics (
    spec           text NOT NULL,
    discipline     text NOT NULL,
    phase          text NOT NULL,
    metric         text NOT NULL,
    k              integer NOT NULL,
    n              integer NOT NULL,
    rate           double precision,
    ci_low         double precision,
    ci_high        double precision,
    PRIMARY KEY (spec, discipline, phase, metric)
);

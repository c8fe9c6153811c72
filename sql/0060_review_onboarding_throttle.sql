-- 0060: review onboarding and login safety (issues 23, 22.7).
-- The two exam rounds of KINA 4.1 / E.1 are recorded per discipline (a depth test is discipline-specific), with who
-- recorded them and when; a reviewer's certification level (OenoBench App. D); failed logins per account and per
-- client address, for the backoff of the login form.

CREATE TABLE review_exams (
    reviewer_id   text NOT NULL REFERENCES review_reviewers(reviewer_id) ON DELETE CASCADE,
    discipline    text NOT NULL,
    round         smallint NOT NULL CHECK (round IN (1, 2)),  -- 1: discipline depth test, 2: one-shot item simulation
    passed        boolean NOT NULL,
    recorded_by   text NOT NULL,
    recorded_at   timestamptz NOT NULL DEFAULT now(),
    note          text NOT NULL DEFAULT '',
    PRIMARY KEY (reviewer_id, discipline, round)
);

-- The earlier all-disciplines exam flags become per-discipline records, then go.
INSERT INTO review_exams (reviewer_id, discipline, round, passed, recorded_by, note)
SELECT r.reviewer_id, d.discipline, x.round,
       CASE x.round WHEN 1 THEN r.exam_round1_passed ELSE r.exam_round2_passed END, 'migration 0060',
       'carried over from the account-wide exam flags'
FROM review_reviewers r CROSS JOIN LATERAL unnest(r.disciplines) AS d(discipline)
CROSS JOIN (VALUES (1), (2)) AS x(round);
ALTER TABLE review_reviewers DROP COLUMN exam_round1_passed, DROP COLUMN exam_round2_passed;

ALTER TABLE review_reviewers ADD COLUMN level text NOT NULL DEFAULT '';

-- Consecutive failed logins; a success clears the account's row. locked_until is when the next attempt is heard.
CREATE TABLE review_login_failures (
    scope           text NOT NULL CHECK (scope IN ('account', 'address')),
    key             text NOT NULL,
    failures        integer NOT NULL CHECK (failures > 0),
    last_failure_at timestamptz NOT NULL DEFAULT now(),
    locked_until    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, key)
);

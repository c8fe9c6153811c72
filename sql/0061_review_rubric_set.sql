-- 0061: each rating and validation records the rubric set it was scored on (review.policy.rubric_set), so a spec that
-- switches sets never settles one scale against another: settlement reads only the current set's scores.
ALTER TABLE review_ratings ADD COLUMN rubric_set text NOT NULL DEFAULT 'kina6';
ALTER TABLE review_validations ADD COLUMN rubric_set text NOT NULL DEFAULT 'kina6';

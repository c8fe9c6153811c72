-- 0070: an item selection records what its response-pattern term did (issue 19): whether models' answers entered the
-- objective, and the held-out validation over model splits (expected Kendall tau and accuracy error of the subset
-- on models it never saw, next to stratified random subsets of the same size). NULL for fact selections and for
-- selections written before this column existed.
ALTER TABLE selections ADD COLUMN response jsonb;

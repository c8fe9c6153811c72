-- Answers from which no option was extracted, per model and group: they score 0 like a wrong answer, and the
-- leaderboard says how many there were (MMLU-Pro's published answers leave up to 27% of a model's items unparsed).
ALTER TABLE analysis_accuracy ADD COLUMN unparsed_answers integer NOT NULL DEFAULT 0;

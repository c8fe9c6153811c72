"""Evaluation core: evaluators and importers producing one per-item results frame (no Dagster here)."""

from benchmark_platform.evaluation.answering import AnswerProtocol, parse_letter, render_question
from benchmark_platform.evaluation.importers import (
    read_inspect_log,
    read_lm_eval_samples,
    read_mmlu_pro_items,
    read_mmlu_pro_matrices,
    read_mmlu_pro_outputs,
)
from benchmark_platform.evaluation.items import LETTERS, EvalItem
from benchmark_platform.evaluation.results import RESULT_COLUMNS, RESULT_SCHEMA, empty_results, validate_results
from benchmark_platform.evaluation.runners import (
    AnswerReply,
    AnswerRequest,
    ModelSlate,
    evaluate_by_likelihood,
    evaluate_generative,
    random_baseline,
    telemetry_summary,
)

__all__ = [
    "LETTERS",
    "RESULT_COLUMNS",
    "RESULT_SCHEMA",
    "AnswerProtocol",
    "AnswerReply",
    "AnswerRequest",
    "EvalItem",
    "ModelSlate",
    "empty_results",
    "evaluate_by_likelihood",
    "evaluate_generative",
    "parse_letter",
    "random_baseline",
    "read_inspect_log",
    "read_lm_eval_samples",
    "read_mmlu_pro_items",
    "read_mmlu_pro_matrices",
    "read_mmlu_pro_outputs",
    "render_question",
    "telemetry_summary",
    "validate_results",
]

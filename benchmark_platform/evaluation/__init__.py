"""Evaluation core: evaluators and importers producing one per-item results frame (no Dagster here)."""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.evaluation.answering import AnswerProtocol
    from benchmark_platform.evaluation.importers import read_import_once, read_results_import, read_spec_imports
    from benchmark_platform.evaluation.items import LETTERS
    from benchmark_platform.evaluation.persist import EvaluationRun, spec_item_disciplines
    from benchmark_platform.evaluation.results import RESULT_COLUMNS, validate_results
    from benchmark_platform.evaluation.run import ResultsImportError, evaluate_discipline
    from benchmark_platform.evaluation.runners import telemetry_summary
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "AnswerProtocol",
    "EvaluationRun",
    "LETTERS",
    "RESULT_COLUMNS",
    "ResultsImportError",
    "evaluate_discipline",
    "read_import_once",
    "read_results_import",
    "read_spec_imports",
    "spec_item_disciplines",
    "telemetry_summary",
    "validate_results",
]

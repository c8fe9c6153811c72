"""Analysis core: every statistic KINA and OenoBench report, as pure functions over a score matrix.

All accuracies and gaps are in percentage points; every random procedure takes an explicit seed.
"""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.analysis.fidelity import holdout_validation
    from benchmark_platform.analysis.irt import correctness_matrix, fit_irt
    from benchmark_platform.analysis.run import (
        NoAnswersError,
        analyse_spec,
        evaluation_tables,
        report_tables,
        telemetry_table,
    )
    from benchmark_platform.analysis.stability import resolvability_summary
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "NoAnswersError",
    "analyse_spec",
    "correctness_matrix",
    "evaluation_tables",
    "fit_irt",
    "holdout_validation",
    "report_tables",
    "resolvability_summary",
    "telemetry_table",
]

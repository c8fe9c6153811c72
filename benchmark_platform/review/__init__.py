"""Two-reviewer double-blind review under KINA's bonus-on-bar tournament (KINA 3.2, 4.1, Appendix C, 5.3).

Pure core: rubrics and validated scores (:mod:`.rubrics`), allocation (:mod:`.assignment`), decisions, bonus,
audits, appeals and the ledger (:mod:`.workflow`), bonus calibration (:mod:`.calibration`), the Monte Carlo of
Theorem 1 (:mod:`.game`), KINA Table 5 (:mod:`.metrics`), a simulated round (:mod:`.simround`). The web app for
reviewers is :mod:`.web`; database access is :mod:`.persist`.
"""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.review.calibration import calibrate, pilot_from_logs
    from benchmark_platform.review.metrics import logs_from_pairs, table5
    from benchmark_platform.review.persist import (
        ReviewerChange,
        add_reviewer,
        assign_partition,
        edit_reviewer,
        file_appeal,
        load_reviewers,
        plan_assignments,
        rating_pairs,
        settle_partition,
        store_calibration,
        store_metrics,
        validated_reviews,
    )
    from benchmark_platform.review.simround import SimulationConfig, simulate_review_round
    from benchmark_platform.review.web import ReviewSite, create_app, server_config
    from benchmark_platform.review.workflow import EntryKind, settlement_text
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "EntryKind",
    "ReviewSite",
    "ReviewerChange",
    "SimulationConfig",
    "add_reviewer",
    "assign_partition",
    "calibrate",
    "create_app",
    "edit_reviewer",
    "file_appeal",
    "load_reviewers",
    "logs_from_pairs",
    "pilot_from_logs",
    "plan_assignments",
    "rating_pairs",
    "server_config",
    "settle_partition",
    "settlement_text",
    "simulate_review_round",
    "store_calibration",
    "store_metrics",
    "table5",
    "validated_reviews",
]

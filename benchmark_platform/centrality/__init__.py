"""Support centrality under domain alignment (KINA Appendix B): signatures, calibrated alignment, reference bank,
neighbourhoods, pair scores, C_d with bootstrap lower quantiles, the shortlist and the selection problem."""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.centrality.models import Candidate
    from benchmark_platform.centrality.persist import read_scores, stored_review
    from benchmark_platform.centrality.run import (
        NO_FACT_POOL,
        ScoredPool,
        score_facts,
        score_pool,
        scoring_version,
        signature_model,
    )
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "Candidate",
    "NO_FACT_POOL",
    "ScoredPool",
    "read_scores",
    "score_facts",
    "score_pool",
    "scoring_version",
    "signature_model",
    "stored_review",
]

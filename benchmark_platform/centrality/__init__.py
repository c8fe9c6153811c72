"""Support centrality under domain alignment (KINA Appendix B): signatures, calibrated alignment, reference bank,
neighbourhoods, pair scores, C_d with bootstrap lower quantiles and the shortlist (scores only: the
selection stage chooses from them)."""

from benchmark_platform.centrality.models import Candidate, Signature
from benchmark_platform.centrality.params import CentralityParams
from benchmark_platform.centrality.scoring import CentralityResult, score_discipline
from benchmark_platform.centrality.signature import SignatureError, fallback_signatures, llm_signatures

__all__ = [
    "Candidate",
    "CentralityParams",
    "CentralityResult",
    "Signature",
    "SignatureError",
    "fallback_signatures",
    "llm_signatures",
    "score_discipline",
]

"""Selection settings in a benchmark spec."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from benchmark_platform.centrality.params import CentralityParams


class SelectionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # K_d comes from each discipline's anchor files (anchors.yaml `k_total`), not from here.
    centrality: CentralityParams = Field(default_factory=CentralityParams)  # KINA Appendix B thresholds and sizes
    # psi(q) and A~_d(q) by this model config (one of the spec's `models`), one call per item through the LLM
    # gateway; None: deterministic features stand in, and the centrality run says so (fallback_used)
    signature_model: str | None = None

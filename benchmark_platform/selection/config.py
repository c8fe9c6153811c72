"""Selection settings in a benchmark spec."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from benchmark_platform.centrality.params import CentralityParams


class SelectionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # K_d comes from each discipline's anchor files (anchors.yaml `k_total`), not from here.
    centrality: CentralityParams = Field(default_factory=CentralityParams)  # KINA Appendix B thresholds and sizes

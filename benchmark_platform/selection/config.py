"""Selection settings in a benchmark spec."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from benchmark_platform.centrality.params import CentralityParams


class SelectionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Read only by the foundation's baseline cover (selection/baseline.py); the KINA selection takes K_d from each
    # discipline's anchor files (anchors.yaml `k_total`).
    facts_per_discipline: int = 40
    centrality: CentralityParams = Field(default_factory=CentralityParams)  # KINA Appendix B thresholds and sizes

"""Selection settings in a benchmark spec."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchmark_platform.centrality.config import CentralityParams


class ResponseTermConfig(BaseModel):
    """The response-pattern term added to F_d^sp when models' answers exist for the pool (selection/response.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Objective = F_d^sp + w * R(S) with w = weight * max(1, (small_budget_items / K_d)^2); F_d^sp and R both top out
    # near 1. 0 switches the term off. The boost: a discipline selecting few items must rank models from few answers,
    # and answer patterns are what separates models, while a large K_d needs the coverage terms' representativeness.
    # Chosen on tuning model splits (model_splits(29, 15, 20, seed=7), MMLU-Pro, not the bench's): K = 100 (K_d 4-11)
    # held-out tau with constant w = 2 / 6 / 20 / 50 / 200 was 0.843 / 0.844 / 0.871 / 0.866 / 0.868 (random 0.839);
    # K = 899 (K_d 37-101) with w = 0.5 / 2 / 20 was 0.958 / 0.957 / 0.936 (random 0.954). 24 keeps w = 2 from K_d = 24
    # up and gives w = 9.5-72 at K_d = 11-4; 0 keeps w = weight at every budget.
    weight: float = Field(default=2.0, ge=0)
    small_budget_items: float = Field(default=24.0, ge=0)
    neighbours: int = Field(default=50, ge=1, description="candidates kept per pool item in R's sparse similarity")
    # + information_weight / k^2 * the selected items' Fisher information about ability (selection/response.py):
    # it pays at small K (ranking from few items), fades at large K; 10 was chosen on tuning model splits
    # (model_splits(29, 15, 20, seed=7)), not on the selection_fidelity bench's. Off by default: it favours items
    # of middling difficulty for the answering models, so a release's raw accuracies drift from the bank's (MMLU-Pro,
    # 899 items: 3.2 points off on average with 10, 1.3 without; gemini-1.5-pro-002 75.3% against 70.1%), and raw
    # accuracy is what a leaderboard shows. A spec that ranks from a small K can turn it on.
    information_weight: float = Field(default=0.0, ge=0)
    # Held-out validation recorded with the selection: random model splits, share of models the selection sees,
    # stratified random subsets of the same size to compare with. 5 x 20 adds about 1 s of CPU per discipline of
    # ~1,000 candidates (measured on MMLU-Pro's math); 0 splits switches it off.
    validation_splits: int = Field(default=5, ge=0)
    validation_visible_share: float = Field(default=0.5, gt=0, lt=1)
    validation_random_subsets: int = Field(default=20, ge=1)


# The selection's settings that specs written before issue 37 gave under `selection.centrality`: still accepted there.
MOVED_FROM_CENTRALITY = ("tau_dup", "mip_max_candidates", "mip_time_limit_s")


class SelectionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # K_d comes from each discipline's anchor files (anchors.yaml `k_total`), not from here.
    centrality: CentralityParams = Field(default_factory=CentralityParams)  # KINA Appendix B thresholds and sizes
    # the duplicate bound of the selection; centrality's Dedup(B_d) and duplicate-pair count use the same threshold
    tau_dup: float = Field(default=0.5, ge=0, le=1, description="duplicate bound on U_sym inside the selection")
    mip_max_candidates: int = Field(default=300, ge=0, description="solve the exact MIP when |K_d| is at most this")
    mip_time_limit_s: float = Field(default=20.0, gt=0, description="MIP time limit; its dual bound still certifies")
    # psi(q) and A~_d(q) by this model config (one of the spec's `models`), one call per item through the LLM
    # gateway; None: deterministic features stand in, and the centrality run says so (fallback_used)
    signature_model: str | None = None
    response: ResponseTermConfig = Field(default_factory=ResponseTermConfig)

    @model_validator(mode="before")
    @classmethod
    def _accept_the_old_place(cls, data: Any) -> Any:
        """`selection.centrality.tau_dup` (and the MIP's two) as older specs wrote them: moved up, unless given twice."""
        if not isinstance(data, dict) or not isinstance(data.get("centrality"), dict):
            return data
        centrality = dict(data["centrality"])
        moved = {name: centrality.pop(name) for name in MOVED_FROM_CENTRALITY if name in centrality}
        twice = sorted(set(moved) & set(data))
        if twice:
            raise ValueError(
                f"{twice[0]} is given twice: under selection and under selection.centrality (its old place)"
            )
        return {**data, "centrality": centrality, **moved}

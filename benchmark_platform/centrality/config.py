"""Support-centrality hyperparameters of KINA Appendix B, one typed place (the spec embeds it as
`selection.centrality`). The selection's own settings (tau_dup, the MIP's) are in selection/config.py."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

FAISS_SEED = 20261129


class CentralityParams(BaseModel):
    """Thresholds and sizes of the support-centrality proxy; names follow KINA Appendix B."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    k_neighbours: int = Field(default=20, ge=1, description="k of N_k(q)")
    bootstrap: int = Field(default=50, ge=2, description="B, bootstrap refits behind BootLQ")
    delta_A: float = Field(default=0.1, gt=0, lt=1, description="quantile of BootLQ for A_d")
    delta_C: float = Field(default=0.1, gt=0, lt=1, description="quantile of BootLQ for C_d")
    alpha_ref: float = Field(default=0.5, ge=0, le=1, description="bank threshold on BootLQ(A_d)")
    alpha_A: float = Field(default=0.5, ge=0, le=1, description="shortlist threshold on BootLQ(A_d)")
    alpha_C: float = Field(default=0.02, ge=0, le=1, description="shortlist threshold on BootLQ(C_d)")
    lambda_dup: float = Field(default=1.0, ge=0, description="duplicate penalty in S_d = [T - lambda U]_+")
    difficulty_interval: tuple[float, float] = Field(
        default=(0.0, 1.0), description="I_d for D_d(q), the share of reference models answering q wrong"
    )
    calibrator: Literal["logistic", "isotonic"] = Field(default="logistic", description="form of Cal_A")
    uncertainty_band: float = Field(default=0.15, ge=0, le=0.5, description="|A~ - 1/2| below which psi is re-checked")
    recheck_share: float = Field(default=0.1, ge=0, le=1, description="rho: re-checks are at most rho * N_d")
    embedding_dim: int = Field(default=128, ge=2, description="size of the deterministic fallback embedding")
    seed: int = Field(default=0, description="seed of bootstraps and embeddings")
    faiss_seed: int = Field(
        default=FAISS_SEED,
        description="unused since neighbour search is exact (issue 30); kept so specs naming it load",
    )

    @model_validator(mode="after")
    def _interval(self) -> CentralityParams:
        low, high = self.difficulty_interval
        if not 0.0 <= low <= high <= 1.0:
            raise ValueError(f"difficulty_interval must satisfy 0 <= low <= high <= 1, got {self.difficulty_interval}")
        return self

    @model_serializer(mode="wrap")
    def _omit_default_faiss_seed(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The default seed is left out of dumps, so specs, code versions and releases made before the field existed
        keep their bytes; any other seed is recorded."""
        data: dict[str, Any] = handler(self)
        if data.get("faiss_seed") == FAISS_SEED:
            del data["faiss_seed"]
        return data

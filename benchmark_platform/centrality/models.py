"""Typed inputs and outputs of the support-centrality stage (KINA Appendix B)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Candidate(BaseModel):
    """One item of the raw pool Q~_d: a fact before generation or an audited question after it.

    `stratum_key` is what the stratum map h reads (e.g. a subfield or a source family); `difficulty` is D_d(q),
    the share of reference models answering q wrong, when known.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    src: str = ""
    stratum_key: str = Field(min_length=1)
    difficulty: float | None = Field(default=None, ge=0, le=1)
    metadata: dict[str, str] = Field(default_factory=dict)


class Signature(BaseModel):
    """psi(q) = (method family, core principle, answer type, constraints) and the raw alignment A~_d(q)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method_family: str
    core_principle: str
    answer_type: str
    constraints: tuple[str, ...] = ()
    raw_alignment: float = Field(ge=0, le=1)
    fallback: bool = Field(description="true when deterministic features stood in for the LLM")
    rechecked: bool = Field(default=False, description="true when the item was in the uncertainty set U_d")

    def as_text(self) -> str:
        """The signature as text, appended to x_q for e(q) = f_emb(x_q, psi(q))."""
        return "; ".join([self.method_family, self.core_principle, self.answer_type, *self.constraints])

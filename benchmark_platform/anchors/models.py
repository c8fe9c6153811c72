"""Typed anchor elicitation for one discipline (KINA 3.1 and Appendix B).

Experts provide the prototype Sigma_d = (M_d, P_d, T_d, C_d, A_d), item labels y_A, pair labels (y_T, y_U),
the stratum map h with weights omega_h and quotas L_h / U_h, and the selection size K_d.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Prototype(_Strict):
    """Sigma_d without its anchor items: short texts naming the discipline's canonical content."""

    methods: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    theorems: tuple[str, ...] = ()
    concepts: tuple[str, ...] = ()
    applications: tuple[str, ...] = ()

    def components(self) -> dict[str, tuple[str, ...]]:
        return {
            "methods": self.methods,
            "problems": self.problems,
            "theorems": self.theorems,
            "concepts": self.concepts,
            "applications": self.applications,
        }


class AnchorItem(_Strict):
    """An item of A_d: a reference item, never a final candidate. `weight` is pi_a before normalisation."""

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    src: str = ""
    stratum: str = Field(min_length=1)
    weight: float = Field(default=1.0, gt=0)


class LabelledItem(_Strict):
    """One row of L_d^item: y_A = 1 when the item belongs to (is aligned with) the discipline."""

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    src: str = ""
    y_A: int = Field(ge=0, le=1)


class PairLabel(_Strict):
    """One row of L_d^pair over ids of anchor or labelled items: y_T shared support, y_U near-duplicate risk."""

    q: str = Field(min_length=1)
    u: str = Field(min_length=1)
    y_T: int = Field(ge=0, le=1)
    y_U: int = Field(ge=0, le=1)

    @model_validator(mode="after")
    def _distinct(self) -> PairLabel:
        if self.q == self.u:
            raise ValueError(f"a pair needs two different items, got {self.q!r} twice")
        return self


class Stratum(_Strict):
    """A stratum h of H_d: weight omega_h > 0, quotas L_h <= count <= U_h, and the candidate keys that h maps here."""

    name: str = Field(min_length=1)
    omega: float = Field(gt=0, allow_inf_nan=False)
    lower: int = Field(ge=0)
    upper: int = Field(ge=0)
    keys: tuple[str, ...] = ()

    @field_validator("keys", mode="before")
    @classmethod
    def _split_keys(cls, value: object) -> object:
        if value is None:
            return ()
        if isinstance(value, str):
            return tuple(k.strip() for k in value.split(";") if k.strip())
        return value

    @model_validator(mode="after")
    def _ordered(self) -> Stratum:
        if self.upper < self.lower:
            raise ValueError(f"stratum {self.name!r}: upper {self.upper} < lower {self.lower}")
        return self


class AnchorSet(_Strict):
    """Everything experts elicited for one discipline, as imported from its files."""

    discipline: str = Field(min_length=1)
    version: str = Field(min_length=64, max_length=64, description="sha256 over the import's files")
    is_example: bool = Field(description="true for bundled examples, which are not expert-elicited")
    note: str = ""
    k_total: int = Field(gt=0, description="K_d, the size of the final selection")
    prototype: Prototype
    anchor_items: tuple[AnchorItem, ...]
    item_labels: tuple[LabelledItem, ...]
    pair_labels: tuple[PairLabel, ...]
    strata: tuple[Stratum, ...] = Field(min_length=1)
    files: tuple[str, ...] = Field(description="names of the files the import read")

    def stratum_map(self) -> dict[str, str]:
        """h as a dict from candidate stratum key to stratum name; a stratum's own name always maps to itself."""
        mapping = {s.name: s.name for s in self.strata}
        for s in self.strata:
            mapping.update({key: s.name for key in s.keys})
        return mapping

    def anchor_weights(self) -> dict[str, float]:
        """pi_a over A_d, normalised to sum to one."""
        total = sum(a.weight for a in self.anchor_items)
        return {a.id: a.weight / total for a in self.anchor_items}

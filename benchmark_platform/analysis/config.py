"""Analysis settings in a benchmark spec (KINA 5.2, 5.4; OenoBench 5, C)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, model_validator


class SuspectConfig(BaseModel):
    """The post-evaluation audit (OenoBench 4.3): key-error suspects among the released items."""

    model_config = ConfigDict(extra="forbid")

    # an item is judged only when at least this many models (the baseline not counted) answered it
    min_models: PositiveInt = 5
    # correctness vs the models' leave-one-out skill: a correlation under this is suspect (a mis-keyed item is
    # answered "correctly" by the weaker models)
    point_biserial_below: float = 0.0


class AnalysisConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bootstrap_samples: PositiveInt = 1000  # B, for every CI and the ranking-stability replications
    stability_rates: tuple[float, ...] = (0.5, 0.7, 0.9)  # subsample rates rho
    stability_top: PositiveInt = 10  # the top-k whose ranking Kendall's tau follows
    discrimination_top: PositiveInt = 10  # the top models over which discrimination indices are computed
    # The generation gate's verdict marking an item solvable closed-book (OenoBench B2); other gated items
    # form the contextual slice.
    closed_book_verdict: str = "closed_book_solvable"
    groupings: list[str] = Field(default_factory=lambda: ["difficulty", "strategy"])  # item attributes to break down
    # Issue 31: a model that answered less than this share of the items is unranked on the leaderboard, and a
    # heat-map cell with less than this share answered is drawn n/a (hatched grey) instead of a colour
    min_answered_share: float = 0.5
    suspects: SuspectConfig = Field(default_factory=SuspectConfig)

    @model_validator(mode="after")
    def _share(self) -> AnalysisConfig:
        if not 0 < self.min_answered_share <= 1:
            raise ValueError(f"analysis.min_answered_share must be in (0, 1], got {self.min_answered_share}")
        return self

"""Analysis settings in a benchmark spec (KINA 5.2, 5.4; OenoBench 5, C)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, PositiveInt


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

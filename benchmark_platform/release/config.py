"""Release settings in a benchmark spec."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ReleaseConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: str = Field(pattern=r"^v\d+\.\d+$")  # vX.Y
    licence: str
    # contamination control: a string that marks every released file, so crawled copies can be detected
    canary: str
    # share of items sealed into the encrypted test split (0: every item is in the open dev split); sealing needs
    # the release key (a Fernet key in the environment variable BENCHMARK_PLATFORM_RELEASE_KEY, never stored)
    test_share: float = Field(default=0.0, ge=0.0, lt=1.0)
    # a release ships the items the after-audit selection chose; a discipline whose selection went to manual review
    # (no anchors, empty bank, ...) ships nothing unless this is true (then: its audit survivors)
    include_manual_review: bool = False
    # with expert review enabled for the release, only items the review tournament approved ship (the committee's
    # latest decision per item is 'approved'); evaluation and analyses then see only those
    require_review_approval: bool = False

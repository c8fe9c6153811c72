"""A benchmark spec: one typed configuration (YAML validated by pydantic, extra="forbid") per benchmark.

Each stage owns the model of its own section (`<stage>/config.py`); this module composes them.
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchmark_platform.analysis.config import AnalysisConfig
from benchmark_platform.audit.config import AuditConfig
from benchmark_platform.automation.config import AutomationConfig
from benchmark_platform.evaluation.config import EvaluationConfig
from benchmark_platform.facts.config import FactsConfig
from benchmark_platform.generation.config import GenerationConfig
from benchmark_platform.ingest.config import SourceConfig
from benchmark_platform.itembank.config import ItemBankConfig
from benchmark_platform.llm.config import GatewaySettings, ModelConfig, provider_limits
from benchmark_platform.release.config import ReleaseConfig
from benchmark_platform.review.config import ReviewConfig
from benchmark_platform.selection.config import SelectionConfig


def slug(name: str) -> str:
    """A partition-key-safe identifier: Dagster keys may not contain commas or brackets."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


class TaxonomyNode(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    key: str | None = None  # partition key of a leaf; defaults to slug(name)
    items: int | None = None  # target item count, where the spec's source states one (KINA Table 8)
    children: list[TaxonomyNode] = Field(default_factory=list)

    @property
    def leaf_key(self) -> str:
        return self.key or slug(self.name)

    def leaves(self, path: tuple[str, ...] = ()) -> list[tuple[str, tuple[str, ...]]]:
        here = (*path, self.name)
        if not self.children:
            return [(self.leaf_key, here)]
        return [leaf for child in self.children for leaf in child.leaves(here)]


class BenchmarkSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str
    seed: int
    taxonomy: list[TaxonomyNode] = Field(min_length=1)
    sources: list[SourceConfig] = Field(default_factory=list)
    item_bank: ItemBankConfig | None = None  # existing items imported per discipline (itembank/config.py)
    facts: FactsConfig = Field(default_factory=FactsConfig)
    selection: SelectionConfig = Field(default_factory=SelectionConfig)
    models: list[ModelConfig] = Field(default_factory=list)  # model configs that stages name (llm/config.py)
    llm: GatewaySettings = Field(default_factory=GatewaySettings)  # cost cap, retries, breaker (llm/config.py)
    generation: GenerationConfig = Field(default_factory=GenerationConfig)
    audit: AuditConfig = Field(default_factory=AuditConfig)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    analysis: AnalysisConfig = Field(default_factory=AnalysisConfig)
    review: ReviewConfig = Field(default_factory=ReviewConfig)
    release: ReleaseConfig
    automation: AutomationConfig = Field(default_factory=AutomationConfig)

    # where the spec file lives; bundled data (snapshot/, anchors/) are resolved against it
    directory: Path = Field(default=Path("."), exclude=True)

    @field_validator("sources")
    @classmethod
    def _unique_sources(cls, sources: list[SourceConfig]) -> list[SourceConfig]:
        ids = [s.id for s in sources]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate source ids: {sorted({i for i in ids if ids.count(i) > 1})}")
        return sources

    @field_validator("models")
    @classmethod
    def _consistent_models(cls, models: list[ModelConfig]) -> list[ModelConfig]:
        names = [m.name for m in models]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate model names: {sorted({n for n in names if names.count(n) > 1})}")
        provider_limits(models)  # raises, naming the provider, when its configs state different limits
        return models

    @model_validator(mode="after")
    def _references_exist(self) -> BenchmarkSpec:
        keys = [key for key, _ in self.leaves]
        if len(set(keys)) != len(keys):
            raise ValueError(
                f"taxonomy leaves must have unique keys; repeated: {sorted({k for k in keys if keys.count(k) > 1})}"
            )
        known, sources = set(keys), {s.id for s in self.sources}
        for where, discipline in [
            *(("facts.lexicons", d) for d in self.facts.lexicons),
            *(("facts.templates", t.discipline) for t in self.facts.templates),
            *(("generation.templates", t.discipline) for t in self.generation.templates),
        ]:
            if discipline not in known:
                raise ValueError(f"{where}: unknown discipline {discipline!r} (taxonomy leaves: {sorted(known)})")
        if self.item_bank is not None:
            for category, leaf in self.item_bank.categories.items():
                if leaf not in known:
                    raise ValueError(f"item_bank.categories: {category!r} maps to unknown discipline {leaf!r}")
        for entry in self.evaluation.imports:
            if entry.item_bank is not None and (self.item_bank is None or entry.item_bank != self.item_bank.id):
                raise ValueError(f"evaluation.imports {entry.path}: item_bank {entry.item_bank!r} is not the spec's")
        for template in self.facts.templates:
            if template.source not in sources:
                raise ValueError(f"facts.templates: unknown source {template.source!r}")
        return self

    @cached_property
    def leaves(self) -> list[tuple[str, tuple[str, ...]]]:
        """(partition key, path from the root) of every taxonomy leaf, in spec order."""
        return [leaf for node in self.taxonomy for leaf in node.leaves()]

    @property
    def discipline_keys(self) -> list[str]:
        return [key for key, _ in self.leaves]

    @property
    def snapshot_dir(self) -> Path:
        return self.directory / "snapshot"

    @property
    def anchors_dir(self) -> Path:
        return self.directory / "anchors"

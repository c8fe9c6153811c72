"""A benchmark spec: one typed configuration (YAML validated by pydantic, extra="forbid") per benchmark.

Each stage owns the model of its own section (`<stage>/config.py`); this module composes them.
"""

from __future__ import annotations

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
from benchmark_platform.itembank.config import ItemBankConfig, bank_item_prefix
from benchmark_platform.keys import slug
from benchmark_platform.llm.config import GatewaySettings, ModelConfig, provider_limits
from benchmark_platform.release.config import ReleaseConfig
from benchmark_platform.review.config import ReviewConfig
from benchmark_platform.selection.config import SelectionConfig


class SpecReferenceError(ValueError):
    """Names one section of a spec uses that another must define but does not, each with its field path."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{where}: {what}" for where, what in problems))
        self.problems = problems


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
    seed: int = Field(ge=0, lt=2**32)  # numpy's generators take 0 <= seed < 2**32
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
        if problems := self._cross_section_problems():
            raise SpecReferenceError(problems)
        self._link_bank_imports()
        return self

    def _link_bank_imports(self) -> None:
        """Imports of the spec's own bank learn its item-id prefix and the bank (answers_csv is scored against it)."""
        for i, entry in enumerate(self.evaluation.imports):
            if entry.item_bank is not None and self.item_bank is not None:
                prefix = bank_item_prefix(self.name, self.item_bank.id)
                self.evaluation.imports[i] = entry.model_copy(update={"item_prefix": prefix, "bank": self.item_bank})

    def _cross_section_problems(self) -> list[tuple[str, str]]:
        """(field path, what is wrong) of every name one section uses that another section must define."""
        problems: list[tuple[str, str]] = []
        keys = [key for key, _ in self.leaves]
        if len(set(keys)) != len(keys):
            repeated = sorted({k for k in keys if keys.count(k) > 1})
            problems.append(("taxonomy", f"taxonomy leaves must have unique keys; repeated: {repeated}"))
        known, sources = set(keys), [s.id for s in self.sources]
        for where, discipline in [
            *((f"facts.lexicons.{d}", d) for d in self.facts.lexicons),
            *((f"facts.templates.{i}.discipline", t.discipline) for i, t in enumerate(self.facts.templates)),
            *((f"generation.templates.{i}.discipline", t.discipline) for i, t in enumerate(self.generation.templates)),
        ]:
            if discipline not in known:
                problems.append((where, f"unknown discipline {discipline!r} (taxonomy leaves: {sorted(known)})"))
        if self.item_bank is not None:
            for category, leaf in self.item_bank.categories.items():
                if leaf not in known:
                    problems.append(
                        (f"item_bank.categories.{category}", f"{category!r} maps to unknown discipline {leaf!r}")
                    )
        for i, entry in enumerate(self.evaluation.imports):
            if entry.item_bank is not None and (self.item_bank is None or entry.item_bank != self.item_bank.id):
                problems.append(
                    (f"evaluation.imports.{i}.item_bank", f"item bank {entry.item_bank!r} is not the spec's")
                )
            if entry.format == "answers_csv" and entry.item_bank is None:
                problems.append(
                    (f"evaluation.imports.{i}.item_bank", "answers_csv is scored against the item bank: name it")
                )
        for where, source in [
            *((f"facts.templates.{i}.source", t.source) for i, t in enumerate(self.facts.templates)),
            *((f"facts.prose_sources.{i}", s) for i, s in enumerate(self.facts.prose_sources)),
            *((f"facts.on_topic.{i}.source", r.source) for i, r in enumerate(self.facts.on_topic)),
        ]:
            if source not in sources:
                problems.append((where, f"unknown source {source!r} (sources: {sources})"))
        models = sorted(m.name for m in self.models)
        for where, model in [
            ("facts.paraphrase_model", self.facts.paraphrase_model),
            ("selection.signature_model", self.selection.signature_model),
            *((f"generation.generators.{i}", name) for i, name in enumerate(self.generation.generators)),
            *((f"generation.gate.models.{tier}", name) for tier, name in self.generation.gate.models.items()),
            *((f"audit.judges.{i}", name) for i, name in enumerate(self.audit.judges)),
            *((f"evaluation.slate.{i}.model", e.model) for i, e in enumerate(self.evaluation.slate)),
        ]:
            if model is not None and model not in models:
                problems.append((where, f"{model!r} is not one of the spec's models {models}"))
        return problems

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

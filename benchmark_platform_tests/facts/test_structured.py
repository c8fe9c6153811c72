"""Structured records -> templated facts anchored at the value they state, on real AVA and grape-list files."""

from __future__ import annotations

import json

import pytest

from benchmark_platform.facts.gazetteer import Gazetteer
from benchmark_platform.facts.models import SourceDocument
from benchmark_platform.facts.rules import OnTopic
from benchmark_platform.facts.structured import TemplateError, extract_structured, stated_number
from benchmark_platform.ingest.adapters.base import field_lines


@pytest.fixture(scope="module")
def gazetteer(wine_spec) -> Gazetteer:
    return Gazetteer.from_config(wine_spec.facts, wine_spec.directory)


def _atlas_peak(shared_data) -> tuple[str, dict]:
    raw = (shared_data / "ttb_ava_ucdavis" / "avas" / "atlas_peak.geojson").read_text(encoding="utf-8")
    return raw, json.loads(raw)["features"][0]["properties"]


def _by_field(candidates):
    return {c.attributes["field"]: c for c in candidates}


def test_geojson_served_text_and_field_lines_give_the_same_facts(wine_spec, gazetteer, shared_data):
    raw, properties = _atlas_peak(shared_data)
    fields = {k: v for k, v in properties.items() if v not in (None, "")}
    served = SourceDocument("raw", "ttb_ava_geojson", "application/geo+json", "Atlas Peak", raw)
    rendered = SourceDocument(
        "lines",
        "ttb_ava_geojson",
        "application/geo+json",
        "Atlas Peak",
        field_lines(fields),
        metadata={"fields": fields},
    )
    on_topic = OnTopic(wine_spec.facts.on_topic)
    for document in (served, rendered):
        candidates, rejections = extract_structured(document, wine_spec.facts, gazetteer, on_topic)
        facts = _by_field(candidates)
        # a multi-valued field ('Napa Valley|North Coast') gives one fact per value, each at its own span
        within = sorted((c for c in candidates if c.attributes["field"] == "within"), key=lambda c: c.span_start)
        assert [c.text for c in within] == [
            "The Atlas Peak American Viticultural Area lies within Napa Valley.",
            "The Atlas Peak American Viticultural Area lies within North Coast.",
        ]
        assert all("|" not in c.text and "|" not in c.attributes["value"] for c in candidates)
        assert facts["created"].text == "The Atlas Peak American Viticultural Area was established on 1992-02-24."
        for candidate in candidates:  # anchored at the exact value in the text
            assert document.text[candidate.span_start : candidate.span_end] == candidate.attributes["value"]
            assert candidate.method == f"template:{candidate.attributes['field']}"
            assert candidate.mentions[0].entity_id == "ava:atlas_peak"
        assert [{m.entity_id for m in c.mentions} for c in within] == [
            {"ava:atlas_peak", "ava:napa_valley"},
            {"ava:atlas_peak", "ava:north_coast"},
        ]
        assert rejections == []


def test_missing_values_are_rejected_and_counted(wine_spec, gazetteer, shared_data):
    raw, properties = _atlas_peak(shared_data)
    fields = {k: v for k, v in properties.items() if v not in (None, "") and k != "county"}
    document = SourceDocument(
        "d", "ttb_ava_geojson", "application/geo+json", "", field_lines(fields), metadata={"fields": fields}
    )
    candidates, rejections = extract_structured(document, wine_spec.facts, gazetteer, OnTopic([]))
    assert "county" not in _by_field(candidates)
    assert [(r.stage, r.reason, r.detail) for r in rejections] == [("template", "empty field", "county")]


def test_a_value_absent_from_the_served_text_cannot_become_a_fact(wine_spec, gazetteer):
    # metadata claiming a value the text does not contain (a hard-coded "fact") is refused
    document = SourceDocument(
        "d",
        "wikipedia_grape_list",
        "text/csv",
        "",
        "variety: merlot\ncolour: red",
        metadata={"fields": {"variety": "merlot", "colour": "blue"}},
    )
    candidates, rejections = extract_structured(document, wine_spec.facts, gazetteer, OnTopic([]))
    assert candidates == []
    assert [(r.reason, r.detail) for r in rejections] == [("value not in the document text", "colour")]


def test_csv_rows_of_the_real_grape_list(wine_spec, gazetteer, shared_data):
    path = shared_data / "grape_varieties" / "mdneuzerling_wikipedia_grape_varieties.csv"
    text = path.read_bytes().decode("latin-1")
    document = SourceDocument("grapes", "wikipedia_grape_list", "text/csv", "varieties", text)
    candidates, rejections = extract_structured(document, wine_spec.facts, gazetteer, OnTopic([]))
    # issue 34: 30 names lost letters in the list's extraction ('feteasc? alb?') or carry a disambiguation in
    # brackets: no fact, a rejection each
    unclean = [r for r in rejections if r.reason.startswith("subject is not a clean name")]
    assert len(candidates) == 689 and len(unclean) == 30
    assert "feteasc? alb?" in {r.text for r in unclean}
    merlot = next(c for c in candidates if c.attributes["subject"] == "Merlot")
    assert merlot.text == "Merlot is a red grape variety."
    assert merlot.mentions[0].entity_id == "grape_variety:merlot"
    assert text[merlot.span_start : merlot.span_end] == "red"
    assert text[: merlot.span_start].endswith("merlot,")


def test_a_template_naming_a_missing_field_is_an_error_naming_the_document(wine_spec, gazetteer):
    config = wine_spec.facts.model_copy(
        update={
            "templates": [wine_spec.facts.templates[0].model_copy(update={"template": "{name} lies in {nowhere}."})]
        }
    )
    document = SourceDocument(
        "doc-7",
        "ttb_ava_geojson",
        "application/geo+json",
        "",
        "name: X\nstate: CA",
        metadata={"fields": {"name": "X", "state": "CA"}},
    )
    with pytest.raises(TemplateError, match="doc-7.*'nowhere'"):
        extract_structured(document, config, gazetteer, OnTopic([]))


def test_franceagrimer_varieties_are_named_as_questions_name_them_and_aggregate_rows_are_no_entity(
    wine_spec, gazetteer, shared_data
):
    text = (shared_data / "fr_official_stats" / "area_cepages_france_yearly.csv").read_text(encoding="utf-8")
    document = SourceDocument("areas", "franceagrimer_grape_areas", "text/csv", "areas", text)
    candidates, rejections = extract_structured(document, wine_spec.facts, gazetteer, OnTopic([]))
    cabernet = next(c for c in candidates if c.attributes["subject"] == "Cabernet Sauvignon (2009)")
    assert cabernet.text.startswith(
        "In 2009, the FranceAgriMer survey recorded "
    ) and "hectares of Cabernet Sauvignon in" in (cabernet.text)
    assert cabernet.mentions[0].entity_id == gazetteer.lookup("Cabernet Sauvignon").entity_id  # the rulebooks' variety
    # the area as a reader states it (value_decimals: 0), anchored at the source's own digits
    value = cabernet.attributes["value"]
    assert "," in value and f"recorded {value} hectares" in cabernet.text
    assert document.text[cabernet.span_start : cabernet.span_end] == value.replace(",", "")
    assert not any("CABER." in c.text or "AUTRES" in c.text or "Inconnu" in c.text for c in candidates)
    skipped = {r.text for r in rejections if r.reason == "an aggregate row, not an entity"}
    assert skipped == {"AUTRES", "Inconnu", "HYBRID.DIV.CUVE", "VINIFS. CUVE"}
    shifted = [r for r in rejections if r.reason == "value does not match the field's pattern"]
    assert {r.text for r in shifted} >= {"GRENACHE N", "CABER.SAUVIGNON N"}  # 2014's ranking in the number columns


def test_a_stated_number_is_rounded_and_grouped():
    assert stated_number("841.6198", 2) == "841.62"
    assert stated_number("480118.66", 0) == "480,119"
    assert stated_number("57", 0) == "57"
    assert stated_number("1750.8", 2) == "1,750.8"  # trailing zeros dropped
    assert stated_number("12.0", 2) == "12"


def test_a_value_that_is_no_number_is_a_rejection_when_the_template_rounds_it(wine_spec, gazetteer):
    template = wine_spec.facts.templates[0].model_copy(
        update={
            "field": "area",
            "value_decimals": 0,
            "template": "The {name} viticultural area covers {area} acres of vineyard.",
        }
    )
    config = wine_spec.facts.model_copy(update={"templates": [template]})
    for area, facts in (("n/a", 0), ("1234.5", 1)):
        document = SourceDocument(
            "doc-8",
            "ttb_ava_geojson",
            "application/geo+json",
            "",
            f"name: X\narea: {area}",
            metadata={"fields": {"name": "X", "area": area}},
        )
        candidates, rejections = extract_structured(document, config, gazetteer, OnTopic([]))
        assert len(candidates) == facts
        if not facts:
            assert [(r.reason, r.text) for r in rejections] == [("value is not a number", "n/a")]

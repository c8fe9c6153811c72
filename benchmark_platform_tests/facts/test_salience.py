"""Salience of facts as question material: identifier trivia and gazetteer rows are kept but not asked about."""

from __future__ import annotations

from benchmark_platform.facts.config import SalienceConfig, SalienceRule
from benchmark_platform.facts.models import Candidate
from benchmark_platform.facts.salience import identifier_reasons, is_question_material, salience, with_salience


def _fact(source: str, field: str, value: str) -> Candidate:
    return Candidate(
        source_id=source,
        document_id="d",
        span_start=0,
        span_end=len(value),
        discipline="regions",
        text=f"A fact stating {value}.",
        source_text=value,
        confidence=1.0,
        method=f"template:{field}",
        attributes={"field": field, "value": value, "subject": "S"},
    )


def test_identifier_values_are_recognised_and_ordinary_values_are_not():
    patterns = SalienceConfig().identifier_patterns
    assert identifier_reasons("PA-W-21084", patterns) == ["permit number"]
    assert identifier_reasons("9.167", patterns) == ["regulation section number"]
    assert identifier_reasons("27 CFR 9.167", patterns) == ["regulation section number"]
    assert identifier_reasons("1992-02-24", patterns) == ["bare date"]
    assert identifier_reasons("1234 MAIN ST", patterns) == ["street address"]
    assert identifier_reasons("BW-12345", patterns) == ["registry code"]
    for ordinary in ("5,500 vines per hectare", "13.5%", "49 hl/ha", "Napa Valley", "13283.93", "540.2316", "CA"):
        assert identifier_reasons(ordinary, patterns) == [], ordinary


def test_spec_rules_and_patterns_give_a_score_with_reasons(wine_spec):
    config = wine_spec.facts.salience
    permittee = with_salience(_fact("ttb_wine_permittees", "City", "GRANTVILLE"), config)
    assert permittee.attributes["salience"]["score"] < config.min_score
    assert "gazetteer" in permittee.attributes["salience"]["reasons"][0]
    assert not is_question_material(permittee)
    cfr = salience(_fact("ttb_ava_geojson", "cfr_index", "9.167"), config)
    assert cfr[0] == 0.0 and any("identifier: regulation section number" in r for r in cfr[1])
    established = salience(_fact("ttb_ava_geojson", "created", "1992-02-24"), config)
    assert established[0] == 0.0 and len(established[1]) == 2  # the spec rule and the bare-date pattern
    rulebook = with_salience(_fact("inao_cahiers", "min_density", "5,500 vines per hectare"), config)
    assert rulebook.attributes["salience"] == {"score": 1.0, "reasons": [], "question_material": True}
    assert is_question_material(_fact("x", "y", "z"))  # a fact scored before salience existed stays material


def test_a_rule_can_name_a_source_and_relation():
    config = SalienceConfig(rules=[SalienceRule(source="s", field="f", score=0.3, reason="why")], min_score=0.5)
    assert salience(_fact("s", "f", "v"), config) == (0.3, ["why"])
    assert salience(_fact("s", "g", "v"), config) == (1.0, [])
    assert salience(_fact("t", "f", "v"), config) == (1.0, [])

"""Issue 34: what defines an appellation, read from the real INAO rulebooks in ../shared/data (the appellation's only
variety, labelling mentions, élevage, the clavelin, hand harvesting), durations and deadlines written one way, and
AVA names that the source split resolved against the gazetteer or rejected with their reason."""

from __future__ import annotations

import pytest

from benchmark_platform.facts.gazetteer import Gazetteer
from benchmark_platform.facts.models import SourceDocument, one_article
from benchmark_platform.facts.rulebook import (
    BY_HAND,
    NO_EQUIPMENT_RULE,
    NO_HARVEST_RULE,
    extract_rulebook,
    smart_title,
    with_unit,
)
from benchmark_platform.facts.rules import OnTopic
from benchmark_platform.facts.salience import is_question_material, with_salience
from benchmark_platform.facts.structured import extract_structured, name_case
from benchmark_platform.ingest.adapters.legal_text import legal_text


@pytest.fixture(scope="module")
def gazetteer(wine_spec) -> Gazetteer:
    return Gazetteer.from_config(wine_spec.facts, wine_spec.directory)


@pytest.fixture(scope="module")
def facts(shared_data, wine_spec, gazetteer) -> dict[str, dict[tuple[str, str], list[str]]]:
    """appellation -> (field, qualifier) -> values, over the 41 rulebooks."""
    folder = shared_data / "inao_fr_appellations" / "cahiers_des_charges"
    out: dict[str, dict[tuple[str, str], list[str]]] = {}
    for p in sorted(folder.glob("aoc_*.md")):
        document = SourceDocument(p.stem, "inao_cahiers", "text/markdown", p.stem, legal_text(p.read_text("utf-8")))
        candidates, _ = extract_rulebook(document, wine_spec.facts, gazetteer)
        for c in candidates:
            by = out.setdefault(c.attributes["appellation"], {})
            by.setdefault((c.attributes["field"], c.attributes["qualifier"]), []).append(c.attributes["value"])
    return out


def test_an_appellation_made_from_one_variety_says_so(facts):
    assert facts["Condrieu"][("sole_variety", "")] == ["Viognier"]
    assert facts["Condrieu"][("variety", "")] == ["Viognier"]
    assert facts["Château-Chalon"][("sole_variety", "")] == ["Savagnin"]
    assert facts["Savennières"][("sole_variety", "")] == ["Chenin"]
    assert facts["Pouilly-Fuissé"][("sole_variety", "white wines")] == ["Chardonnay"]
    # Champagne's seven varieties are one listing, none of them alone
    assert ("sole_variety", "") not in facts["Champagne"]
    assert sorted(facts["Champagne"][("variety", "")]) == [
        "Arbane",
        "Chardonnay",
        "Meunier",
        "Petit Meslier",
        "Pinot Blanc",
        "Pinot Gris",
        "Pinot Noir",
    ]


def test_vin_jaune_rules_hold_for_vin_jaune_not_for_the_whole_appellation(facts):
    chalon, jura = facts["Château-Chalon"], facts["Côtes du Jura"]
    veil = "at least 60 months in cask under a veil of yeast (sous voile), without topping up"
    assert chalon[("elevage", "")] == [veil]
    assert chalon[("bottle", "")] == ["the clavelin, a bottle of about 62 cl reserved for the appellation"]
    assert jura[("elevage", "vin jaune")] == [veil]
    assert ("elevage", "") not in jura
    assert jura[("ageing_until", "vin jaune")] == ["15 December of the sixth year after the harvest"]
    assert jura[("sole_variety", "vin jaune")] == ["Savagnin"]


def test_sparkling_wines_time_on_the_lees_and_labelling_mentions(facts):
    champagne = facts["Champagne"]
    assert sorted(champagne[("elevage", "")]) == [
        "at least 12 months on the lees before disgorgement",
        "at least 15 months in bottle on the lees from tirage",
    ]
    assert champagne[("elevage", "vintage wines")] == ["at least 36 months in bottle on the lees from tirage"]
    assert {"grand cru", "premier cru"} <= set(champagne[("mention", "")])
    assert "sélection de grains nobles (SGN)" in facts["Coteaux du Layon"][("mention", "")]
    assert {"vin de paille", "vin jaune"} <= set(facts["Côtes du Jura"][("mention", "")])
    assert {"primeur", "nouveau"} <= set(facts["Coteaux du Tricastin"][("mention", "")])
    # the mention every AOC carries, and sweetness terms any wine may carry, tell no appellation from another
    mentions = {v for by in facts.values() for v in by.get(("mention", ""), [])}
    assert not mentions & {"Appellation contrôlée", "sec (dry)", "demi-sec (medium-dry)", "the vintage (millésime)"}


def test_hand_harvesting_and_successive_passes_are_separate_facts(facts):
    assert facts["Bonnezeaux"][("harvest_method", "")] == [BY_HAND]
    assert facts["Condrieu"][("harvest_method", "")] == [BY_HAND]  # 'la machine à vendanger ... est interdite'
    # 'Pas de disposition particulière' under the harvest provisions: the fact that proves 'by hand' wrong for it
    assert facts["Pomerol"][("harvest_method", "")] == [NO_HARVEST_RULE]
    assert facts["Bonnezeaux"][("harvest_passes", "")] == ["in successive passes (tries successives)"]
    # 'hand harvesting is compulsory for carbonic maceration': a rule for one cuvée, not for the appellation
    assert ("harvest_method", "") not in facts.get("Saint-Nicolas-de-Bourgueil", {})


def test_durations_and_deadlines_are_written_one_way(facts):
    assert with_unit("1", "months") == "one month"
    assert with_unit("15", "days") == "15 days"
    values = [v for by in facts.values() for (field, _), vs in by.items() for v in vs if field.endswith("notice")]
    assert values and not any("(s)" in v or v.startswith("1 ") for v in values)
    deadlines = {v for by in facts.values() for (field, _), vs in by.items() if field == "claim_deadline" for v in vs}
    # 'au plus tard le 31 décembre' and 'avant le 1er janvier' are one deadline, written as 'before' takes it
    assert "1 January of the year after the harvest" in deadlines
    assert "26 November of the harvest year" in deadlines  # 'au plus tard le 25 novembre'


def test_paperwork_stays_a_fact_at_the_bar_below_what_defines_the_wine(shared_data, wine_spec, gazetteer):
    path = next((shared_data / "inao_fr_appellations" / "cahiers_des_charges").glob("aoc_condrieu*.md"))
    document = SourceDocument("condrieu", "inao_cahiers", "text/markdown", "c", legal_text(path.read_text("utf-8")))
    candidates, _ = extract_rulebook(document, wine_spec.facts, gazetteer)
    scored = {c.attributes["field"]: with_salience(c, wine_spec.facts.salience) for c in candidates}

    sole, claim = scored["sole_variety"].attributes["salience"], scored["claim_deadline"].attributes["salience"]
    assert sole["score"] > claim["score"] >= wine_spec.facts.salience.min_score
    assert is_question_material(scored["claim_deadline"]) and claim["reasons"][0].startswith("administration")


def test_a_split_ava_name_is_joined_or_rejected_never_truncated(wine_spec, gazetteer):
    """UC Davis writes Lake Wisconsin's `within` as 'Upper Mississippi|River Valley': one AVA, not 'River Valley'."""
    config = wine_spec.facts
    feature = (
        '{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": '
        '{"name": "Lake Wisconsin", "within": "Upper Mississippi|River Valley", "state": "WI"}}]}'
    )
    bogus = feature.replace("Upper Mississippi|River Valley", "Napa Valley|Nowhere Creek")
    on_topic = OnTopic(config.on_topic)
    out = {}
    for name, text in (("split", feature), ("bogus", bogus)):
        document = SourceDocument(name, "ttb_ava_geojson", "application/geo+json", name, text)
        out[name] = extract_structured(document, config, gazetteer, on_topic)
    within = [c for c in out["split"][0] if c.attributes["field"] == "within"]
    assert [c.attributes["value"] for c in within] == ["Upper Mississippi River Valley"]
    assert within[0].text == "The Lake Wisconsin American Viticultural Area lies within Upper Mississippi River Valley."
    kept = [c.attributes["value"] for c in out["bogus"][0] if c.attributes["field"] == "within"]
    rejected = [(r.reason, r.text) for r in out["bogus"][1] if r.detail == "within"]
    assert kept == ["Napa Valley"]
    assert rejected == [("value names no ava of the gazetteer", "Nowhere Creek")]


def test_grape_names_are_written_as_names_and_mangled_ones_give_no_fact(wine_spec, gazetteer):
    assert name_case("moreto") == "Moreto"
    assert name_case("nero d'avola") == "Nero d'Avola"
    assert name_case("muscat of alexandria") == "Muscat of Alexandria"
    text = "variety,colour\nmoreto,red\nfeteasc? alb?,white\nchatus (wine grape),red\nxarel·lo,white\n"
    document = SourceDocument("grapes", "wikipedia_grape_list", "text/csv", "grapes", text)
    candidates, rejections = extract_structured(document, wine_spec.facts, gazetteer, OnTopic([]))
    assert sorted(c.text for c in candidates) == [
        "Moreto is a red grape variety.",
        "Xarel·lo is a white grape variety.",
    ]
    assert sorted(r.text for r in rejections) == ["chatus (wine grape)", "feteasc? alb?"]
    assert {r.reason for r in rejections} == {"subject is not a clean name (mis-decoded or annotated)"}


def test_the_absence_of_a_harvest_rule_proves_but_asks_nothing(shared_data, wine_spec, gazetteer):
    path = next((shared_data / "inao_fr_appellations" / "cahiers_des_charges").glob("aoc_pomerol*.md"))
    document = SourceDocument("pomerol", "inao_cahiers", "text/markdown", "p", legal_text(path.read_text("utf-8")))
    candidates, _ = extract_rulebook(document, wine_spec.facts, gazetteer)
    free = with_salience(
        next(c for c in candidates if c.attributes["field"] == "harvest_method"), wine_spec.facts.salience
    )
    assert free.text == "The Pomerol rulebook sets no rule on how the grapes are picked."
    assert not is_question_material(free) and free.attributes["salience"]["reasons"][0].startswith("absence of a rule")


CONTINUOUS_PRESSES = "bans continuous presses (pressoirs continus)"


def test_banned_cellar_equipment_and_its_absence_are_facts_a_partial_ban_is_none(facts):
    """Chapter IX 'Matériel interdit': every banned kind, or 'pas de disposition particulière' (the proof that a ban
    is wrong for it); a ban of some presses only (Pomerol: screws under 400 mm) gives its rulebook no fact at all, so
    it is never offered as one that does not ban continuous presses."""
    assert facts["Volnay"][("banned_equipment", "")] == [CONTINUOUS_PRESSES]
    assert sorted(facts["Vouvray"][("banned_equipment", "")]) == [
        CONTINUOUS_PRESSES,
        "bans raw (unlined) cement vats",
        "bans the foulo-benne (a self-emptying harvest trailer with a centrifugal pump)",
    ]
    assert facts["Margaux"][("banned_equipment", "")] == [NO_EQUIPMENT_RULE]
    for partial in ("Pomerol", "Bergerac", "Saint-Nicolas-de-Bourgueil", "Limoux"):
        assert ("banned_equipment", "") not in facts[partial], partial
    banning = sorted(a for a, by in facts.items() if CONTINUOUS_PRESSES in by.get(("banned_equipment", ""), []))
    assert len(banning) >= 14


def test_sparkling_wines_sold_in_the_bottle_of_their_second_fermentation(facts):
    assert facts["Champagne"][("bottle", "")] == [
        "the bottle of its second fermentation (prise de mousse), save bottles under 37.5 cl or over 300 cl"
    ]
    # the clavelin is vin jaune's bottle in the Côtes du Jura, not every Côtes du Jura wine's
    assert ("bottle", "") not in facts["Côtes du Jura"]
    assert facts["Côtes du Jura"][("bottle", "vin jaune")] == [
        "the clavelin, a bottle of about 62 cl reserved for the appellation"
    ]
    assert facts["Crémant de Die"][("bottle", "")] == [
        "the bottle of its second fermentation (prise de mousse), save bottles under 37.5 cl or over 150 cl"
    ]


def test_names_in_their_usual_capitalisation_and_one_article(facts):
    assert smart_title("muscat à petits grains blancs") == "Muscat à Petits Grains Blancs"
    assert smart_title("pineau d'aunis") == "Pineau d'Aunis"
    varieties = {v for by in facts.values() for (field, _), vs in by.items() if field == "variety" for v in vs}
    assert not [v for v in varieties if " À " in v or " D'" in v]
    assert one_article("enclose the The Rocks District AVA") == "enclose The Rocks District AVA"
    assert one_article("The The Rocks District AVA lies in Oregon.") == "The Rocks District AVA lies in Oregon."
    assert one_article("the Theatre") == "the Theatre"

"""French appellation rulebooks -> English attribute facts, on the real INAO cahiers des charges in ../shared/data."""

from __future__ import annotations

from collections import Counter

import pytest

from benchmark_platform.facts.build import extract
from benchmark_platform.facts.gazetteer import Gazetteer
from benchmark_platform.facts.models import SourceDocument
from benchmark_platform.facts.rulebook import appellation_name, extract_rulebook, number
from benchmark_platform.ingest.adapters.legal_text import legal_text

SEPARATORS = ("|", " ― ", "pieds", "hectolitres", "grammes", "récolte")  # raw cells and French left in a value


@pytest.fixture(scope="module")
def gazetteer(wine_spec) -> Gazetteer:
    return Gazetteer.from_config(wine_spec.facts, wine_spec.directory)


@pytest.fixture(scope="module")
def rulebooks(shared_data) -> list[SourceDocument]:
    folder = shared_data / "inao_fr_appellations" / "cahiers_des_charges"
    return [
        SourceDocument(p.stem, "inao_cahiers", "text/markdown", p.stem, legal_text(p.read_text(encoding="utf-8")))
        for p in sorted(folder.glob("aoc_*.md"))
    ]


def _facts(document, wine_spec, gazetteer) -> dict[tuple[str, str], list[str]]:
    candidates, _ = extract_rulebook(document, wine_spec.facts, gazetteer)
    out: dict[tuple[str, str], list[str]] = {}
    for c in candidates:
        out.setdefault((c.attributes["field"], c.attributes["qualifier"]), []).append(c.attributes["value"])
    return out


def test_french_numbers_become_english():
    assert number("5 500") == "5,500"
    assert number("13, 5") == "13.5"
    assert number("12,50") == "12.5"
    assert number("12,0") == "12"
    assert number("dix") == "10"


def test_pomerol_rules_in_english_anchored_at_their_french_evidence(rulebooks, wine_spec, gazetteer):
    pomerol = next(d for d in rulebooks if "pomerol" in d.document_id)
    assert appellation_name(pomerol.text) == "Pomerol"
    facts = _facts(pomerol, wine_spec, gazetteer)
    assert facts[("min_density", "")] == ["5,500 vines per hectare"]
    assert facts[("max_buds", "")] == ["10 buds per vine"]
    assert facts[("max_load", "")] == ["8,000 kg of grapes per hectare"]
    assert facts[("base_yield", "")] == ["49 hl/ha"]
    assert facts[("yield_cap", "")] == ["60 hl/ha"]
    assert facts[("min_natural_alcohol", "")] == ["11%"]
    assert facts[("max_alcohol_after_enrichment", "")] == ["13.5%"]
    assert facts[("min_sugar", "from Merlot")] == ["194 g of sugar per litre of must"]
    assert facts[("min_sugar", "from other varieties")] == ["180 g of sugar per litre of must"]
    assert facts[("ageing_until", "")] == ["1 November of the year after the harvest"]
    assert facts[("release_from", "")] == ["15 November of the year after the harvest"]
    assert facts[("max_total_so2", "")] == ["140 mg/l"]
    assert facts[("department", "")] == ["Gironde"]
    assert facts[("colour", "")] == ["red"]
    assert sorted(facts[("variety", "")]) == ["Cabernet Franc", "Cabernet-Sauvignon", "Cot", "Merlot", "Petit Verdot"]
    candidates, rejections = extract_rulebook(pomerol, wine_spec.facts, gazetteer)
    # Pomerol bans continuous presses with screws under 400 mm only: no equipment fact, and the reason kept
    assert ("a partial or unknown equipment ban", "f) Matériel interdit.") in [(r.reason, r.text) for r in rejections]
    # its area names part of Libourne: no commune list, and the reason kept
    assert "an area of parts of communes" in [r.reason for r in rejections]
    for c in candidates:  # the evidence is the document's own bytes, and it holds the stated number
        assert pomerol.text[c.span_start : c.span_end] == c.source_text
        assert c.method == f"rulebook:{c.attributes['field']}"
        assert c.mentions[0].entity_id.startswith("appellation:")
        digits = "".join(ch for ch in c.attributes["value"] if ch.isdigit())
        spelled = c.source_text.split()[0].lower() in ("un", "une", "trois", "cinq", "huit", "dix", "quinze")
        assert not digits or spelled or digits[:2] in "".join(ch for ch in c.source_text if ch.isdigit())


def test_a_synonym_named_with_dit_is_not_a_second_variety(rulebooks, wine_spec, gazetteer):
    """Palette: 'araignan B dit picardan B' is one variety under two names (it once gave 'Dit Picardan')."""
    palette = next(d for d in rulebooks if "palette" in d.document_id)
    facts = _facts(palette, wine_spec, gazetteer)
    principal = facts[("principal_variety", "")]
    assert "Araignan" in principal and not any("icardan" in v for v in principal + facts[("variety", "")])


def test_table_rows_give_values_per_wine_colour(rulebooks, wine_spec, gazetteer):
    buzet = next(d for d in rulebooks if "buzet" in d.document_id)
    facts = _facts(buzet, wine_spec, gazetteer)
    # the sugar / natural alcohol table: one row per colour, one column per attribute
    assert facts[("min_sugar", "red wines")] == ["180 g of sugar per litre of must"]
    assert facts[("min_sugar", "white wines")] == ["161 g of sugar per litre of must"]
    assert facts[("min_natural_alcohol", "rosé wines")] == ["10.5%"]
    assert facts[("max_alcohol_after_enrichment", "white wines")] == ["12.5%"]
    assert sorted(facts[("principal_variety", "")]) == [
        "Cabernet Franc",
        "Cabernet Sauvignon",
        "Cot",
        "Merlot",
        "Muscadelle",
        "Sauvignon",
        "Sauvignon Gris",
        "Sémillon",
    ]
    assert sorted(facts[("accessory_variety", "")]) == [
        "Abouriou",
        "Colombard",
        "Gros Manseng",
        "Petit Manseng",
        "Petit Verdot",
    ]


def test_every_rulebook_is_named_and_read_in_every_chapter(rulebooks, wine_spec, gazetteer):
    assert len(rulebooks) == 41
    fields: Counter[str] = Counter()
    for document in rulebooks:
        assert appellation_name(document.text), document.document_id
        candidates, _ = extract_rulebook(document, wine_spec.facts, gazetteer)
        assert candidates, document.document_id
        for c in candidates:
            assert not any(s in c.attributes["value"] for s in SEPARATORS), c.attributes["value"]
            assert not any(s in c.text for s in ("|", " ― ")), c.text
        fields.update(c.attributes["field"] for c in candidates)
    # every discipline the rulebooks feed gets material from most of the 41 texts
    assert fields["variety"] >= 200 and fields["principal_variety"] >= 60
    assert min(fields[f] for f in ("min_density", "base_yield", "yield_cap", "min_natural_alcohol")) >= 30
    assert fields["claim_deadline"] >= 30 and fields["department"] >= 30 and fields["ageing_until"] >= 20
    assert sum(fields.values()) >= 900


def test_a_phrase_the_glossary_lacks_is_rejected_not_guessed(rulebooks, wine_spec, gazetteer):
    pomerol = next(d for d in rulebooks if "pomerol" in d.document_id)
    glossary = {k: v for k, v in wine_spec.facts.rulebook.glossary.items() if k != "novembre"}
    config = wine_spec.facts.model_copy(
        update={"rulebook": wine_spec.facts.rulebook.model_copy(update={"glossary": glossary})}
    )
    candidates, rejections = extract_rulebook(pomerol, config, gazetteer)
    assert "ageing_until" not in {c.attributes["field"] for c in candidates}
    assert ("not in the glossary", "novembre") in {(r.reason, r.text) for r in rejections}


def test_extraction_scores_salience_on_every_candidate(rulebooks, wine_spec):
    extraction = extract(rulebooks[:3], wine_spec.facts, wine_spec.directory)
    assert extraction.candidates
    rules = {
        (r.field, r.value, r.value_in_subject): (r.score, r.reason)
        for r in wine_spec.facts.salience.rules
        if r.source == "inao_cahiers"
    }
    bar = wine_spec.facts.salience.min_score
    for c in extraction.candidates:
        # what defines the wine scores 1.0, paperwork and norms lower; only the absence of a rule is no question, and
        # the commune an appellation is named after (its answer is in the question)
        field, value = c.attributes["field"], c.attributes["value"]
        eponymous = value.lower() in c.attributes["subject"].lower()
        score, reason = (
            rules.get((field, value, False))
            or (rules.get((field, None, True)) if eponymous else None)
            or rules.get((field, None, False))
            or (1.0, None)
        )
        expected = {"score": score, "reasons": [reason] if reason else [], "question_material": score >= bar}
        assert c.attributes["salience"] == expected


def _doc(rulebooks, name: str) -> SourceDocument:
    return next(d for d in rulebooks if name in d.document_id)


def test_labelling_rules_are_read_whole_or_not_at_all(rulebooks, wine_spec, gazetteer):
    """Chapter XII: each rule the section sets, or its 'no particular provision'; a section with a rule no pattern
    reads gives no fact, so its rulebook is never offered as one without a rule it sets."""
    roussillon = _facts(_doc(rulebooks, "grand-roussillon"), wine_spec, gazetteer)
    assert sorted(roussillon[("label_rule", "")]) == [
        "requires the appellation's name on the label in characters at least half the size of any other",
        "requires the words vin doux naturel on the label",
    ]
    jura = _facts(_doc(rulebooks, "cotes-du-jura"), wine_spec, gazetteer)
    assert jura[("label_rule", "vin de paille")] == ["requires the vintage (millésime) on the label"]
    margaux = _facts(_doc(rulebooks, "margaux"), wine_spec, gazetteer)
    assert margaux[("label_rule", "")] == ["sets no particular presentation or labelling rule"]
    vouvray = _doc(rulebooks, "vouvray")  # its pétillant bottle rule is read by no pattern
    assert ("label_rule", "") not in _facts(vouvray, wine_spec, gazetteer)
    _, rejections = extract_rulebook(vouvray, wine_spec.facts, gazetteer)
    assert any(r.reason == "a labelling rule no pattern reads" for r in rejections)


def test_release_dates_for_the_same_wines_are_one_or_none(rulebooks, wine_spec, gazetteer):
    fitou = _facts(_doc(rulebooks, "fitou"), wine_spec, gazetteer)
    assert fitou[("release_from", "")] == ["1 May of the year after the harvest"]
    # 'les vins "moelleux"' and 'les vins "liquoreux"': two dates no qualifier tells apart, so neither is a fact
    macaire = _doc(rulebooks, "saint-macaire")
    assert not any(k[0] == "release_from" for k in _facts(macaire, wine_spec, gazetteer))
    _, rejections = extract_rulebook(macaire, wine_spec.facts, gazetteer)
    assert sum(r.reason == "two values for the same wines" for r in rejections) == 2


def test_the_communes_of_the_area_are_the_whole_list_or_none(rulebooks, wine_spec, gazetteer):
    margaux = _facts(_doc(rulebooks, "margaux"), wine_spec, gazetteer)
    assert sorted(margaux[("commune", "")]) == ["Arsac", "Cantenac", "Labarde", "Margaux", "Soussans"]
    vivarais = _facts(_doc(rulebooks, "cotes-du-vivarais"), wine_spec, gazetteer)  # two départements
    assert {"Bidon", "Vinezac", "Barjac", "Saint-Privas-de-Champclos"} <= set(vivarais[("commune", "")])
    assert len(vivarais[("commune", "")]) == 14
    # parts of communes (Pomerol: part of Libourne) and a cadastral section (Cheverny): no list at all
    for name in ("pomerol", "cheverny"):
        assert ("commune", "") not in _facts(_doc(rulebooks, name), wine_spec, gazetteer)


def test_irrigation_is_a_ban_or_the_rural_code_s_drought_authorisation(rulebooks, wine_spec, gazetteer):
    """Chapter VI '3° Irrigation': its one sentence read whole. 'Pas de disposition particulière' is no fact either
    way (the rural code's own ban from 1 May then applies), so it is rejected with its reason, never a third value."""
    values = Counter(v for d in rulebooks for v in _facts(d, wine_spec, gazetteer).get(("irrigation", ""), []))
    assert values == {
        "bans irrigation (l'irrigation est interdite)": 12,
        "lets irrigation be authorised in a persistent drought, as the rural code allows": 17,
    }
    assert _facts(_doc(rulebooks, "savennieres"), wine_spec, gazetteer)[("irrigation", "")] == [
        "bans irrigation (l'irrigation est interdite)"
    ]
    pomerol = _doc(rulebooks, "pomerol")
    assert ("irrigation", "") not in _facts(pomerol, wine_spec, gazetteer)
    _, rejections = extract_rulebook(pomerol, wine_spec.facts, gazetteer)
    assert any(r.reason.startswith("no irrigation rule of its own") for r in rejections)


def test_training_systems_are_the_whole_list_or_none(rulebooks, wine_spec, gazetteer):
    """Chapter VI 'Règles de taille': one fact, every system the section allows ('... only', so another list is
    proven wrong by it); a system allowed for some varieties only, or one the reader does not know, gives none."""
    cassis = _facts(_doc(rulebooks, "cassis"), wine_spec, gazetteer)
    assert cassis[("pruning", "")] == [
        "bush vines (gobelet), fan training (éventail) and spur-pruned cordon (cordon de Royat) only"
    ]
    grillet = _facts(_doc(rulebooks, "chateau-grillet"), wine_spec, gazetteer)
    assert grillet[("pruning", "")] == ["cane pruning (taille Guyot) only"]
    layon = _facts(_doc(rulebooks, "coteaux-du-layon"), wine_spec, gazetteer)
    assert layon[("pruning", "")] == ["mixed cane-and-spur pruning (taille mixte) only"]
    # Fitou: Guyot for syrah only; Pouilly-Fuissé: taille à queue du Mâconnais; Margaux: taille médocaine à astes
    for name, reason in (
        ("fitou", "a training system allowed for some varieties only"),
        ("pouilly-fuisse", "a pruning rule the reader does not read whole"),
        ("margaux", "a pruning rule the reader does not read whole"),
    ):
        document = _doc(rulebooks, name)
        assert ("pruning", "") not in _facts(document, wine_spec, gazetteer)
        _, rejections = extract_rulebook(document, wine_spec.facts, gazetteer)
        assert any(r.reason.startswith(reason) for r in rejections), name
    assert sum(("pruning", "") in _facts(d, wine_spec, gazetteer) for d in rulebooks) == 19

"""The five filters of OenoBench B.1 on spaCy, one behaviour per test, on sentences written like the sources."""

from __future__ import annotations

from benchmark_platform.facts.models import SourceDocument


def texts(result):
    return [c.text for c in result.candidates]


def reasons(result):
    return [(r.stage, r.reason) for r in result.rejections]


def test_every_candidate_is_anchored_at_its_evidence_in_the_document(run):
    text = (
        "Barolo is made from Nebbiolo grapes in Piedmont. It must be aged for at least 38 months before release."
        "\n\nThe grapes are harvested in September and the wine is fermented in steel tanks."
    )
    result = run(text)
    assert len(result.candidates) == 4
    for candidate in result.candidates:
        assert text[candidate.span_start : candidate.span_end] == candidate.source_text
        assert candidate.document_id == "doc" and candidate.source_id == "wikibooks_wine"


def test_conjunction_split_only_between_clauses_with_their_own_finite_verb(run):
    result = run("Syrah is known as Shiraz in Australia, and Shiraz is the most planted red grape variety there.")
    assert texts(result) == [
        "Syrah is known as Shiraz in Australia.",
        "Shiraz is the most planted red grape variety there.",
    ]
    assert [c.method for c in result.candidates] == ["sentence", "clause"]
    # coordinated adjectives are one assertion, not two clauses
    assert texts(run("The estate in Bourgogne produces red and white wines from old vines.")) == [
        "The estate in Bourgogne produces red and white wines from old vines."
    ]


def test_a_clause_without_a_subject_borrows_the_first_clauses_subject(run):
    result = run("Pinot Noir is an early ripening grape variety and is harvested in the first week of September.")
    assert texts(result) == [
        "Pinot Noir is an early ripening grape variety.",
        "Pinot Noir is harvested in the first week of September.",
    ]
    second = result.candidates[1]
    assert second.source_text == "is harvested in the first week of September"


def test_while_splits_two_independent_clauses(run):
    result = run("Merlot ripens earlier than Cabernet Sauvignon, while Cabernet Sauvignon needs a warmer climate.")
    assert texts(result) == [
        "Merlot ripens earlier than Cabernet Sauvignon.",
        "Cabernet Sauvignon needs a warmer climate.",
    ]


def test_pronouns_take_the_referent_from_context(run):
    result = run("Barolo is made from Nebbiolo grapes in Piedmont. It must be aged for at least 38 months.")
    assert texts(result)[1] == "Barolo must be aged for at least 38 months."
    assert result.candidates[1].attributes == {"resolved_references": 1}
    assert "appellation:barolo" in {m.entity_id for m in result.candidates[1].mentions}
    people = run("Robert Mondavi founded his winery in Oakville in 1966. He promoted varietal labelling in California.")
    assert texts(people) == [
        "Robert Mondavi founded Robert Mondavi's winery in Oakville in 1966.",
        "Robert Mondavi promoted varietal labelling in California.",
    ]


def test_demonstratives_resolve_only_to_a_matching_noun(run):
    result = run("The Mosel valley is a wine region of Germany. This valley is known for steep slate slopes.")
    assert texts(result)[1] == "The Mosel valley is known for steep slate slopes."


def test_unresolved_it_this_that_are_dropped(run):
    result = run("This led to higher wine prices across the region in that year.")
    assert reasons(result) == [("resolve", "unresolved demonstrative 'this'")]
    assert reasons(run("It is believed that the Romans planted the first vineyards in the Mosel valley.")) == [
        ("resolve", "expletive 'it' without a referent")
    ]
    assert reasons(run("It is often blended with Merlot in the vineyards of the region.")) == [
        ("resolve", "unresolved 'it'")
    ]
    assert not run("This is a fact about wine.").candidates


def test_gazetteer_corrects_the_small_models_labels_and_aliases_share_one_id(run):
    barolo = run("Barolo is made from Nebbiolo grapes in Piedmont.").candidates[0]
    by_id = {m.entity_id: m for m in barolo.mentions}
    assert by_id["appellation:barolo"].ner_label == "PERSON"  # the small model's label, overridden
    assert by_id["appellation:barolo"].entity_type == "appellation"
    assert "grape_variety:nebbiolo" in by_id and "region:piedmont" in by_id
    burgundy = run("Pinot Noir is the main red grape variety of Burgundy.").candidates[0]
    bourgogne = run("Pinot Noir is the main red grape variety of Bourgogne.").candidates[0]
    assert (
        {m.entity_id for m in burgundy.mentions}
        == {m.entity_id for m in bourgogne.mentions}
        == {"grape_variety:pinot_noir", "region:burgundy"}
    )
    shiraz = run("Shiraz is the most widely planted red grape variety in Australia.").candidates[0]
    assert "grape_variety:syrah" in {m.entity_id for m in shiraz.mentions}


def test_domain_classification_by_lexicon_entities_and_tie_order(run):
    assert [
        c.discipline for c in run("The wine is fermented in stainless steel tanks at low temperature.").candidates
    ] == ["winemaking"]
    assert [
        c.discipline for c in run("Phylloxera destroyed most of the vineyards of Europe in the 1870s.").candidates
    ] == ["viticulture"]
    # 'grape variety' (grape_varieties) and 'region' (regions) tie; tie_order puts grape_varieties first
    assert [c.discipline for c in run("Each grape variety grown there is listed by the region.").candidates] == [
        "grape_varieties"
    ]
    assert reasons(run("Humans have enjoyed this drink since ancient times.")) == [
        ("resolve", "unresolved demonstrative 'this'")
    ]
    assert reasons(run("Humans have enjoyed the drink since ancient times.")) == [("classify", "no anchor term")]


def test_length_and_predicate_validation(run):
    long_sentence = (
        "Chardonnay is fermented in oak barrels by many producers in the north of the country, "
        "and the wine is then aged on fine lees for several months with regular stirring to add texture."
    )
    reduced = run(long_sentence.replace(", and the wine", ", with the wine"))
    assert [c.confidence for c in reduced.candidates] == [0.7]  # 31-50 words: kept, reduced confidence
    assert [c.confidence for c in run(long_sentence).candidates] == [1.0, 1.0]  # split: two short clauses
    assert reasons(run("Vine Diseases")) == [("validate", "fewer than 5 words")]
    assert reasons(run("A vineyard in the Champagne wine region of France.")) == [("validate", "no verb")]
    assert reasons(run("then the boundary proceeds westerly along the river to the vineyard.")) == [
        ("validate", "fragment: starts mid-sentence")
    ]
    assert reasons(run("Then following Big Indian Creek in a northeasterly direction to the county line.")) == [
        ("validate", "fragment: main verb not finite")
    ]
    assert reasons(run("The beginning point of the boundary is the intersection of the St.")) == [
        ("validate", "fragment: cut at an abbreviation")
    ]
    assert reasons(run("Proceed westerly along the river to the vineyard boundary of the county.")) == [
        ("validate", "fragment: main verb not finite")
    ]  # an imperative
    assert reasons(run("Is located in the north of the county along the river valley.")) == [
        ("validate", "fragment: starts with its main verb")
    ]
    assert reasons(
        run(
            "The grapes used for the wine must be harvested to a yield no greater than 14 tonnes per "
            "hectare, with the wine fermented to a minimum alcohol level of."
        )
    ) == [("validate", "fragment: dangling last word")]
    assert reasons(run("Grapes are picked by hand in the vineyards of the region")) == [
        ("validate", "fragment: no sentence-final punctuation in the source")
    ]


def test_sentences_over_twice_the_limit_are_rejected_before_parsing(run):
    result = run(" ".join(["The vineyard lies west of the river"] * 15) + ".")
    assert reasons(result) == [("validate", "more than 50 words")]
    assert result.rejections[0].detail == "105 words, not parsed"


def test_on_topic_filter_per_source(run):
    austrian = "Austrian Grüner Veltliner vineyards cover many hectares of the Wachau valley slopes."
    assert reasons(run(austrian, source="ttb_ava_geojson")) == [("on_topic", "off topic")]
    assert run(austrian, source="ttb_ava_geojson").rejections[0].detail == "Austrian"
    assert texts(run(austrian)) == [austrian]  # the Wikibooks source has no such rule
    napa = "Grüner Veltliner vineyards in the Napa Valley AVA cover many hectares of the Austrian hills."
    assert texts(run(napa, source="ttb_ava_geojson")) == [napa]  # names an on-topic keyword: kept


def test_structured_media_and_field_line_blocks_are_not_prose(extractor):
    documents = [
        SourceDocument("geo", "wikibooks_wine", "application/geo+json", "", '{"type": "x"}'),
        SourceDocument(
            "mixed",
            "wikibooks_wine",
            "text/plain",
            "",
            "name: Atlas Peak\nstate: CA\n\nAtlas Peak is an AVA in the Napa Valley of California.",
        ),
    ]
    result = extractor.extract(documents)
    assert result.sentences == 1
    assert [c.document_id for c in result.candidates] == ["mixed"]

"""Optional paraphrase: a scripted model double; only outputs that keep every entity and number, stay within the
limits and copy no long run of the source replace a fact's text. Invalid outputs persist nothing."""

from __future__ import annotations

import pytest

from benchmark_platform.facts.build import quality_report, select
from benchmark_platform.facts.gazetteer import Gazetteer
from benchmark_platform.facts.models import Candidate, Mention
from benchmark_platform.facts.paraphrase import prompt

BAROLO = Mention("appellation:barolo", "appellation", "Barolo", "PERSON")
NEBBIOLO = Mention("grape_variety:nebbiolo", "grape_variety", "Nebbiolo")
SOURCE = "Barolo is made from Nebbiolo grapes and must be aged for at least 38 months."
DOCUMENT = "facts-test-paraphrase-doc"


def scripted(replies: dict[str, str | None]):
    """The gateway double: the reply scripted for the fact in each prompt."""
    calls = []

    def paraphraser(prompts):
        calls.extend(prompts)
        return [next(reply for fact, reply in replies.items() if f"Fact: {fact}" in p) for p in prompts]

    paraphraser.calls = calls
    return paraphraser


def candidate(text: str, start: int, mentions=(BAROLO, NEBBIOLO)) -> Candidate:
    return Candidate(
        "facts_test_source", DOCUMENT, start, start + len(text), "regions", text, text, 1.0, "sentence", tuple(mentions)
    )


@pytest.fixture(scope="module")
def gazetteer(wine_spec) -> Gazetteer:
    return Gazetteer.from_config(wine_spec.facts, wine_spec.directory)


def embed_apart(texts):
    import numpy as np

    return np.eye(len(texts), 8, dtype=np.float32)  # no two facts are near-duplicates here


def test_a_valid_paraphrase_replaces_the_text_and_keeps_the_evidence(wine_spec, gazetteer):
    config = wine_spec.facts.model_copy(update={"paraphrase_model": "scripted"})
    good = "Wines labelled Barolo come from Nebbiolo and need no less than 38 months of ageing."
    paraphraser = scripted({SOURCE: good})
    fact_set = select([candidate(SOURCE, 0)], config, embed_apart, {}, paraphraser, gazetteer)
    [fact] = fact_set.facts
    assert fact.candidate.text == good and fact.candidate.attributes["paraphrase_of"] == SOURCE
    assert fact.candidate.source_text == SOURCE  # the span still points at the source's words
    assert fact_set.text_mode == "paraphrase: scripted" and fact_set.paraphrase_outcome == {"accepted": 1}
    assert paraphraser.calls == [prompt(SOURCE)]


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (None, "no output"),
        ("Barolo is made from Sangiovese grapes and must be aged for at least 38 months.", "entity dropped"),
        ("Barolo, from Nebbiolo grapes, must age for at least 36 months.", "numbers changed"),
        ("Barolo is made from Nebbiolo grapes and must be aged for at least 38 months!", "verbatim copy of the source"),
        ("Barolo is Nebbiolo.\n38 months.", "not one sentence within the word limits"),
    ],
)
def test_invalid_model_output_persists_nothing(wine_spec, gazetteer, db, reply, reason):
    from benchmark_platform.facts.persist import store_facts

    config = wine_spec.facts.model_copy(update={"paraphrase_model": "scripted"})
    fact_set = select([candidate(SOURCE, 0)], config, embed_apart, {}, scripted({SOURCE: reply}), gazetteer)
    [fact] = fact_set.facts
    assert fact.candidate.text == SOURCE and "paraphrase_of" not in fact.candidate.attributes
    assert fact_set.paraphrase_outcome == {reason: 1}
    _document(db)
    store_facts(db, "facts_test_paraphrase", "regions", fact_set, quality_report("regions", fact_set, [], {}))
    texts = [r["text"] for r in db.query("SELECT text FROM facts WHERE spec = 'facts_test_paraphrase'")]
    assert texts == [SOURCE]
    if reply is not None:
        assert db.scalar("SELECT count(*) FROM facts WHERE text = %s", (reply,)) == 0


def test_aliases_of_an_entity_count_as_kept(wine_spec, gazetteer):
    config = wine_spec.facts.model_copy(update={"paraphrase_model": "scripted"})
    text = "Pinot Noir is the main red grape variety grown in the vineyards of Burgundy."
    burgundy = Mention("region:burgundy", "region", "Burgundy")
    pinot = Mention("grape_variety:pinot_noir", "grape_variety", "Pinot Noir")
    reply = "In Bourgogne, the leading red variety planted is Spätburgunder, that is Pinot Noir."
    fact_set = select(
        [candidate(text, 0, (pinot, burgundy))], config, embed_apart, {}, scripted({text: reply}), gazetteer
    )
    assert fact_set.facts[0].candidate.text == reply


def _document(db) -> None:
    """A stored document for the test facts to point at (its own source, so no other test's rows are touched)."""
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("""INSERT INTO sources (source_id, spec, adapter, title, publisher, base_url, tier, licence,
                       attribution) VALUES ('facts_test_source', 'facts_test_paraphrase', 'page', 'test', 'test',
                       'https://example.org', 3, 'CC0-1.0', 'test') ON CONFLICT DO NOTHING""")
        cur.execute(
            """INSERT INTO documents (document_id, source_id, url, retrieved_at, media_type, content_hash,
                       raw, text, title) VALUES (%s, 'facts_test_source', 'https://example.org/doc', now(),
                       'text/plain', repeat('a', 64), 'x', %s, 'test') ON CONFLICT DO NOTHING""",
            (DOCUMENT, SOURCE),
        )

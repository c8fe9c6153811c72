"""Near-duplicate removal at cosine >= 0.92 with the shipped sentence embedder and faiss."""

from __future__ import annotations

import numpy as np
import pytest

from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.facts.build import select
from benchmark_platform.facts.dedup import near_duplicates
from benchmark_platform.facts.models import Candidate, Mention

PINOT = Mention("grape_variety:pinot_noir", "grape_variety", "Pinot Noir")
GRIS = Mention("grape_variety:pinot_gris", "grape_variety", "Pinot Gris")


@pytest.fixture(scope="module")
def encode():
    return StaticEmbedder().encode


def fact(text: str, start: int, mentions=(), source="wikibooks_wine", confidence=1.0, **attributes) -> Candidate:
    method = f"template:{attributes['field']}" if attributes else "sentence"
    return Candidate(
        source,
        f"doc-{source}",
        start,
        start + 10,
        "grape_varieties",
        text,
        text,
        confidence,
        method,
        tuple(mentions),
        attributes,
    )


def test_paraphrases_are_removed_and_the_better_sourced_one_is_kept(encode):
    candidates = [
        fact("Pinot Noir is a red grape variety that ripens early.", 0, [PINOT]),
        fact("Pinot Noir is an early-ripening red grape variety.", 100, [PINOT], source="ttb_ava_geojson"),
        fact("Phylloxera destroyed most vineyards of Europe in the nineteenth century.", 200),
    ]
    vectors = encode([c.text for c in candidates])
    assert float(vectors[0] @ vectors[1]) >= 0.92 > float(vectors[0] @ vectors[2])
    result = near_duplicates(candidates, encode, 0.92, tiers={"ttb_ava_geojson": 1, "wikibooks_wine": 3})
    assert sorted(result.kept) == [1, 2]  # tier 1 wins over tier 3
    [duplicate] = result.duplicates
    assert (duplicate.index, duplicate.kept) == (0, 1) and duplicate.cosine >= 0.92


def test_guards_keep_facts_that_differ_in_an_entity_or_a_number(encode):
    numbers = [
        fact("The region planted 1200 hectares of vines in 1990.", 0),
        fact("The region planted 1300 hectares of vines in 1990.", 100),
    ]
    vectors = encode([c.text for c in numbers])
    assert float(vectors[0] @ vectors[1]) >= 0.92
    result = near_duplicates(numbers, encode, 0.92, tiers={})
    assert sorted(result.kept) == [0, 1] and result.guarded_pairs == 1
    # the static embedder puts these two at 0.87: at a threshold of 0.85 only the entity guard keeps them apart
    grapes = [
        fact("Pinot Noir ripens early in the vineyards of the region.", 0, [PINOT]),
        fact("Pinot Gris ripens early in the vineyards of the region.", 100, [GRIS]),
    ]
    assert sorted(near_duplicates(grapes, encode, 0.85, tiers={}).kept) == [0, 1]
    unlinked = [fact(c.text, c.span_start) for c in grapes]
    assert near_duplicates(unlinked, encode, 0.85, tiers={}).kept == [0]


def test_template_facts_only_duplicate_the_same_sentence_about_the_same_entity(encode):
    def ava(name: str, start: int, state: str) -> Candidate:
        return fact(
            f"The {name} American Viticultural Area lies in the US state {state}.",
            start,
            entity_id=f"ava:{name.lower()}",
            field="state",
            value=state,
        )

    candidates = [ava("Oakville", 0, "CA"), ava("Rutherford", 100, "CA"), ava("Oakville", 200, "CA")]
    result = near_duplicates(candidates, encode, 0.92, tiers={})
    assert sorted(result.kept) == [0, 1] and [(d.index, d.kept) for d in result.duplicates] == [(2, 0)]


def test_select_links_each_removed_duplicate_to_the_kept_fact(encode):
    candidates = [
        fact("Pinot Noir is a red grape variety that ripens early.", 0, [PINOT]),
        fact("Pinot Noir is an early-ripening red grape variety.", 100, [PINOT]),
    ]
    fact_set = select(candidates, _config(), encode, tiers={})
    [kept] = fact_set.facts
    [removed] = fact_set.duplicates
    assert removed.kept_fact_id == kept.fact_id and removed.candidate.span_start == 100
    assert fact_set.text_mode == "validated sentence"


def test_no_candidates(encode):
    result = near_duplicates([], encode, 0.92, tiers={})
    assert result.kept == [] and result.duplicates == []
    assert np.asarray(encode(["a wine"])).dtype == np.float32


def _config():
    from benchmark_platform.facts.config import FactsConfig

    return FactsConfig()

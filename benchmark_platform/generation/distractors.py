"""Confusable-entity mining (OenoBench 3.4 'distractor mining'): wrong answers of the right answer's category.

Candidates are the entities of the same type in the discipline's facts (entity links and structured-fact subjects).
Plausibility = cosine similarity of the names' embeddings + `SHARED_ATTRIBUTE_BONUS` per structured attribute the
candidate shares with the answer (two AVAs of one state, two grapes of one colour). A candidate that shares the asked
field's value with the answer would also be right and is never offered.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from benchmark_platform.embed import Embedder, integer_rows, similarities
from benchmark_platform.generation.model import Fact, norm

SHARED_ATTRIBUTE_BONUS = 0.25
TYPE_LABELS = {
    "ava": "American Viticultural Area",
    "grape_variety": "grape variety",
    "appellation": "appellation",
    "producer": "wine producer",
    "region": "wine region",
    "departement": "département",
    "department": "département",
    "country": "country",
    "organization": "organisation",
    "person": "person",
}


def type_label(entity_type: str) -> str:
    return TYPE_LABELS.get(entity_type, entity_type.replace("_", " "))


@dataclass
class _TypeIndex:
    names: list[str] = field(default_factory=list)  # display names, in first-seen order of the sorted facts
    keys: dict[str, int] = field(default_factory=dict)  # norm(name) -> row
    attributes: list[dict[str, str]] = field(default_factory=list)  # field -> norm(value)
    vectors: np.ndarray | None = None  # the names' embeddings as embed.exact.integer_rows (exact similarities)
    codes: dict[str, np.ndarray] = field(default_factory=dict)  # field -> value code per row (-1 when absent)
    code_of: dict[str, dict[str, int]] = field(default_factory=dict)  # field -> norm(value) -> code


@dataclass(frozen=True)
class Query:
    entity_type: str
    answer: str
    exclude_field: str | None = None  # candidates sharing the answer's value of this field would also be right
    exclude_value: str | None = None


class EntityCatalogue:
    """The entities of a discipline by type, with their structured attributes and name embeddings."""

    def __init__(self, facts: list[Fact], embedder: Embedder) -> None:
        surfaces: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
        attrs: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
        for fact in sorted(facts, key=lambda f: f.fact_id):
            # a structured fact (subject, field and value all set) of a typed entity
            if fact.entity_type and fact.subject is not None and fact.field is not None and fact.value is not None:
                surfaces[fact.entity_type][norm(fact.subject)][fact.subject] += 1
                attrs[(fact.entity_type, norm(fact.subject))][fact.field] = norm(fact.value)
            for entity in fact.entities:
                surfaces[entity.entity_type][norm(entity.surface)][entity.surface] += 1
        self.types: dict[str, _TypeIndex] = {}
        for entity_type in sorted(surfaces):
            index = _TypeIndex()
            for key in sorted(surfaces[entity_type]):
                index.keys[key] = len(index.names)
                index.names.append(surfaces[entity_type][key].most_common(1)[0][0])
                index.attributes.append(attrs.get((entity_type, key), {}))
            index.vectors = integer_rows(embedder.encode(index.names)) if index.names else None
            for f in sorted({f for a in index.attributes for f in a}):
                index.code_of[f] = {v: i for i, v in enumerate(sorted({a[f] for a in index.attributes if f in a}))}
                index.codes[f] = np.array(
                    [index.code_of[f].get(a.get(f, ""), -1) for a in index.attributes], dtype=np.int32
                )
            self.types[entity_type] = index

    def mine_many(self, queries: list[Query], k: int, block: int = 256) -> list[list[tuple[str, float]]]:
        """The k most plausible wrong answers for each query: a block of queries is scored as one matrix (name
        similarities, shared-attribute bonuses, exclusions), and only the top few of each row are read in Python."""
        out: list[list[tuple[str, float]]] = [[] for _ in queries]
        by_type: dict[str, list[int]] = defaultdict(list)
        for i, q in enumerate(queries):
            if q.entity_type in self.types and self.types[q.entity_type].vectors is not None:
                by_type[q.entity_type].append(i)
        for entity_type, members in by_type.items():
            index = self.types[entity_type]
            for at in range(0, len(members), block):
                chunk = members[at : at + block]
                block_queries = [queries[i] for i in chunk]
                scores = _scores(index, block_queries, [index.keys.get(norm(q.answer)) for q in block_queries])
                first = top_rows(scores, 8 * k + 8)
                for i, q, row_scores, row_first in zip(chunk, block_queries, scores, first, strict=True):
                    out[i] = _pick(index, q, row_scores, row_first, k)
        return out


def _scores(index: _TypeIndex, queries: list[Query], rows: list[int | None]) -> np.ndarray:
    """Plausibility of every candidate (columns) for each query (rows): cosine of the names (0 when the answer is
    not in the catalogue) + SHARED_ATTRIBUTE_BONUS per attribute shared with the answer, except the asked field;
    -inf where the candidate shares the asked field's value (it would also be right)."""
    assert index.vectors is not None
    # exact float64 similarities (integer rows, embed.exact): the scores, and so the ties, do not depend on the block
    # size, the BLAS kernel or the CPU (issue 30)
    scores: np.ndarray = similarities(index.vectors[[r if r is not None else 0 for r in rows]], index.vectors)
    scores[[j for j, r in enumerate(rows) if r is None]] = 0.0
    absent, unmatched = -3, -2  # codes are >= -1, so these match no candidate
    for f, codes in index.codes.items():
        own = np.array(
            [
                index.code_of[f][index.attributes[r][f]]
                if r is not None and f != q.exclude_field and f in index.attributes[r]
                else absent
                for q, r in zip(queries, rows, strict=True)
            ]
        )
        scores += SHARED_ATTRIBUTE_BONUS * (codes[None, :] == own[:, None])
    for f, codes in index.codes.items():
        same = np.array(
            [
                index.code_of[f].get(norm(q.exclude_value or ""), unmatched) if q.exclude_field == f else absent
                for q in queries
            ]
        )
        if (same != absent).any():
            scores[codes[None, :] == same[:, None]] = -np.inf
    return scores


def _pick(index: _TypeIndex, q: Query, scores: np.ndarray, first: np.ndarray, k: int) -> list[tuple[str, float]]:
    """The k best-scoring names that are not the answer itself, in `first` order, else in full order."""
    key = norm(q.answer)
    out: list[tuple[str, float]] = []
    for order in first_then_all(first, scores):
        out = []
        for i in order:
            name = index.names[i]
            if not np.isfinite(scores[i]):
                break
            if norm(name) in key or key in norm(name):
                continue
            out.append((name, float(scores[i])))
            if len(out) == k:
                return out
    return out


def first_then_all(first: np.ndarray, scores: np.ndarray) -> Iterator[np.ndarray]:
    yield first
    yield np.argsort(-scores, kind="stable")  # sorted only when the first few did not suffice


def top_rows(scores: np.ndarray, n: int) -> np.ndarray:
    """Per row, the indices of the n highest scores, highest first (ties by index), without sorting the rest."""
    m = scores.shape[1]
    if m <= n:
        return np.argsort(-scores, axis=1, kind="stable")
    # argpartition's choice among scores equal to the n-th largest depends on the CPU's sort kernel: take all scores
    # above it and the lowest-index ones equal to it instead (the n-th largest value itself is the same everywhere)
    cut = np.partition(scores, m - n, axis=1)[:, m - n : m - n + 1]
    above, at = scores > cut, scores == cut
    keep = above | (at & (np.cumsum(at, axis=1) <= n - above.sum(axis=1, keepdims=True)))
    part = np.nonzero(keep)[1].reshape(len(scores), n)  # each row's n kept indices, in index order
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def top(scores: np.ndarray, n: int) -> np.ndarray:
    """Indices of the n highest scores, highest first (ties by index), without sorting the rest."""
    return np.asarray(top_rows(scores[None, :], n)[0])

"""Confusable-entity mining (OenoBench 3.4 'distractor mining'): wrong answers of the right answer's category.

Candidates are the entities of the same type in the discipline's facts (entity links and structured-fact subjects).
Plausibility = cosine similarity of the names' embeddings + `SHARED_ATTRIBUTE_BONUS` per structured attribute the
candidate shares with the answer (two AVAs of one state, two grapes of one colour). A candidate that shares the asked
field's value with the answer would also be right and is never offered.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np

from benchmark_platform.embed import Embedder
from benchmark_platform.generation.model import Fact, norm

SHARED_ATTRIBUTE_BONUS = 0.25
TYPE_LABELS = {"ava": "American Viticultural Area", "grape_variety": "grape variety", "appellation": "appellation",
               "producer": "wine producer", "region": "wine region", "country": "country",
               "organization": "organisation", "person": "person"}


def type_label(entity_type: str) -> str:
    return TYPE_LABELS.get(entity_type, entity_type.replace("_", " "))


@dataclass
class _TypeIndex:
    names: list[str] = field(default_factory=list)  # display names, in first-seen order of the sorted facts
    keys: dict[str, int] = field(default_factory=dict)  # norm(name) -> row
    attributes: list[dict[str, str]] = field(default_factory=list)  # field -> norm(value)
    vectors: np.ndarray | None = None
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
            if fact.structured and fact.entity_type:
                surfaces[fact.entity_type][norm(fact.subject)][fact.subject] += 1  # type: ignore[arg-type]
                key = (fact.entity_type, norm(fact.subject))  # type: ignore[arg-type]
                attrs[key][fact.field] = norm(fact.value)  # type: ignore[arg-type,index]
            for entity in fact.entities:
                surfaces[entity.entity_type][norm(entity.surface)][entity.surface] += 1
        self.types: dict[str, _TypeIndex] = {}
        for entity_type in sorted(surfaces):
            index = _TypeIndex()
            for key in sorted(surfaces[entity_type]):
                index.keys[key] = len(index.names)
                index.names.append(surfaces[entity_type][key].most_common(1)[0][0])
                index.attributes.append(attrs.get((entity_type, key), {}))
            index.vectors = embedder.encode(index.names) if index.names else None
            for f in sorted({f for a in index.attributes for f in a}):
                index.code_of[f] = {v: i for i, v in enumerate(sorted({a[f] for a in index.attributes if f in a}))}
                index.codes[f] = np.array([index.code_of[f].get(a.get(f, ""), -1) for a in index.attributes],
                                          dtype=np.int32)
            self.types[entity_type] = index

    def mine_many(self, queries: list[Query], k: int, block: int = 256) -> list[list[tuple[str, float]]]:
        """`mine` for many answers: the name similarities of a block of answers are one matrix product."""
        out: list[list[tuple[str, float]]] = [[] for _ in queries]
        by_type: dict[str, list[int]] = defaultdict(list)
        for i, q in enumerate(queries):
            if q.entity_type in self.types and self.types[q.entity_type].vectors is not None:
                by_type[q.entity_type].append(i)
        for entity_type, members in by_type.items():
            index = self.types[entity_type]
            vectors = index.vectors
            assert vectors is not None
            for at in range(0, len(members), block):
                chunk = members[at: at + block]
                rows = [index.keys.get(norm(queries[i].answer)) for i in chunk]
                sims = vectors[[r if r is not None else 0 for r in rows]] @ vectors.T
                for i, row, scores in zip(chunk, rows, sims, strict=True):
                    out[i] = self._finish(index, queries[i], row, scores if row is not None else scores * 0, k)
        return out

    @staticmethod
    def _finish(index: _TypeIndex, q: Query, row: int | None, scores: np.ndarray,
                k: int) -> list[tuple[str, float]]:
        key = norm(q.answer)
        for f, v in (index.attributes[row] if row is not None else {}).items():
            if f != q.exclude_field:
                scores = scores + SHARED_ATTRIBUTE_BONUS * (index.codes[f] == index.code_of[f][v])
        if q.exclude_field in index.codes:
            same = index.code_of[q.exclude_field].get(norm(q.exclude_value or ""), -2)
            scores = np.where(index.codes[q.exclude_field] == same, -np.inf, scores)
        out: list[tuple[str, float]] = []
        for order in (top(scores, 8 * k + 8), np.argsort(-scores, kind="stable")):
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


def top(scores: np.ndarray, n: int) -> np.ndarray:
    """Indices of the n highest scores, highest first (ties by index), without sorting the rest."""
    if len(scores) <= n:
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, n)[:n]
    return part[np.lexsort((part, -scores[part]))]

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
    columns: dict[str, np.ndarray] = field(default_factory=dict)  # field -> norm(value) per row ('' when absent)


class EntityCatalogue:
    """The entities of a discipline by type, with their structured attributes and name embeddings."""

    def __init__(self, facts: list[Fact], embedder: Embedder) -> None:
        surfaces: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
        attrs: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
        for fact in sorted(facts, key=lambda f: f.fact_id):
            if fact.structured and fact.entity_type:
                surfaces[fact.entity_type][norm(fact.subject)][fact.subject] += 1  # type: ignore[arg-type]
                attrs[(fact.entity_type, norm(fact.subject))][fact.field] = norm(fact.value)  # type: ignore[arg-type,index]
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
                index.columns[f] = np.array([a.get(f, "") for a in index.attributes], dtype=object)
            self.types[entity_type] = index

    def size(self, entity_type: str) -> int:
        index = self.types.get(entity_type)
        return len(index.names) if index else 0

    def attributes(self, entity_type: str, name: str) -> dict[str, str]:
        index = self.types.get(entity_type)
        row = index.keys.get(norm(name)) if index else None
        return index.attributes[row] if index is not None and row is not None else {}

    def mine(self, entity_type: str, answer: str, k: int, exclude_field: str | None = None,
             exclude_value: str | None = None) -> list[tuple[str, float]]:
        """Up to `k` confusable names, most plausible first, with their plausibility scores."""
        index = self.types.get(entity_type)
        if index is None or index.vectors is None:
            return []
        key = norm(answer)
        row = index.keys.get(key)
        answer_attrs = index.attributes[row] if row is not None else {}
        scores = index.vectors @ index.vectors[row] if row is not None else np.zeros(len(index.names), np.float32)
        for f, v in answer_attrs.items():
            if f != exclude_field:
                scores = scores + SHARED_ATTRIBUTE_BONUS * (index.columns[f] == v)
        if exclude_field in index.columns:
            scores = np.where(index.columns[exclude_field] == norm(exclude_value or ""), -np.inf, scores)
        for order in (top(scores, 8 * k + 8), np.argsort(-scores, kind="stable")):
            out: list[tuple[str, float]] = []
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

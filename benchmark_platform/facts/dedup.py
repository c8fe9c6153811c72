"""Near-duplicate suppression (OenoBench Appendix A: cosine >= 0.92) with sentence embeddings and faiss.

Candidates are visited in priority order (source tier, then confidence, then document order); one is dropped as a
duplicate of the first kept candidate it reaches cosine >= threshold with. Two guards keep distinct facts that a
sentence embedding cannot tell apart: a duplicate must state the same numbers, and the linked entities of one
must include the other's ('Pinot Noir ripens early' is no duplicate of 'Pinot Gris ripens early'). Template and rulebook
facts (thousands of near-identical sentences about different records) skip the embedding: one duplicates another only
when both say the same sentence about the same entity.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import faiss
import numpy as np
import numpy.typing as npt

from benchmark_platform.facts.models import Candidate

Encode = Callable[[Sequence[str]], npt.NDArray[np.float32]]  # texts -> L2-normalised rows (embed.Embedder.encode)

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


@dataclass(frozen=True)
class Duplicate:
    index: int  # position in the input of the dropped candidate
    kept: int  # position of the kept candidate it duplicates
    cosine: float


@dataclass(frozen=True)
class Dedup:
    kept: list[int]  # positions, in priority order
    duplicates: list[Duplicate]
    guarded_pairs: int  # pairs over the threshold that a guard kept apart


def priority(candidates: Sequence[Candidate], tiers: Mapping[str, int]) -> list[int]:
    return sorted(
        range(len(candidates)),
        key=lambda i: (
            tiers.get(candidates[i].source_id, 9),
            -candidates[i].confidence,
            candidates[i].document_id,
            candidates[i].span_start,
            candidates[i].span_end,
        ),
    )


def near_duplicates(
    candidates: Sequence[Candidate], encode: Encode, threshold: float, tiers: Mapping[str, int]
) -> Dedup:
    order = priority(candidates, tiers)
    kept_ranks: set[int] = set()
    duplicates: list[Duplicate] = []
    first_by_key: dict[tuple[object, ...], int] = {}
    prose: list[int] = []  # ranks of prose candidates
    for rank, i in enumerate(order):
        if candidates[i].method.startswith(("template:", "rulebook:")):
            key = (candidates[i].attributes.get("entity_id"), candidates[i].text)
            if key in first_by_key:
                duplicates.append(Duplicate(i, order[first_by_key[key]], 1.0))
            else:
                first_by_key[key] = rank
                kept_ranks.add(rank)
        else:
            prose.append(rank)
    guarded = 0
    if prose:
        vectors = np.ascontiguousarray(encode([candidates[order[r]].text for r in prose]), dtype=np.float32)
        index = faiss.IndexFlatIP(vectors.shape[1])
        index.add(vectors)
        limits, similarities, neighbours = index.range_search(vectors, threshold)
        keys = [_guard_key(candidates[order[r]]) for r in prose]
        kept = np.zeros(len(prose), dtype=bool)
        for j in range(len(prose)):
            found = None
            window = slice(limits[j], limits[j + 1])
            for similarity, other in sorted(
                zip(similarities[window].tolist(), neighbours[window].tolist(), strict=True),
                key=lambda pair: (-pair[0], pair[1]),
            ):
                if other >= j or not kept[other]:
                    continue
                if _compatible(keys[j], keys[other]):
                    found = (other, similarity)
                    break
                guarded += 1
            if found is None:
                kept[j] = True
                kept_ranks.add(prose[j])
            else:
                duplicates.append(Duplicate(order[prose[j]], order[prose[found[0]]], round(found[1], 4)))
    return Dedup([order[r] for r in sorted(kept_ranks)], duplicates, guarded)


def _guard_key(candidate: Candidate) -> tuple[frozenset[str], tuple[str, ...]]:
    return frozenset(m.entity_id for m in candidate.mentions), tuple(_NUMBER.findall(candidate.text))


def _compatible(a: tuple[frozenset[str], tuple[str, ...]], b: tuple[frozenset[str], tuple[str, ...]]) -> bool:
    return a[1] == b[1] and (a[0] <= b[0] or b[0] <= a[0])

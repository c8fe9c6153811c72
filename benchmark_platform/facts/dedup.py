"""Near-duplicate suppression (OenoBench Appendix A: cosine >= 0.92) with sentence embeddings, searched exactly.

Candidates are visited in priority order (source tier, then confidence, then document order); one is dropped as a
duplicate of the first kept candidate it reaches cosine >= threshold with. Two guards keep distinct facts that a
sentence embedding cannot tell apart: a duplicate must state the same numbers, and the linked entities of one
must include the other's ('Pinot Noir ripens early' is no duplicate of 'Pinot Gris ripens early'). Template and rulebook
facts (thousands of near-identical sentences about different records) skip the embedding: one duplicates another only
when both say the same sentence about the same entity.

The cosines are exact (embeddings as integer rows, embed.exact): which pairs reach the threshold, and so which facts
survive, is the same on every BLAS kernel and CPU (issue 30).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from benchmark_platform.embed import integer_rows, similarities
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
        grid = integer_rows(encode([candidates[order[r]].text for r in prose]))
        limits, similarities_found, neighbours = _range_search(grid, threshold)
        keys = [_guard_key(candidates[order[r]]) for r in prose]
        kept = np.zeros(len(prose), dtype=bool)
        for j in range(len(prose)):
            found = None
            window = slice(limits[j], limits[j + 1])
            for similarity, other in sorted(
                zip(similarities_found[window].tolist(), neighbours[window].tolist(), strict=True),
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


def _range_search(grid: np.ndarray, threshold: float, block: int = 1024) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every row's neighbours with cosine >= threshold, as faiss's range_search lays them out (limits, cosines,
    indices; row j's are at limits[j]:limits[j + 1]); exact, a block of rows at a time."""
    counts, found_sims, found_rows = [], [], []
    for start in range(0, len(grid), block):
        sims = similarities(grid[start : start + block], grid)
        rows, cols = np.nonzero(sims >= threshold)
        counts.append(np.bincount(rows, minlength=len(sims)))
        found_sims.append(sims[rows, cols])
        found_rows.append(cols)
    limits = np.concatenate([[0], np.cumsum(np.concatenate(counts))]).astype(np.int64)
    return limits, np.concatenate(found_sims), np.concatenate(found_rows).astype(np.int64)


def _guard_key(candidate: Candidate) -> tuple[frozenset[str], tuple[str, ...]]:
    return frozenset(m.entity_id for m in candidate.mentions), tuple(_NUMBER.findall(candidate.text))


def _compatible(a: tuple[frozenset[str], tuple[str, ...]], b: tuple[frozenset[str], tuple[str, ...]]) -> bool:
    return a[1] == b[1] and (a[0] <= b[0] or b[0] <= a[0])

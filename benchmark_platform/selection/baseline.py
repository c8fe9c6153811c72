"""Foundation selection: embedding coverage of the discipline's fact pool, maximised by plain greedy.

F(S) = sum_u max_{q in S} sim(q, u) over a sparse k-NN graph (faiss): monotone submodular, so greedy is within
(1 - 1/e) of the optimum. The KINA anchor-based support-centrality selection replaces it (selection/ of issue 6).
"""

from __future__ import annotations

from dataclasses import dataclass

import faiss
import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class Pick:
    index: int
    gain: float


def knn_graph(vectors: npt.NDArray[np.float32], k: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Each row's k nearest rows (itself included) and their cosine similarities, clipped at 0."""
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    sims, neighbours = index.search(vectors, min(k, len(vectors)))
    return neighbours, np.clip(sims, 0.0, None)


def greedy_coverage(vectors: npt.NDArray[np.float32], budget: int, k: int = 16) -> list[Pick]:
    n = len(vectors)
    if n == 0 or budget <= 0:
        return []
    neighbours, sims = knn_graph(vectors, k)
    covered = np.zeros(n, dtype=np.float32)
    chosen = np.zeros(n, dtype=bool)
    picks: list[Pick] = []
    for _ in range(min(budget, n)):
        # gain of q: what q adds to the coverage of its neighbours (similarity is symmetric)
        gains = np.maximum(sims - covered[neighbours], 0.0).sum(axis=1)
        gains[chosen] = -1.0
        best = int(np.argmax(gains))  # ties go to the lowest index: deterministic
        chosen[best] = True
        picks.append(Pick(best, float(gains[best])))
        np.maximum.at(covered, neighbours[best], sims[best])
    return picks

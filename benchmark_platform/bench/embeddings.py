"""Embeddings benchmark: the shipped static embedder against the full all-MiniLM-L6-v2 on real atomic facts.

Speed: sentences/s of both on the same 343 OenoBench facts, timed side by side (interleaved repeats, medians).
Agreement on the first 300 facts: Spearman correlation of all pairwise cosines, nearest-neighbour overlap,
near-duplicate pairs found at cosine >= 0.92 (and nearby thresholds), and question -> fact retrieval top-1
accuracy with each fact's generated question. Needs the ``embed-full`` extra and ../shared/data.
Prints one JSON line.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import polars as pl
import torch
from scipy.stats import spearmanr

from benchmark_platform.embed import STATIC_MODEL_DIR, Embedder, SentenceTransformerEmbedder, StaticEmbedder
from benchmark_platform.paths import PROJECT_ROOT

FACTS_CSV = PROJECT_ROOT.parent / "shared" / "data" / "oenobench" / "prescreen" / "prescreen_b2_prototype.csv"
AGREEMENT_SENTENCES = 300
NEAR_DUP_COSINE = 0.92
THRESHOLDS = (0.80, 0.85, 0.90, 0.92, 0.95)
NEIGHBOURS = 10
REPEATS = 3
STATIC_COPIES = 20  # the static model is so fast that one pass over 343 facts is too short to time


def _timed(encode: Callable[[], object]) -> float:
    start = time.perf_counter()
    encode()
    return time.perf_counter() - start


def _pairwise(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    upper = np.triu_indices(len(vectors), k=1)
    return (vectors @ vectors.T)[upper]


def _neighbours(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.intp]:
    cosines = vectors @ vectors.T
    np.fill_diagonal(cosines, -np.inf)
    return np.argsort(-cosines, axis=1, kind="stable")[:, :NEIGHBOURS]


def _retrieval_top1(embedder: Embedder, questions: list[str], facts: npt.NDArray[np.float32]) -> float:
    best = np.argmax(embedder.encode(questions) @ facts.T, axis=1)
    return float(np.mean(best == np.arange(len(questions))))


def main() -> None:
    frame = pl.read_csv(FACTS_CSV)
    facts: list[str] = frame["fact_text"].to_list()
    questions: list[str] = frame["candidate_question"].to_list()

    start = time.perf_counter()
    static = StaticEmbedder()
    static_load_s = time.perf_counter() - start
    start = time.perf_counter()
    full = SentenceTransformerEmbedder()
    full_load_s = time.perf_counter() - start

    many_facts = facts * STATIC_COPIES
    static.encode(facts)  # warm-up
    full.encode(facts[:8])
    static_s, full_s = [], []
    for _ in range(REPEATS):
        static_s.append(_timed(lambda: static.encode(many_facts)))
        full_s.append(_timed(lambda: full.encode(facts)))
    static_rate = len(many_facts) / statistics.median(static_s)
    full_rate = len(facts) / statistics.median(full_s)

    static_vectors, full_vectors = static.encode(facts), full.encode(facts)
    sample_static, sample_full = static_vectors[:AGREEMENT_SENTENCES], full_vectors[:AGREEMENT_SENTENCES]
    cos_static, cos_full = _pairwise(sample_static), _pairwise(sample_full)
    near_dups = {
        f"{threshold:.2f}": {
            "static": int(np.sum(cos_static >= threshold)),
            "full": int(np.sum(cos_full >= threshold)),
            "both": int(np.sum((cos_static >= threshold) & (cos_full >= threshold))),
        }
        for threshold in THRESHOLDS
    }
    top_static, top_full = _neighbours(sample_static), _neighbours(sample_full)
    overlap = np.mean([len(set(a) & set(b)) / NEIGHBOURS for a, b in zip(top_static, top_full, strict=True)])
    # The static cosine above which as many pairs lie as above the full model's threshold.
    matched_pairs = max(near_dups[f"{NEAR_DUP_COSINE:.2f}"]["full"], 1)
    static_matched_threshold = float(np.sort(cos_static)[-matched_pairs])

    print(
        json.dumps(
            {
                "bench": "embeddings",
                "sentences": len(facts),
                "static_model": static.name,
                "static_version": static.version,
                "static_dim": static.dim,
                "static_model_mb": round(sum(p.stat().st_size for p in STATIC_MODEL_DIR.iterdir()) / 2**20, 2),
                "full_model": full.name,
                "full_version": full.version,
                "full_dim": full.dim,
                "static_load_s": round(static_load_s, 3),
                "full_load_s": round(full_load_s, 3),
                "static_sentences_per_s": round(static_rate, 1),
                "full_sentences_per_s": round(full_rate, 1),
                "static_speedup": round(static_rate / full_rate, 1),
                "agreement_sentences": len(sample_static),
                "agreement_pairs": len(cos_static),
                "spearman_pairwise_cosine": round(float(spearmanr(cos_static, cos_full).statistic), 4),
                "mean_pairwise_cosine_static": round(float(cos_static.mean()), 4),
                "mean_pairwise_cosine_full": round(float(cos_full.mean()), 4),
                f"neighbour_overlap_at_{NEIGHBOURS}": round(float(overlap), 4),
                "near_dup_cosine": NEAR_DUP_COSINE,
                "near_dup_pairs_static": near_dups[f"{NEAR_DUP_COSINE:.2f}"]["static"],
                "near_dup_pairs_full": near_dups[f"{NEAR_DUP_COSINE:.2f}"]["full"],
                "near_dup_pairs_both": near_dups[f"{NEAR_DUP_COSINE:.2f}"]["both"],
                "near_dup_pairs_by_threshold": near_dups,
                "static_cosine_matching_full_near_dup_count": round(static_matched_threshold, 4),
                "question_to_fact_top1_static": round(_retrieval_top1(static, questions, static_vectors), 4),
                "question_to_fact_top1_full": round(_retrieval_top1(full, questions, full_vectors), 4),
                "torch_threads": torch.get_num_threads(),
                "cpu_count": os.cpu_count(),
                "loadavg_1m_at_end": round(os.getloadavg()[0], 2),
            }
        )
    )


if __name__ == "__main__":
    main()

"""Sentence embedders (embedders.py: texts in, L2-normalised float32 rows out, the same bytes on every run) and
exact, platform-independent similarity arithmetic over them (exact.py)."""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.embed.embedders import (
        STATIC_MODEL_DIR,
        Embedder,
        SentenceTransformerEmbedder,
        StaticEmbedder,
    )
    from benchmark_platform.embed.exact import (
        fixed_dot,
        fixed_matmul,
        fixed_matvec,
        integer_rows,
        quantise,
        rowwise_similarities,
        similarities,
        stable_smallest,
        top_k,
    )
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "Embedder",
    "STATIC_MODEL_DIR",
    "SentenceTransformerEmbedder",
    "StaticEmbedder",
    "fixed_dot",
    "fixed_matmul",
    "fixed_matvec",
    "integer_rows",
    "quantise",
    "rowwise_similarities",
    "similarities",
    "stable_smallest",
    "top_k",
]

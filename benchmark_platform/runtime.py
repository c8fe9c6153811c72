"""Process-wide settings a stage holds around its hot loop: one BLAS thread, and a frozen heap for the collector."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from threadpoolctl import threadpool_limits


def single_threaded_blas() -> threadpool_limits:
    """One BLAS thread while it is held (process-wide). The stages run many small products (analyses' bootstrap
    blocks, generation's mining blocks of 64 queries) next to an event loop or other steps: extra BLAS threads only
    spin and wait on each other. Measured: 24 ms vs 0.7 ms for 1000 x 308 x 42 on a loaded 2-core machine, and
    generation's capacity check 0.32 s vs 0.04 s when its process has one core."""
    return threadpool_limits(limits=1, user_api="blas")


_frozen_depth = 0


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Objects alive on entry (loaded facts, indexes, embeddings) are left out of the cyclic collector's passes until
    exit; what the block allocates is collected as usual, and on exit everything is collectable again (nested blocks
    unfreeze with the outermost). A round of thousands of LLM calls allocates enough to trigger full collections, and
    each one walked the whole loaded heap: generation's round went from 0.88 to 0.92 of the gateway bound (bench, 3
    runs each)."""
    global _frozen_depth
    if _frozen_depth == 0:
        gc.freeze()
    _frozen_depth += 1
    try:
        yield
    finally:
        _frozen_depth -= 1
        if _frozen_depth == 0:
            gc.unfreeze()

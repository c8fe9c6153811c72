"""One process's share of test_cross_blas: the selection and analysis outputs of `mmlu_pro` and `wine` from stored
inputs, each written as release parquet bytes and reported by sha256 (JSON on stdout).

Run as `python -m benchmark_platform_tests.pipeline.cross_blas_worker` under the BLAS settings to compare. Inputs:
MMLU-Pro's shipped bank and imported answers, and wine's fact candidates as a full build stored them
(fixtures/wine_fact_candidates.parquet), so no database and no pipeline run is needed.
"""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path

import polars as pl
from threadpoolctl import threadpool_info

from benchmark_platform.analysis.irt import pool_accuracy_table
from benchmark_platform.anchors import load_anchor_set
from benchmark_platform.centrality.models import Candidate
from benchmark_platform.centrality.scoring import score_discipline
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.evaluation.importers import read_spec_imports
from benchmark_platform.itembank.run import load_bank
from benchmark_platform.release.bundle import parquet_bytes, sha256_bytes
from benchmark_platform.runtime import single_threaded_blas
from benchmark_platform.selection.policy import build_problem, capped_to_attainable, select
from benchmark_platform.selection.problem import SelectionResult
from benchmark_platform.selection.response import select_with_responses
from benchmark_platform.selection.run import imported_responses
from benchmark_platform.spec import load_spec

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "wine_fact_candidates.parquet"
# the smallest and largest MMLU-Pro categories by selected items, and wine's two largest fact pools
MMLU_PRO = ("history", "math")
WINE = ("grape_varieties", "business")


def _digest(frame: pl.DataFrame) -> str:
    return sha256_bytes(parquet_bytes(frame, "cross-blas", "cross-blas"))


def _selection_frame(result: SelectionResult, response: dict[str, str | int | float]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "item_id": list(result.selected_ids),
            "gain": list(result.gains),
            "objective": [result.objective] * len(result.selected_ids),
            "upper_bound": [result.upper_bound] * len(result.selected_ids),
            "response": [json.dumps(response, sort_keys=True)] * len(result.selected_ids),
        }
    )


def main() -> None:
    outputs: dict[str, str] = {}
    embedder = StaticEmbedder()

    spec = load_spec("mmlu_pro")
    params = spec.selection.centrality
    bank = load_bank(spec.item_bank, spec.directory)
    results = read_spec_imports(spec.evaluation.imports, spec.directory)
    assert results is not None
    chosen: list[str] = []
    for discipline in MMLU_PRO:
        candidates = [
            Candidate(
                id=i.item_id, text=f"{i.question} {i.options[i.answer_index]}", src=i.source, stratum_key=i.stratum_key
            )
            for i in bank.for_discipline(discipline)
        ]
        anchors = load_anchor_set(spec.anchors_dir / discipline)
        scored = score_discipline(candidates, anchors, params, embedder.encode, tau_dup=spec.selection.tau_dup)
        problem = capped_to_attainable(
            build_problem(scored.items, scored.pairs, anchors, spec.selection.tau_dup), anchors.k_total
        )
        with single_threaded_blas():  # as selection/run.py holds it
            result, response = select_with_responses(
                problem,
                imported_responses(spec, problem.candidate_ids),
                spec.selection.response,
                lambda p: select(p, spec.selection),
                zlib.crc32(f"{spec.seed}:{discipline}".encode()),
            )
        outputs[f"mmlu_pro/{discipline}/centrality_items"] = _digest(scored.items)
        outputs[f"mmlu_pro/{discipline}/centrality_pairs"] = _digest(scored.pairs)
        outputs[f"mmlu_pro/{discipline}/selection"] = _digest(_selection_frame(result, response))
        chosen += result.selected_ids
    strata = {i.item_id: i.discipline for i in bank.items if i.discipline in MMLU_PRO}
    released = results.filter(pl.col("item_id").is_in(chosen))
    outputs["mmlu_pro/pool_accuracy"] = _digest(pool_accuracy_table(results, released, strata))

    spec = load_spec("wine")
    params = spec.selection.centrality
    facts = pl.read_parquet(FIXTURE)
    for discipline in WINE:
        candidates = [
            Candidate(
                id=r["id"],
                text=r["text"],
                src=r["src"],
                stratum_key=r["stratum_key"],
                difficulty=r["difficulty"],
                metadata=json.loads(r["metadata"]),
            )
            for r in facts.filter(pl.col("discipline") == discipline).iter_rows(named=True)
        ]
        anchors = load_anchor_set(spec.anchors_dir / discipline)
        scored = score_discipline(candidates, anchors, params, embedder.encode, tau_dup=spec.selection.tau_dup)
        result = select(build_problem(scored.items, scored.pairs, anchors, spec.selection.tau_dup), spec.selection)
        outputs[f"wine/{discipline}/centrality_items"] = _digest(scored.items)
        outputs[f"wine/{discipline}/centrality_pairs"] = _digest(scored.pairs)
        outputs[f"wine/{discipline}/selection"] = _digest(_selection_frame(result, {}))

    blas = sorted(f"{i['internal_api']}:{i.get('architecture')}:{i['num_threads']}" for i in threadpool_info())
    json.dump({"blas": blas, "outputs": outputs}, sys.stdout)


if __name__ == "__main__":
    main()

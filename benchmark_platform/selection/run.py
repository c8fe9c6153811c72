"""The selection stage for one partition: topic pre-approval of facts (before generation) and the choice of items
(after audit), each with the manual-review policy. The assets call these with the partition and resources.

Both read the discipline's anchors as the anchors stage stored them (its current import), never the files.
Facts are chosen from the stored centrality run; items are scored here by the same support centrality (against the
discipline's anchors and strata) and not stored as scores: centrality_* hold the fact pool's run, one per partition.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from benchmark_platform.anchors import current_anchors
from benchmark_platform.centrality import ScoredPool, read_scores, score_pool, stored_review
from benchmark_platform.embed import Embedder
from benchmark_platform.evaluation import read_spec_imports
from benchmark_platform.llm import OpenGateway
from benchmark_platform.runtime import single_threaded_blas
from benchmark_platform.selection.persist import audited_item_candidates, write_selection
from benchmark_platform.selection.policy import build_problem, capped_to_attainable, select, within_cap
from benchmark_platform.selection.problem import InfeasibleSelectionError, SelectionResult
from benchmark_platform.selection.response import ResponseMatrix, responses_from_results, select_with_responses
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import Database

Target = Literal["facts", "items"]


@dataclass(frozen=True)
class SelectionOutcome:
    """What one partition's selection wrote: a certified set, or the reason it went to manual review."""

    discipline: str
    target: Target
    k: int  # the size aimed at: K_d for facts, K_d capped by the surviving shortlist for items
    k_total: int  # the anchors' K_d (0 without anchor files)
    result: SelectionResult | None = None
    manual_review: str | None = None
    shortlisted: int = 0
    audit_run_id: int | None = None
    scored: ScoredPool | None = None  # items: the audited pool's scoring
    # items: the response-pattern term and its held-out validation (selection/response.py select_with_responses)
    response: dict[str, str | int | float] = field(default_factory=dict)


def _manual_review(
    db: Database,
    spec: BenchmarkSpec,
    discipline: str,
    target: Target,
    reason: str,
    k_total: int,
    import_id: int | None = None,
    audit_run_id: int | None = None,
    scored: ScoredPool | None = None,
) -> SelectionOutcome:
    """Record that the partition goes to manual review (no automatic selection), replacing its stored selection."""
    write_selection(db, spec.name, discipline, target, max(k_total, 1), import_id, None, manual_review=reason)
    return SelectionOutcome(
        discipline, target, max(k_total, 1), k_total, manual_review=reason, audit_run_id=audit_run_id, scored=scored
    )


def select_facts(db: Database, spec: BenchmarkSpec, discipline: str) -> SelectionOutcome:
    """The K_d facts maximising F_d^sp under the quotas and the duplicate bound, from the stored centrality run.

    Manual review without anchor files, without a centrality run, or when the run itself went to manual review.
    InfeasibleSelectionError names the stratum at fault; nothing is written then.
    """
    stored = current_anchors(db, spec.name, discipline)
    has_run, review = stored_review(db, spec.name, discipline)
    if stored is None or not has_run or review:
        k_total = stored.anchor_set.k_total if stored is not None else 0
        return _manual_review(db, spec, discipline, "facts", review or "no anchor files", k_total)
    anchor_set, import_id = stored.anchor_set, stored.import_id
    items, pairs = read_scores(db, spec.name, discipline)
    problem = build_problem(items, pairs, anchor_set, spec.selection.tau_dup)
    result = select(problem, spec.selection)
    write_selection(db, spec.name, discipline, "facts", anchor_set.k_total, import_id, result)
    return SelectionOutcome(discipline, "facts", problem.k, anchor_set.k_total, result, shortlisted=problem.n)


def select_items(
    db: Database,
    spec: BenchmarkSpec,
    discipline: str,
    embedder: Embedder,
    open_gateway: OpenGateway,
    log: Callable[[str], None],
) -> SelectionOutcome:
    """After audit: the audited items the policy did not drop, scored by support centrality, and the K items
    maximising F_d^sp under the quotas and the duplicate bound (K capped by `capped_to_attainable`).

    Manual review without anchor files, without an audit run, or when scoring the items goes to manual review.
    InfeasibleSelectionError names the stratum at fault; nothing is written then.
    """
    folder = spec.anchors_dir / discipline  # named in errors only: the anchors were read by the anchors stage
    stored = current_anchors(db, spec.name, discipline)
    if stored is None:
        return _manual_review(db, spec, discipline, "items", "no anchor files", 0)
    anchor_set, import_id = stored.anchor_set, stored.import_id
    candidates, audit_run = audited_item_candidates(db, spec.name, discipline)
    if audit_run is None:
        reason = "no audit run: items are selected after audit"
        return _manual_review(db, spec, discipline, "items", reason, anchor_set.k_total, import_id)
    log(
        f"{discipline}: scoring {len(candidates)} audited items (audit run {audit_run}) against "
        f"{len(anchor_set.anchor_items)} anchors"
    )
    scored = score_pool(spec, candidates, anchor_set, embedder, open_gateway)
    if scored.result.manual_review:
        return _manual_review(
            db,
            spec,
            discipline,
            "items",
            scored.result.manual_review,
            anchor_set.k_total,
            import_id,
            audit_run_id=audit_run,
            scored=scored,
        )
    problem = build_problem(scored.result.items, scored.result.pairs, anchor_set, spec.selection.tau_dup)
    problem = capped_to_attainable(problem, anchor_set.k_total)
    responses = imported_responses(spec, problem.candidate_ids)
    if responses is not None:
        log(f"{discipline}: {len(responses.models)} models' imported answers enter the selection; held-out validation")
    # One BLAS thread: the same inputs give the same floating-point sums, hence the same set and figures every run.
    try:
        with single_threaded_blas():
            (result, response), problem = within_cap(
                problem,
                lambda p: select_with_responses(
                    p,
                    responses,
                    spec.selection.response,
                    lambda q: select(q, spec.selection),
                    zlib.crc32(f"{spec.seed}:{discipline}".encode()),
                ),
                lambda reached: log(
                    f"{discipline}: K {problem.k} -> {reached}: no admissible item left after {reached}"
                ),
            )
    except InfeasibleSelectionError as exc:  # name the stage, the discipline and the file whose quota cannot be met
        where = f"field 'lower' of stratum {exc.stratum!r}" if exc.stratum else f"(K_d from {folder / 'anchors.yaml'})"
        what = str(exc).removeprefix(f"stratum {exc.stratum!r}: ")
        error = InfeasibleSelectionError(
            "", f"selected_items[{discipline}]: {folder / 'strata.csv'} {where}: {what} (audit survivors: {problem.n})"
        )
        error.stratum = exc.stratum
        raise error from exc
    write_selection(db, spec.name, discipline, "items", problem.k, import_id, result, response=response)
    return SelectionOutcome(
        discipline,
        "items",
        problem.k,
        anchor_set.k_total,
        result,
        shortlisted=problem.n,
        audit_run_id=audit_run,
        scored=scored,
        response=response,
    )


def imported_responses(spec: BenchmarkSpec, candidate_ids: tuple[str, ...]) -> ResponseMatrix | None:
    """The answers of the spec's `evaluation.imports` on the candidates (None without any).

    Decision (issue 19): as for the audit (audit/run.py answers_for_audit), the import files are the source. Stored
    answers of the slate exist only for items an earlier run released; letting them in would make the selection
    depend on the previous release, and the same inputs must give the same release bytes.
    """
    results = read_spec_imports(spec.evaluation.imports, spec.directory)
    return None if results is None else responses_from_results(results, candidate_ids)

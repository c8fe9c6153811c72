"""Double-blind allocation of two independent reviewers per item (KINA 4.1) under WIP caps and conflict rules."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict

from benchmark_platform.review.models import Assignment, Reviewer, ReviewItem


class AssignmentResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    assignments: list[Assignment]
    unassigned: dict[str, str]  # item_id -> why no conflict-free pair under the WIP cap was found


def stable_uniform(*key: object) -> float:
    """A uniform number in [0, 1) fixed by ``key`` (seeded, order-free, reproducible across runs)."""
    digest = hashlib.blake2b(":".join(map(str, key)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def may_review(reviewer: Reviewer, item: ReviewItem) -> bool:
    """Eligibility and conflict rules between one reviewer and one item."""
    return (
        reviewer.eligible_for(item.discipline)
        and reviewer.reviewer_id != item.author_id
        and item.author_id not in reviewer.declared_conflicts
        and not (reviewer.affiliation and reviewer.affiliation == item.author_affiliation)
    )


def may_pair(a: Reviewer, b: Reviewer) -> bool:
    """Two reviewers of one item must be independent: distinct, no declared conflict, different affiliations."""
    return (
        a.reviewer_id != b.reviewer_id
        and a.reviewer_id not in b.declared_conflicts
        and b.reviewer_id not in a.declared_conflicts
        and not (a.affiliation and a.affiliation == b.affiliation)
    )


def _first_pair(candidates: list[Reviewer]) -> tuple[Reviewer, Reviewer] | None:
    return next(((a, b) for i, a in enumerate(candidates) for b in candidates[i + 1 :] if may_pair(a, b)), None)


def assign_pairs(
    items: Iterable[ReviewItem],
    reviewers: Iterable[Reviewer],
    open_load: Mapping[str, int],
    wip_cap: int,
    seed: int,
    round_: int = 1,
) -> AssignmentResult:
    """Give each item two conflict-free reviewers, least-loaded first (ties broken by a seeded hash); key-error
    suspects (the post-evaluation audit's) are served first, so a capped pool reviews them before the rest.

    ``open_load`` counts each reviewer's assignments still unrated; nobody goes above ``wip_cap``. An item gets
    both reviewers or none, so the two reviews of an item are always independent and never half-allocated.
    """
    pool = sorted(reviewers, key=lambda r: r.reviewer_id)
    load = {r.reviewer_id: open_load.get(r.reviewer_id, 0) for r in pool}
    assignments: list[Assignment] = []
    unassigned: dict[str, str] = {}
    for item in sorted(items, key=lambda i: (not i.suspect, stable_uniform(seed, "item", i.item_id))):
        fit = [r for r in pool if may_review(r, item)]
        free = sorted(
            (r for r in fit if load[r.reviewer_id] < wip_cap),
            key=lambda r: (load[r.reviewer_id], stable_uniform(seed, item.item_id, r.reviewer_id)),
        )
        pair = _first_pair(free)
        if pair is None:
            capped = _first_pair(fit) is not None
            unassigned[item.item_id] = "WIP cap reached" if capped else "no two independent conflict-free reviewers"
            continue
        for r in pair:
            load[r.reviewer_id] += 1
            assignments.append(Assignment(item_id=item.item_id, reviewer_id=r.reviewer_id, round=round_))
    return AssignmentResult(assignments=assignments, unassigned=unassigned)


def why_no_work(
    reviewer: Reviewer,
    pool: Iterable[Reviewer],
    open_load: Mapping[str, int],
    wip_cap: int,
    waiting: Mapping[str, int],
) -> str:
    """Why the allocator gives ``reviewer`` nothing new, in plain words ("" when it can).

    ``waiting`` counts, per discipline, items approved for review that have no reviewers yet. The reasons are checked
    in the order a new reviewer meets them: role and exams, the whitelist, a second reviewer, the WIP cap, items.
    """
    if not reviewer.disciplines:
        return "not eligible: no discipline assigned"
    passed = sorted(d for d in reviewer.disciplines if reviewer.eligible_for(d))
    if not reviewer.whitelisted:
        return "not eligible: removed from the whitelist after flawed audits"
    if not passed:
        missing = ", ".join(sorted(reviewer.disciplines))
        return f"not eligible: both exam rounds not yet passed in {missing}"
    partners = [
        d
        for d in passed
        if any(other.eligible_for(d) and may_pair(reviewer, other) for other in pool if other != reviewer)
    ]
    if not partners:
        return f"no second reviewer: nobody else independent is eligible in {', '.join(passed)}"
    if open_load.get(reviewer.reviewer_id, 0) >= wip_cap:
        return f"WIP cap reached: {open_load.get(reviewer.reviewer_id, 0)} open items (cap {wip_cap})"
    with_items = [d for d in partners if waiting.get(d, 0)]
    if not with_items:
        return f"no items: nothing waits for review in {', '.join(partners)}"
    free = [
        d
        for d in with_items
        if any(
            other.eligible_for(d) and may_pair(reviewer, other) and open_load.get(other.reviewer_id, 0) < wip_cap
            for other in pool
            if other != reviewer
        )
    ]
    if not free:
        return f"WIP cap reached by every possible second reviewer in {', '.join(with_items)}"
    return ""

"""Issue 31: the post-evaluation audit's key-error suspects are queued for review first: with the reviewers' WIP cap
binding, the suspects get their two reviewers before any other item."""

from __future__ import annotations

from benchmark_platform.review.assignment import assign_pairs
from benchmark_platform.review.models import Reviewer, ReviewItem


def test_suspects_are_assigned_before_other_items() -> None:
    reviewers = [
        Reviewer(reviewer_id=f"r{n}", disciplines=frozenset({"law"}), exams_passed=frozenset({"law"}), affiliation=a)
        for n, a in enumerate(("x", "y"))
    ]
    items = [ReviewItem(item_id=f"i{n:02d}", discipline="law", suspect=n in (7, 13, 19)) for n in range(20)]
    # two reviewers with a WIP cap of 3: three items get both reviews, the other seventeen wait
    result = assign_pairs(items, reviewers, {}, wip_cap=3, seed=5)
    assert sorted({a.item_id for a in result.assignments}) == ["i07", "i13", "i19"]
    assert len(result.unassigned) == 17 and set(result.unassigned.values()) == {"WIP cap reached"}
    # without suspects the seeded order decides, as before
    plain = assign_pairs([i.model_copy(update={"suspect": False}) for i in items], reviewers, {}, wip_cap=3, seed=5)
    assert sorted({a.item_id for a in plain.assignments}) != ["i07", "i13", "i19"]

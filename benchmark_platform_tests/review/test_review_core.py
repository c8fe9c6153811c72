"""Pure core: rubrics and S_i, allocation rules, decisions, bonus-on-bar, audits, appeals, whitelist, ledger."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from benchmark_platform.review.assignment import assign_pairs, why_no_work
from benchmark_platform.review.config import LoginThrottle
from benchmark_platform.review.models import Assignment, Decision, Rating, Reviewer, ReviewItem, ReviewPolicy, Verdict
from benchmark_platform.review.rubrics import OENOBENCH8, RUBRICS, check_rubric_scores, validated_score
from benchmark_platform.review.security import backoff_seconds, hash_password, needs_rehash, verify_password
from benchmark_platform.review.sources import excerpt, provenance_url
from benchmark_platform.review.workflow import (
    EntryKind,
    appeal_assignments,
    bonus_award,
    decide,
    select_audits,
    settle_round,
    whitelist_after_audits,
)

POLICY = ReviewPolicy(base_wage=10, bonus=20, tau=0.8, audit_rate=0.1, audit_penalty=15, wip_cap=3)
PERFECT = {k: 5 for k in RUBRICS}


def reviewer(rid: str, discipline: str = "law", affiliation: str = "", **kw) -> Reviewer:
    return Reviewer(
        reviewer_id=rid,
        disciplines=frozenset({discipline}),
        affiliation=affiliation,
        **{"exams_passed": frozenset({discipline}), **kw},
    )


def scores(**changes: int) -> dict[str, int]:
    return {**PERFECT, **changes}


def test_validated_score_is_weighted_agreement_with_the_reference():
    equal = ReviewPolicy()
    assert validated_score(PERFECT, PERFECT, equal) == 1.0
    # one rubric off by the full span: 5/6 of the agreement is left with equal weights
    assert validated_score(scores(factuality=1), PERFECT, equal) == pytest.approx(5 / 6)
    heavy = ReviewPolicy(weights={"factuality": 5.0})
    assert validated_score(scores(factuality=1), PERFECT, heavy) == pytest.approx(5 / 10)
    # a rubric that does not apply (not scored by either side) drops out of the sum
    four = {k: v for k, v in scores(factuality=1).items() if k != "combinatorial_validity"}
    assert validated_score(four, four | {"factuality": 5}, equal) == pytest.approx(4 / 5)
    with pytest.raises(ValidationError, match="does not have"):
        ReviewPolicy(weights={"answer_correctness": 1.0})
    oeno = ReviewPolicy(rubric_set="oenobench8")
    passes = {k: 2 for k in OENOBENCH8.keys}
    assert validated_score({**passes, "ambiguity": 0}, passes, oeno) == pytest.approx(7 / 8)  # fail vs pass: span 2


def test_rubric_scores_are_checked_in_plain_words_per_item_format():
    four = {k: 5 for k in RUBRICS if k != "combinatorial_validity"}
    assert check_rubric_scores(four, "", "kina6", "mcq4") == four
    with pytest.raises(ValueError, match="^Combinatorial validity does not apply to this item's format$"):
        check_rubric_scores(PERFECT, "", "kina6", "mcq4")
    with pytest.raises(ValueError, match="^please score Combinatorial validity$"):
        check_rubric_scores(four, "", "kina6", "pseudo_mcq10")
    with pytest.raises(ValueError, match=r"^Factuality must be one of 1 \(fails\), .*got 7$"):
        check_rubric_scores({**four, "factuality": 7}, "", "kina6", "mcq4")
    with pytest.raises(ValueError, match=r"^Ambiguity must be one of 0 \(fail\), 1 \(warn\), 2 \(pass\), got 'x'$"):
        check_rubric_scores({**{k: 2 for k in OENOBENCH8.keys}, "ambiguity": "x"}, "", "oenobench8", "mcq4")


def test_why_a_reviewer_gets_no_work():
    a, b = reviewer("a", affiliation="uniA"), reviewer("b", affiliation="uniB")
    new = Reviewer(reviewer_id="n", disciplines=frozenset({"law"}))
    assert why_no_work(new, [a, b, new], {}, 3, {"law": 4}) == "not eligible: both exam rounds not yet passed in law"
    assert why_no_work(Reviewer(reviewer_id="x", disciplines=frozenset()), [a], {}, 3, {}).startswith("not eligible")
    assert why_no_work(a, [a], {}, 3, {"law": 4}).startswith("no second reviewer")
    assert why_no_work(a, [a, reviewer("c", affiliation="uniA")], {}, 3, {"law": 4}).startswith("no second reviewer")
    assert why_no_work(a, [a, b], {"a": 3}, 3, {"law": 4}) == "WIP cap reached: 3 open items (cap 3)"
    assert why_no_work(a, [a, b], {"b": 3}, 3, {"law": 4}).startswith("WIP cap reached by every possible second")
    assert why_no_work(a, [a, b], {}, 3, {}) == "no items: nothing waits for review in law"
    assert why_no_work(a, [a, b], {}, 3, {"law": 1}) == ""


@pytest.mark.production_scrypt
def test_scrypt_cost_rehash_flag_and_login_backoff():
    old = hash_password("correct horse battery staple", n=2**14)
    assert verify_password("correct horse battery staple", old) and needs_rehash(old)
    new = hash_password("correct horse battery staple")
    assert new.startswith("scrypt$131072$8$1$") and not needs_rehash(new)
    policy = LoginThrottle(free_failures_per_account=5, first_delay_seconds=2, max_delay_seconds=60)
    assert [backoff_seconds(f, 5, policy) for f in (4, 5, 6, 7, 10, 30)] == [0, 2, 4, 8, 60, 60]


def test_source_excerpt_keeps_whole_lines_and_links_pages_not_raw_files():
    cut = excerpt("a. b. c. d. ", "The fact.", " e. f. g.")
    assert (cut.before, cut.span, cut.after) == ("c. d. ", "The fact.", " e. f.") and cut.cut_before and cut.cut_after
    raw = "https://raw.githubusercontent.com/UCDavisLibrary/ava/9afb4d9/avas/clear_lake.geojson"
    assert provenance_url(raw) == "https://github.com/UCDavisLibrary/ava/blob/9afb4d9/avas/clear_lake.geojson"
    assert (
        provenance_url("https://fr.wikipedia.org/w/index.php?oldid=1") == "https://fr.wikipedia.org/w/index.php?oldid=1"
    )


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("approve", "approve", Decision.APPROVED),
        ("approve", "revise", Decision.REVISE),
        ("revise", "reject", Decision.REJECTED),
        ("approve", "reject", Decision.ESCALATED),
        ("reject", "escalate", Decision.ESCALATED),
    ],
)
def test_decision_rule(a, b, expected):
    assert decide(Verdict(a), Verdict(b)) is expected and decide(Verdict(b), Verdict(a)) is expected


def test_bonus_goes_to_the_higher_score_only_above_the_bar_and_ties_split():
    assert bonus_award({"a": 0.9, "b": 0.85}, POLICY) == {"a": 20}
    assert bonus_award({"a": 0.79, "b": 0.5}, POLICY) == {}  # a low-quality winner forfeits it
    assert bonus_award({"a": 0.9, "b": 0.9}, POLICY) == {"a": 10, "b": 10}
    odd = POLICY.model_copy(update={"bonus": 6.79})
    assert bonus_award({"a": 0.9, "b": 0.9}, odd) == {"a": 3.40, "b": 3.39}  # whole cents, never more than B


def test_audit_sample_meets_the_rate_and_only_tops_up():
    ids = [f"q{i:03d}" for i in range(95)]
    first = select_audits(ids[:50], 0.1, seed=3)
    assert len(first) == 5 and set(first) <= set(ids[:50])
    assert select_audits(ids[:50], 0.1, seed=3) == first  # reproducible
    later = select_audits(ids, 0.1, seed=3, already=first)
    assert set(first) <= set(later) and len(later) == 10
    with pytest.raises(ValidationError):
        ReviewPolicy(audit_rate=0.2)


def test_allocation_two_independent_reviewers_under_wip_cap_and_conflicts():
    pool = [
        reviewer("r1", affiliation="uniA"),
        reviewer("r2", affiliation="uniA"),
        reviewer("r3", affiliation="uniB"),
        reviewer("r4", affiliation="uniC", declared_conflicts=frozenset({"author9"})),
        reviewer("r5", discipline="chemistry"),
        Reviewer(reviewer_id="r6", disciplines=frozenset({"law"})),  # exams not passed
        reviewer("r7", affiliation="uniD", whitelisted=False),
    ]
    items = [ReviewItem(item_id=f"q{i}", discipline="law", author_id="author9" if i == 0 else "r3") for i in range(6)]
    result = assign_pairs(items, pool, {"r1": 1}, wip_cap=3, seed=1)
    by_item: dict[str, list[str]] = {}
    for a in result.assignments:
        by_item.setdefault(a.item_id, []).append(a.reviewer_id)
    load: dict[str, int] = {"r1": 1}
    for item_id, pair in by_item.items():
        assert len(pair) == 2 and len(set(pair)) == 2
        assert not {"r5", "r6", "r7"} & set(pair)  # wrong discipline, exam failed, off the whitelist
        assert {"r1", "r2"} != set(pair)  # same affiliation never reviews together
        if item_id == "q0":
            assert "r4" not in pair  # declared conflict with the author
        else:
            assert "r3" not in pair  # nobody reviews their own item
        for rid in pair:
            load[rid] = load.get(rid, 0) + 1
    assert max(load.values()) <= 3
    assert set(by_item) | set(result.unassigned) == {i.item_id for i in items}
    assert set(result.unassigned.values()) <= {"WIP cap reached", "no two independent conflict-free reviewers"}


def test_no_pair_when_only_colleagues_remain():
    pool = [reviewer("r1", affiliation="uniA"), reviewer("r2", affiliation="uniA")]
    result = assign_pairs([ReviewItem(item_id="q", discipline="law")], pool, {}, 3, 0)
    assert result.assignments == [] and result.unassigned == {"q": "no two independent conflict-free reviewers"}


def test_appeal_reopens_the_same_pair_in_a_new_round():
    prev = [Assignment(item_id="q", reviewer_id="r1"), Assignment(item_id="q", reviewer_id="r2")]
    new = appeal_assignments("q", Decision.REJECTED, "Smith 2021, p. 4 shows statement 3 holds", prev)
    assert [(a.reviewer_id, a.round) for a in new] == [("r1", 2), ("r2", 2)]
    with pytest.raises(ValueError, match="only revised or rejected"):
        appeal_assignments("q", Decision.APPROVED, "x", prev)
    with pytest.raises(ValueError, match="new academic evidence"):
        appeal_assignments("q", Decision.REVISE, "  ", prev)


def test_settlement_ledger_bonus_penalty_and_whitelist():
    def rate(item, rid, verdict="approve", **ch):
        return Rating(item_id=item, reviewer_id=rid, scores=scores(**ch), verdict=Verdict(verdict))

    ratings = [
        rate("q1", "r1"),
        rate("q1", "r2", logical_rigor=3),  # r1 matches the reference better and clears the bar
        rate("q2", "r1"),
        rate("q2", "r2"),  # lazy consensus on a flawed item: both score low, no bonus
        rate("q3", "r1", "reject", factuality=1),
        rate("q3", "r2", "approve"),  # split -> committee
    ]
    references = {"q1": PERFECT, "q2": scores(factuality=1, source_reliability=1), "q3": scores(factuality=1)}
    out = settle_round(ratings, references, {"q2": True}, POLICY, committee={"q3": Decision.REJECTED})
    assert out.decisions == {"q1": Decision.APPROVED, "q2": Decision.APPROVED, "q3": Decision.REJECTED}
    assert out.validated_scores["q2"]["r1"] == pytest.approx(4 / 6) and 4 / 6 < POLICY.tau
    kinds = [(e.reviewer_id, e.item_id, e.kind, e.amount) for e in out.ledger if e.kind is not EntryKind.BASE]
    assert ("r1", "q1", EntryKind.BONUS, 20) in kinds
    assert ("r1", "q3", EntryKind.BONUS, 20) in kinds
    assert not [k for k in kinds if k[1] == "q2" and k[2] is EntryKind.BONUS]
    assert {(k[0], k[3]) for k in kinds if k[2] is EntryKind.PENALTY} == {("r1", -15), ("r2", -15)}
    assert out.payouts() == {"r1": 30 + 40 - 15, "r2": 30 - 15}
    assert out.flawed_audits == {"r1": 1, "r2": 1}
    pool = whitelist_after_audits([reviewer("r1"), reviewer("r2")], {"r1": 2, "r2": 1}, POLICY)
    assert [r.whitelisted for r in pool] == [False, True]


def test_settlement_refuses_an_incomplete_round():
    one = Rating(item_id="q1", reviewer_id="r1", scores=PERFECT, verdict=Verdict.APPROVE)
    with pytest.raises(ValueError, match="item 'q1': a round needs exactly two ratings"):
        settle_round([one], {}, {}, POLICY)

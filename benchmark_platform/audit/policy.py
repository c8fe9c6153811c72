"""The audit policy (OenoBench 4.3, B.5, Table 6): critical failures drop the item, C4 relabels its difficulty, B2
discloses it in the closed-book slice; each action carries its reason. An agent whose kappa against its rubric is
under the threshold is advisory: its failures neither drop nor relabel; they are listed in the detail of a drop,
and an item that only advisory agents would have dropped gets an `advise` action (a note, the item ships)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, Literal

from benchmark_platform.audit.agents import Finding
from benchmark_platform.audit.config import AuditConfig

RELABEL_AGENT = "C4_difficulty_audit"
DISCLOSE_AGENT = "B2_closed_book_solvability"


@dataclass(frozen=True)
class Action:
    item_id: str
    action: Literal["drop", "relabel", "disclose", "advise"]
    reason: str
    detail: dict[str, Any] = field(default_factory=dict)


def apply_policy(
    findings: Iterable[Finding], config: AuditConfig, advisory: AbstractSet[str] = frozenset()
) -> list[Action]:
    critical = set(config.critical)
    drops: dict[str, list[str]] = defaultdict(list)
    advised: dict[str, list[str]] = defaultdict(list)
    actions = []
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for f in findings:
        if f.severity == "fail" and f.agent in critical:
            found[(f.item_id, f.agent)] = f.payload
            (advised if f.agent in advisory else drops)[f.item_id].append(f.agent)
        elif f.agent == RELABEL_AGENT and f.severity == "fail" and f.agent not in advisory:
            actions.append(
                Action(
                    f.item_id,
                    "relabel",
                    f"{f.agent}: judged tier differs by {f.payload['delta']}",
                    {"from": f.payload["assigned"], "to": f.payload["relabel_to"]},
                )
            )
        elif f.agent == DISCLOSE_AGENT and f.severity == "warn":
            actions.append(
                Action(
                    f.item_id,
                    "disclose",
                    f"{f.agent}: closed-book solvable by the judge panel",
                    {"slice": "closed_book", "advisory": f.agent in advisory},
                )
            )
    for item_id, agents in drops.items():
        actions.append(
            Action(
                item_id,
                "drop",
                "critical failure: " + ", ".join(_why(a, found[(item_id, a)]) for a in sorted(set(agents))),
                {"agents": sorted(set(agents)), "advisory_failures": sorted(set(advised[item_id]))},
            )
        )
    for item_id, agents in advised.items():
        if item_id not in drops:
            actions.append(
                Action(
                    item_id,
                    "advise",
                    "advisory failure (agent's kappa under the threshold; not dropped): "
                    + ", ".join(sorted(set(agents))),
                    {"advisory_failures": sorted(set(agents))},
                )
            )
    return sorted(actions, key=lambda a: (a.item_id, a.action))


def _why(agent: str, payload: dict[str, Any]) -> str:
    """The agent and, briefly, what it found (A1's words, a reason it gives), so a drop names its trigger."""
    for key in (
        "vague_terms",
        "reason",
        "reasons",
        "problems",
        "latex_problems",
        "lcs_ratio",
        "international_grapes",
        "region_answer",
    ):
        value = payload.get(key)
        if value not in (None, "", False, [], ()):
            text = ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
            return f"{agent} ({key.replace('_', ' ')}: {text[:160]})"
    return agent


HUMAN_KEY_RUBRIC = "answer_correct"  # a gold sheet's 0/1 rating of the item's key
HUMAN_KEY_CUT = 0.5  # the reviewers' mean rating below this says the key is wrong


@dataclass(frozen=True)
class KeyRating:
    """A human rating of a stored item's key (a gold sheet row naming the item by id, or by its bank's upstream id)."""

    item_id: str
    sheet: str
    reviewer: str
    rating: float


def human_vetoes(ratings: Iterable[KeyRating]) -> list[Action]:
    """OenoBench 4.3: an item whose key the human raters marked wrong (mean `answer_correct` under the cut) is dropped,
    with the ratings as its reason, whatever the agents found."""
    by_item: dict[str, list[KeyRating]] = defaultdict(list)
    for r in ratings:
        by_item[r.item_id].append(r)
    vetoes = []
    for item_id, rated in sorted(by_item.items()):
        mean = sum(r.rating for r in rated) / len(rated)
        if mean < HUMAN_KEY_CUT:
            who = ", ".join(f"{r.reviewer} ({r.sheet}) {r.rating:g}" for r in sorted(rated, key=lambda r: r.reviewer))
            vetoes.append(
                Action(
                    item_id,
                    "drop",
                    f"human rating: the key is wrong ({HUMAN_KEY_RUBRIC} {mean:g} < {HUMAN_KEY_CUT} by {who})",
                    {"human_ratings": [[r.sheet, r.reviewer, r.rating] for r in rated]},
                )
            )
    return vetoes


def with_vetoes(actions: Sequence[Action], vetoes: Sequence[Action]) -> list[Action]:
    """The policy's actions with the human vetoes added; an item the agents dropped too keeps one drop, both reasons."""
    vetoed = {v.item_id: v for v in vetoes}
    merged = []
    for a in actions:
        veto = vetoed.pop(a.item_id, None) if a.action == "drop" else None
        merged.append(
            a if veto is None else Action(a.item_id, "drop", f"{a.reason}; {veto.reason}", {**a.detail, **veto.detail})
        )
    return sorted([*merged, *vetoed.values()], key=lambda a: (a.item_id, a.action))

"""The audit policy (OenoBench 4.3, B.5, Table 6): critical failures drop the item, C4 relabels its difficulty, B2
discloses it in the closed-book slice; each action carries its reason. An agent whose kappa against its rubric is
under the threshold is advisory: its failures neither drop nor relabel; they are listed in the detail of a drop,
and an item that only advisory agents would have dropped gets an `advise` action (a note, the item ships)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
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
    for f in findings:
        if f.severity == "fail" and f.agent in critical:
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
                "critical failure: " + ", ".join(sorted(set(agents))),
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

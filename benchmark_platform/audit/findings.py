"""One audit run over a discipline's items: every agent in order, escalation gates, carry-over of unchanged findings.

Order matters: gates read earlier agents' results (C1 after A2, D2 after D3, B4/B5 after B1, C3 after B1 and B2, K5
after K4). An item-level agent (deterministic or LLM) re-judges only items whose content hash or whose agent version
differs from the previous run's finding; everything else is carried over (with the run that judged it). Pool-level
agents depend on the whole pool and always rerun (they are deterministic and cheap).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmark_platform.audit.agents import ITEM_AGENTS, Agent, AuditItem, Finding, Severity
from benchmark_platform.audit.judges import JUDGE_AGENTS, JudgeAgent, Panel
from benchmark_platform.audit.pool import POOL_AGENTS, AgentResult, AuditContext, PoolAgent
from benchmark_platform.llm import Gateway
from benchmark_platform.llm.config import ModelConfig

AnyAgent = Agent | PoolAgent | JudgeAgent
AGENTS: tuple[AnyAgent, ...] = (*ITEM_AGENTS, *POOL_AGENTS, *JUDGE_AGENTS)
PreviousFindings = dict[tuple[str, str, str], Finding]  # (item, agent, version) -> finding with carried_from set


def agent_versions(agents: Iterable[AnyAgent] = AGENTS) -> list[tuple[str, str]]:
    return [(a.name, a.version) for a in agents]


def inputs_hash(
    items: Sequence[AuditItem], agents: Iterable[Agent | PoolAgent | JudgeAgent] = AGENTS, settings: str = ""
) -> str:
    """Same items, agent versions and settings (thresholds, judges): same audit run."""
    payload = json.dumps([sorted((i.item_id, i.input_hash) for i in items), agent_versions(agents), settings])
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class AuditOutcome:
    findings: list[Finding] = field(default_factory=list)
    corpus: dict[tuple[str, str], tuple[Severity, dict[str, Any]]] = field(default_factory=dict)
    skipped: dict[tuple[str, str], str] = field(default_factory=dict)
    judged: Counter[str] = field(default_factory=Counter)  # agent -> items judged in this run (not carried)
    invalid: Counter[str] = field(default_factory=Counter)  # agent -> judge outputs that were not valid

    @property
    def rejudged_items(self) -> set[str]:
        """Items that an item-level agent judged afresh in this run."""
        item_level = {a.name for a in AGENTS if not isinstance(a, PoolAgent)}
        return {f.item_id for f in self.findings if f.carried_from is None and f.agent in item_level}


def _carry(
    agent: AnyAgent, items: list[AuditItem], previous: PreviousFindings
) -> tuple[list[AuditItem], list[Finding]]:
    fresh, carried = [], []
    for item in items:
        prev = previous.get((item.item_id, agent.name, agent.version))
        if prev is not None and prev.input_hash == item.input_hash:
            carried.append(prev)
        else:
            fresh.append(item)
    return fresh, carried


async def run_audit(
    items: list[AuditItem],
    ctx: AuditContext,
    previous: PreviousFindings | None = None,
    gateway: Gateway | None = None,
    judges: Sequence[ModelConfig] = (),
    seed: int = 0,
    agents: Sequence[AnyAgent] = AGENTS,
) -> AuditOutcome:
    previous = previous or {}
    ctx.pool = items
    out = AuditOutcome()
    panel = Panel(gateway, list(judges), seed, out.invalid) if gateway is not None and judges else None
    for agent in agents:
        key = (agent.name, agent.version)
        if isinstance(agent, PoolAgent):
            reason = agent.gate(items, ctx) if agent.gate else None
            result = AgentResult(skipped=reason) if reason else agent.run(items, ctx)
            out.judged[agent.name] += len(result.findings)
        else:
            if isinstance(agent, JudgeAgent):
                scope = agent.scope(items, ctx) if agent.scope else items
                if panel is None:
                    scope = "no judge models configured (audit.judges)"
            else:
                scope = items
            if isinstance(scope, str):
                result = AgentResult(skipped=scope)
            else:
                fresh, carried = _carry(agent, scope, previous)
                if isinstance(agent, Agent):
                    new = [f for item in fresh if (f := agent.run(item, ctx.config)) is not None]
                else:
                    new = (await agent.judge(fresh, ctx, panel)).findings if fresh else []  # type: ignore[arg-type]
                result = AgentResult([*carried, *new])
                out.judged[agent.name] += len(fresh)
        ctx.results[agent.name] = result
        out.findings += result.findings
        if result.corpus is not None:
            out.corpus[key] = result.corpus
        if result.skipped:
            out.skipped[key] = result.skipped
    return out

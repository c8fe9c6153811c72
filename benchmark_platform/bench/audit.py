"""Audit benchmark: the agents that need no LLM over 10,000 items, and the LLM agents' throughput over the gateway.

- deterministic_agents_seconds: one audit run (no judges) over the first 10,000 MMLU-Pro items (../shared/data,
  10-option items, categories as D3 strata) with every deterministic agent, the escalation-gated C1 and D2 forced on
  and KINA's K1/K2 screening on; the static embedder. MMLU-Pro has no source facts, so A3 compares each stem with a
  one-line fact made from its key; A4's detector separates original-MMLU stems from the sources MMLU-Pro added
  (STEM websites, TheoremQA, SciBench): a real stylistic task of the same size as a template detector's.
  Per-agent seconds and the process' CPU seconds are reported (the machine is shared); the pure core is timed (no
  database).
- llm_throughput_over_bound: B1 TriJudgeAnswer (three judges, one loopback provider with 64 slots, fixed 200 ms
  latency; the scripted server in its own process) over 400 items = 1,200 calls through the gateway (fresh database:
  cache and telemetry written as in production); achieved calls/s over the bound 64 / 0.2 s, median of 3 runs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import uvloop

from benchmark_platform.audit.agents import AuditItem
from benchmark_platform.audit.config import AuditConfig, KinaScreening
from benchmark_platform.audit.findings import AGENTS, AuditOutcome, run_audit
from benchmark_platform.audit.grounding import Grounding
from benchmark_platform.audit.judges import B1_TRI_JUDGE_ANSWER
from benchmark_platform.audit.pool import AuditContext, PoolAgent
from benchmark_platform.bench.llm_gateway import ScriptedProcess, _drop, _fresh_database
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.llm.config import GatewaySettings, ModelConfig
from benchmark_platform.llm.double import Latency, Script
from benchmark_platform.llm.gateway import Gateway
from benchmark_platform.paths import PROJECT_ROOT

MMLU_PRO = PROJECT_ROOT.parent / "shared" / "data" / "mmlu_pro_outputs" / "items_by_category"
N_ITEMS, LLM_ITEMS, CONCURRENCY, LATENCY_S = 10_000, 400, 64, 0.2


def mmlu_pro_items(n: int) -> list[AuditItem]:
    records = [
        json.loads(line)
        for path in sorted(MMLU_PRO.glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").split("\n")
        if line.strip()
    ]
    records.sort(key=lambda r: r["question_id"])
    return [
        AuditItem(
            f"mmlu_pro_{r['question_id']}",
            r["question"],
            tuple(r["options"]),
            r["answer_index"],
            (f"The answer is {r['options'][r['answer_index']]}.",),
            len(r["options"]),
            None,
            "fact_to_question" if r["src"].startswith("ori_mmlu") else "template",
            None,
            r["category"],
            Grounding("imported"),  # as the audit loads bank items: G1 records 'not applicable'
        )
        for r in records[:n]
    ]


class _Timed:
    """Wraps every agent's work to time it (pool agents: run; item agents: per-item check)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(self, agent):
        field = "run" if isinstance(agent, PoolAgent) else "check" if hasattr(agent, "check") else None
        if field is None:
            return agent
        inner = getattr(agent, field)

        def timed(*args):
            t0 = time.perf_counter()
            try:
                return inner(*args)
            finally:
                self.seconds[agent.name] = self.seconds.get(agent.name, 0.0) + time.perf_counter() - t0

        changes = {field: timed} | (
            {"gate": None} if isinstance(agent, PoolAgent) and agent.name[:2] in ("C1", "D2") else {}
        )
        return dataclasses.replace(agent, **changes)


def deterministic(items: list[AuditItem]) -> tuple[float, float, dict[str, float], AuditOutcome]:
    config = AuditConfig(kina=KinaScreening())
    embedder = StaticEmbedder()
    embedder.encode(["warm up"])
    timer = _Timed()
    agents = [timer.wrap(a) for a in AGENTS]
    t0, cpu0 = time.perf_counter(), time.process_time()
    out = asyncio.run(run_audit(items, AuditContext(config, embedder), agents=agents))
    return time.perf_counter() - t0, time.process_time() - cpu0, timer.seconds, out


def llm_throughput(items: list[AuditItem]) -> float:
    server = ScriptedProcess(Script(default_reply='{"answer": "A"}', latency=Latency(mean_s=LATENCY_S)))
    db, admin_url = _fresh_database()
    try:
        judges = [
            ModelConfig(
                name=f"judge_{k}",
                family=f"f{k}",
                base_url=server.base_url,
                provider="loopback",
                model=f"m{k}",
                max_tokens=8,
                max_concurrency=CONCURRENCY,
            )
            for k in range(3)
        ]
        tag = uuid.uuid4().hex  # fresh prompts: nothing answered from the cache
        fresh = [dataclasses.replace(i, question=f"{i.question} [{tag}]") for i in items]

        async def go() -> tuple[float, int]:
            async with Gateway(
                judges,
                GatewaySettings(),
                db,
                run_id="bench-audit",
                journal_dir=Path(tempfile.mkdtemp(prefix="audit_journal_")),
            ) as gateway:
                t0 = time.perf_counter()
                await run_audit(
                    fresh, AuditContext(AuditConfig()), gateway=gateway, judges=judges, agents=[B1_TRI_JUDGE_ANSWER]
                )
                wall = time.perf_counter() - t0
            return wall, gateway.totals.status["ok"]

        wall, ok = uvloop.run(go())
        assert ok == 3 * len(items), ok
    finally:
        server.stop()
        _drop(db, admin_url)
    return 3 * len(items) / wall / (CONCURRENCY / LATENCY_S)


def main() -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    items = mmlu_pro_items(N_ITEMS)
    seconds, cpu, per_agent, out = deterministic(items)
    ratios = [llm_throughput(items[:LLM_ITEMS]) for _ in range(3)]  # median of 3: one 4 s run moves by +-0.03
    print(
        json.dumps(
            {
                "bench": "audit",
                "items": len(items),
                "deterministic_agents_seconds": round(seconds, 2),
                "deterministic_agents_cpu_seconds": round(cpu, 2),
                "findings": len(out.findings),
                "a4_heldout_auc": out.corpus[("A4_template_fingerprint", "1")][1]["heldout_auc"],
                "per_agent_seconds": {k: round(v, 2) for k, v in sorted(per_agent.items())},
                "llm_items": LLM_ITEMS,
                "llm_calls": 3 * LLM_ITEMS,
                "llm_throughput_over_bound": round(statistics.median(ratios), 3),
                "llm_throughput_over_bound_runs": [round(r, 3) for r in ratios],
            }
        )
    )


if __name__ == "__main__":
    main()

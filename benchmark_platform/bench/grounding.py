"""Grounding benchmark (issue 24): the G1 verifier over 10,000 items built from real facts.

Facts: the TTB list of wine permittees, one structured fact per permittee and field (bench/generation.py's). Items:
every wine-spec template that applies, over the facts in order, with the per-option proofs generation records,
until N_ITEMS; each is handed to G1 as the audit hands it a stored item (its claim and its options' proving facts,
which the audit reads from `item_option_facts`). Timed: the verifier's pure core over the N_ITEMS items, and the
G1 agent inside a full deterministic-agent audit run over the same items (its share of the audit's time).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter

from benchmark_platform.audit.agents import AuditItem
from benchmark_platform.audit.config import AuditConfig
from benchmark_platform.audit.grounding import ProofFact, from_generation, verify
from benchmark_platform.bench.generation import permittee_facts
from benchmark_platform.generation.config import DETERMINISTIC
from benchmark_platform.generation.model import Fact, Item
from benchmark_platform.generation.templates import FieldIndex, matching_templates, template_item
from benchmark_platform.spec import load_spec

N_ITEMS = 10_000


def items(n: int) -> tuple[list[AuditItem], int]:
    """n audit items with their grounding, and how many (fact, template) pairs built no item (too few distractors,
    or an option without a proof)."""
    facts = permittee_facts()
    by_id = {f.fact_id: f for f in facts}
    index = FieldIndex(facts)
    templates = load_spec("wine").generation.templates
    out: list[AuditItem] = []
    unbuilt = 0
    for i, fact in enumerate(facts):
        for template in matching_templates(templates, fact):
            item = template_item("bench", 1, template, fact, index, 4, i % 4, "v")
            if item is None:
                unbuilt += 1
                continue
            out.append(_audit_item(item, by_id))
            if len(out) == n:
                return out, unbuilt
    return out, unbuilt


def _audit_item(item: Item, by_id: dict[str, Fact]) -> AuditItem:
    proofs = [[_proof(by_id[f]) for f in option] for option in item.option_facts]
    return AuditItem(
        item.item_id,
        item.question,
        item.options,
        item.answer_index,
        tuple(by_id[f].text for f in item.facts),
        4,
        item.difficulty,
        item.strategy,
        item.generator,
        grounding=from_generation(item.parameters, proofs, DETERMINISTIC, imported=False),
    )


def _proof(f: Fact) -> ProofFact:
    return ProofFact(f.fact_id, f.text, f.subject, f.field, f.value, f.entity_type)


def main() -> None:
    from benchmark_platform.audit.agents import DETERMINISTIC_AGENTS
    from benchmark_platform.audit.findings import run_audit
    from benchmark_platform.audit.pool import AuditContext

    built, unbuilt = items(N_ITEMS)
    t0, cpu0 = time.perf_counter(), time.process_time()
    verdicts = Counter(
        verify(i.question, i.options, i.answer_index, i.grounding)[1]["status"] for i in built if i.grounding
    )
    seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    t0 = time.perf_counter()
    outcome = asyncio.run(run_audit(built, AuditContext(AuditConfig()), agents=DETERMINISTIC_AGENTS))
    audit_seconds = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "bench": "grounding",
                "items": len(built),
                "verdicts": dict(sorted(verdicts.items())),
                "candidates_not_built": unbuilt,
                "g1_seconds": round(seconds, 3),
                "g1_cpu_seconds": round(cpu, 3),
                "g1_items_per_s": round(len(built) / seconds),
                "item_agents_audit_seconds": round(audit_seconds, 2),
                "findings": len(outcome.findings),
            }
        )
    )


if __name__ == "__main__":
    main()

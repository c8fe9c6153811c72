"""Audit: every deterministic agent over a discipline's items; findings are versioned and append-only."""

from collections import Counter

import dagster as dg

from benchmark_platform.audit.agents import DETERMINISTIC_AGENTS, audit, dropped_items
from benchmark_platform.audit.persist import inputs_hash, load_audit_items, store_audit
from benchmark_platform.defs.common import DatabaseResource, counts_metadata, discipline_partitions, key
from benchmark_platform.spec import BenchmarkSpec


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    @dg.asset(key=key(spec, "audit_findings"), partitions_def=discipline_partitions(spec), group_name="audit",
              deps=[key(spec, "items")],
              code_version="+".join(f"{a.name}@{a.version}" for a in DETERMINISTIC_AGENTS),
              description="Findings of each audit agent per item (pass/warn/fail) and the drop policy's outcome.")
    def audit_findings(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        discipline = context.partition_key
        items = load_audit_items(database.db, spec.name, discipline, spec.generation.options_per_item)
        findings = audit(items, spec.audit)
        run_id, new = store_audit(database.db, spec.name, discipline, inputs_hash(items, DETERMINISTIC_AGENTS),
                                  findings, context.run_id)
        failures = Counter(f.agent for f in findings if f.severity == "fail")
        return dg.MaterializeResult(metadata={
            **counts_metadata(items=len(items), findings=len(findings), dropped=len(dropped_items(findings)),
                              audit_run_id=run_id),
            "new_audit_run": new,
            "failures_by_agent": dg.MetadataValue.json(dict(sorted(failures.items()))),
        })

    return dg.Definitions(assets=[audit_findings])

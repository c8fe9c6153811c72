"""Audit stage core (OenoBench 4, B.5-B.8; KINA 4.1).

agents.py (types, item-level deterministic agents), pool.py (pool-level and escalation-gated deterministic agents),
judges.py + prompts/ (LLM agents through the gateway), findings.py (one run: order, gates, carry-over), policy.py
(drop / relabel / disclose), calibration.py (gold sheets, Cohen's kappa, advisory status), persist.py (store),
run.py (what the Dagster assets and the CLI call)."""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.audit.agents import DETERMINISTIC_AGENTS
    from benchmark_platform.audit.calibration import advisory_agents, read_gold_sheet, report_markdown
    from benchmark_platform.audit.findings import AGENTS
    from benchmark_platform.audit.goldsheet import sheet_rubrics, stratified_sample, write_gold_sheet
    from benchmark_platform.audit.judges import JudgeAgent
    from benchmark_platform.audit.persist import gold_digest, load_gold_candidates, store_gold_sheets
    from benchmark_platform.audit.run import (
        audit_discipline,
        calibrate_spec,
        calibration_report,
        code_version,
        judge_panel,
        pending_audit,
        sheet_kappa_report,
    )
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "AGENTS",
    "DETERMINISTIC_AGENTS",
    "JudgeAgent",
    "advisory_agents",
    "audit_discipline",
    "calibrate_spec",
    "calibration_report",
    "code_version",
    "gold_digest",
    "judge_panel",
    "load_gold_candidates",
    "pending_audit",
    "read_gold_sheet",
    "report_markdown",
    "sheet_kappa_report",
    "sheet_rubrics",
    "store_gold_sheets",
    "stratified_sample",
    "write_gold_sheet",
]

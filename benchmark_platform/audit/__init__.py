"""Audit stage core (OenoBench 4, B.5-B.8; KINA 4.1).

agents.py (types, item-level deterministic agents), pool.py (pool-level and escalation-gated deterministic agents),
judges.py + prompts/ (LLM agents through the gateway), findings.py (one run: order, gates, carry-over), policy.py
(drop / relabel / disclose), calibration.py (gold sheets, Cohen's kappa, advisory status), persist.py (store),
run.py (what the Dagster assets and the CLI call)."""

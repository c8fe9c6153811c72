"""Evaluation core: evaluators and importers producing one per-item results frame (no Dagster here)."""

"""Asset checks: blocking ERROR checks on the release's inputs (on `audit_findings`, which the release reads for
every discipline), WARN checks elsewhere, and freshness checks on the sources with the sensor that evaluates them.

A blocking check stops the assets downstream of its asset in the same run: the release job below runs these checks
and then the release, so a failed input check means no release is written."""

from collections.abc import Callable
from datetime import timedelta

import dagster as dg
from dagster._core.definitions.unresolved_asset_job_definition import UnresolvedAssetJobDefinition

from benchmark_platform.audit import AGENTS as ALL_AUDIT_AGENTS
from benchmark_platform.audit import DETERMINISTIC_AGENTS, JudgeAgent
from benchmark_platform.automation import (
    CHECK_SAMPLE,
    duplicate_options,
    unaudited_items,
    uncalibrated_agents,
    unevaluated_items,
    unlinked_items,
)
from benchmark_platform.defs.common import DatabaseResource, key
from benchmark_platform.spec import BenchmarkSpec

AGENTS = [agent.name for agent in DETERMINISTIC_AGENTS]
# agents that need no LLM judge are exact procedures, not judgements: they need no kappa calibration
NON_JUDGE_AGENTS = [agent.name for agent in ALL_AUDIT_AGENTS if not isinstance(agent, JudgeAgent)]


def _check(
    spec: BenchmarkSpec,
    asset: str,
    name: str,
    description: str,
    rows: Callable[[DatabaseResource], list],
    severity: dg.AssetCheckSeverity,
    blocking: bool,
) -> dg.AssetChecksDefinition:
    @dg.asset_check(asset=key(spec, asset), name=name, description=description, blocking=blocking)
    def check(database: DatabaseResource) -> dg.AssetCheckResult:
        offending = rows(database)
        return dg.AssetCheckResult(
            passed=not offending,
            severity=severity,
            description=description,
            metadata={
                "offending": dg.MetadataValue.int(len(offending)),
                "sample": dg.MetadataValue.json(
                    [{k: str(v) for k, v in row.items()} for row in offending[:CHECK_SAMPLE]]
                ),
            },
        )

    return check


def release_input_checks(spec: BenchmarkSpec) -> list[dg.AssetChecksDefinition]:
    error = dg.AssetCheckSeverity.ERROR
    checks = [
        _check(
            spec,
            "audit_findings",
            "no_duplicate_options",
            "No item offers the same option twice.",
            lambda d: duplicate_options(d.db, spec.name),
            error,
            True,
        ),
        _check(
            spec,
            "audit_findings",
            "audit_policy_applied",
            "Every item has each policy agent's verdict in its discipline's latest audit run.",
            lambda d: unaudited_items(d.db, spec.name, AGENTS),
            error,
            True,
        ),
        _check(
            spec,
            "audit_findings",
            "calibrated_agents_present",
            "Every LLM-judged audit agent in the latest runs has a Cohen's-kappa calibration.",
            lambda d: uncalibrated_agents(d.db, spec.name, NON_JUDGE_AGENTS),
            error,
            True,
        ),
    ]
    if spec.sources:  # specs whose items come from scraped facts; KINA's come from experts and anchors
        checks.append(
            _check(
                spec,
                "audit_findings",
                "items_linked_to_facts_and_sources",
                "Every item is linked to a fact traced to a stored document of a registered source.",
                lambda d: unlinked_items(d.db, spec.name),
                error,
                True,
            )
        )
    return checks


def warning_checks(spec: BenchmarkSpec) -> list[dg.AssetChecksDefinition]:
    return [
        _check(
            spec,
            "evaluation_answers",
            "every_item_answered",
            "Every configuration answered every item of its discipline.",
            lambda d: unevaluated_items(d.db, spec.name),
            dg.AssetCheckSeverity.WARN,
            False,
        )
    ]


def freshness_checks(spec: BenchmarkSpec) -> list[dg.AssetChecksDefinition]:
    """WARN when a source has not been re-ingested for `automation.source_max_age_hours` (specs with sources)."""
    if not spec.sources:
        return []
    return list(
        dg.build_last_update_freshness_checks(
            assets=[key(spec, "source_documents")],
            lower_bound_delta=timedelta(hours=spec.automation.source_max_age_hours),
        )
    )


def release_job(spec: BenchmarkSpec) -> UnresolvedAssetJobDefinition:
    inputs = dg.AssetSelection.checks(*[c for check in release_input_checks(spec) for c in check.check_keys])
    return dg.define_asset_job(
        f"{spec.name}_release_job",
        selection=inputs | dg.AssetSelection.assets(key(spec, "release")),
        description="The release's input checks, then the release (skipped if one fails).",
    )

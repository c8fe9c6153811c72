"""The audit stage's work, independent of Dagster: audit one discipline (re-judging only what changed), calibrate
the agents on the gold labels, and the kappa report of gold sheets read straight from files."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmark_platform.audit.agents import DETERMINISTIC_AGENTS, K2_FORMATTING, AuditItem
from benchmark_platform.audit.calibration import (
    KappaRow,
    advisory_agents,
    calibrate,
    human_defects,
    read_gold_sheet,
    report_markdown,
)
from benchmark_platform.audit.findings import (
    AGENTS,
    AnyAgent,
    AuditOutcome,
    PreviousFindings,
    agent_versions,
    inputs_hash,
    run_audit,
)
from benchmark_platform.audit.judges import B1_TRI_JUDGE_ANSWER, B2_CLOSED_BOOK
from benchmark_platform.audit.persist import (
    audit_run_exists,
    load_answers,
    load_audit_items,
    load_calibration,
    load_gold,
    load_key_ratings,
    load_latest_findings,
    load_previous,
    store_audit,
    store_calibration,
)
from benchmark_platform.audit.policy import Action, apply_policy, human_vetoes, with_vetoes
from benchmark_platform.audit.pool import (
    C1_DISTRACTOR_DIFFICULTY,
    D2_DEDUP_CALIBRATION,
    K3_FLAGSHIP_DIFFICULTY,
    Answer,
    AuditContext,
    kina_screening_counts,
    load_human_reference,
)
from benchmark_platform.embed import Embedder
from benchmark_platform.evaluation import read_import_once
from benchmark_platform.llm import Gateway
from benchmark_platform.llm.config import ModelConfig
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import Database

ESCALATED = (C1_DISTRACTOR_DIFFICULTY, D2_DEDUP_CALIBRATION)


@dataclass
class DisciplineAudit:
    audit_run_id: int
    new_run: bool
    items: int
    outcome: AuditOutcome
    actions: list[Action]

    def kina_screening(self) -> dict[str, int]:
        """KINA 4.1 stage 1 on this discipline: audited, failed by K1 / K2 / K3, screened in."""
        return kina_screening_counts(self.outcome.findings)


def judge_panel(spec: BenchmarkSpec) -> list[ModelConfig]:
    """The judge panel's model configs (the spec's validators checked that `audit.judges` names known models)."""
    known = {m.name: m for m in spec.models}
    return [known[n] for n in spec.audit.judges]


def _context(spec: BenchmarkSpec, embedder: Embedder | None) -> AuditContext:
    path = spec.audit.human_reference
    reference = load_human_reference(path if path.is_absolute() else spec.directory / path) if path else ()
    return AuditContext(
        spec.audit, embedder, human_reference=reference, generator_families={m.name: m.family for m in spec.models}
    )


def settings_digest(spec: BenchmarkSpec) -> str:
    return json.dumps(spec.audit.model_dump(mode="json"), sort_keys=True)


def code_version(spec: BenchmarkSpec) -> str:
    """The audit assets' code version: changes with any agent's version (prompts included), the audit section
    (thresholds, judges) or the seed."""
    payload = repr([agent_versions(), settings_digest(spec), spec.seed])
    return "audit-" + hashlib.sha256(payload.encode()).hexdigest()[:12]


def calibration_report(rows: Sequence[KappaRow], spec: BenchmarkSpec) -> str:
    """The calibration's kappas as Markdown, each agent's status against the spec's advisory threshold."""
    return report_markdown(rows, spec.audit.kappa_advisory_below)


async def audit_discipline(
    db: Database,
    spec: BenchmarkSpec,
    discipline: str,
    embedder: Embedder | None,
    gateway: Gateway | None = None,
    dagster_run_id: str | None = None,
    agents: Sequence[AnyAgent] = AGENTS,
) -> DisciplineAudit:
    items = load_audit_items(db, spec.name, discipline)
    _, previous = load_previous(db, spec.name, discipline)
    ctx = _context(spec, embedder)
    ctx.answers = _answers(db, spec, discipline, items)
    outcome = await run_audit(items, ctx, previous, gateway, judge_panel(spec), spec.seed, agents)
    calibration = load_calibration(db, spec.name)
    vetoes = _human_vetoes(db, spec, items)
    actions = with_vetoes(apply_policy(outcome.findings, spec.audit, advisory_agents(calibration)), vetoes)
    digest = _digest(spec, items, agents, ctx.answers, calibration, vetoes)
    run_id, new = store_audit(
        db,
        spec.name,
        discipline,
        digest,
        outcome.findings,
        dagster_run_id,
        corpus=outcome.corpus,
        skipped=outcome.skipped,
        actions=actions,
    )
    return DisciplineAudit(run_id, new, len(items), outcome, actions)


def _answers(db: Database, spec: BenchmarkSpec, discipline: str, items: Sequence[AuditItem]) -> list[Answer]:
    families = {m.name: m.family for m in spec.models}
    return answers_for_audit(spec, {i.item_id for i in items}, load_answers(db, spec.name, discipline, families))


def _digest(
    spec: BenchmarkSpec,
    items: Sequence[AuditItem],
    agents: Sequence[AnyAgent],
    answers: list[Answer],
    calibration: Sequence[KappaRow] = (),
    vetoes: Sequence[Action] = (),
) -> str:
    """The audit run's identity: items (with their facts), agent versions, settings, the answers K3/D1 read, the
    calibration the policy applies (issue 31: the advisory set and the kappa rows that decided it, so gold labels
    imported after an audit make a new run with the policy re-applied, instead of reusing the earlier run's
    actions), and the human vetoes when there are any (issue 32: a new rating gives a new run; without any the
    identity is unchanged)."""
    extra = json.dumps([(v.item_id, v.reason) for v in vetoes]) if vetoes else ""
    return inputs_hash(
        items,
        agents,
        settings_digest(spec)
        + json.dumps(sorted((a.item_id, a.model, a.correct) for a in answers))
        + calibration_digest(calibration)
        + extra,
    )


def calibration_digest(rows: Sequence[KappaRow]) -> str:
    """The calibration's part of the audit digest; empty without gold labels, so an uncalibrated audit keeps the
    digest it had before calibration entered it. Kappas are rounded to 6 places: the digest names the rows, the
    advisory decision itself is the stored boolean."""
    if not rows:
        return ""
    kappas = sorted(
        (r.agent, r.agent_version, r.rubric, r.n, r.agent_flags, r.human_defects, _round(r.kappa), r.is_primary)
        for r in rows
    )
    return json.dumps({"advisory": sorted(advisory_agents(rows)), "kappa": kappas})


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _human_vetoes(db: Database, spec: BenchmarkSpec, items: Sequence[AuditItem]) -> list[Action]:
    """Items whose key the spec's human raters marked wrong (issue 32, OenoBench 4.3): dropped with the rating."""
    return human_vetoes(load_key_ratings(db, spec.name, [i.item_id for i in items], spec.audit.gold_sheets))


@dataclass(frozen=True)
class PendingAudit:
    """Why a discipline's latest audit run is out of date: stale items (re-judged by every item-level agent), or
    changed answers only (the answer-dependent pool agents K3 and D1 re-run; item-level findings carry over)."""

    digest: str  # the audit run it would write: a run key, so the same inputs are requested once
    stale_items: list[str]
    answered_items: list[str]  # items whose flagship answers changed since the latest run (K3 re-judges them)

    @property
    def trigger(self) -> str:
        """stale_items, answers, or else the settings or calibration (the policy is re-applied, nothing re-judged)."""
        return "stale_items" if self.stale_items else "answers" if self.answered_items else "calibration"


def pending_audit(db: Database, spec: BenchmarkSpec, discipline: str) -> PendingAudit | None:
    """None when an audit run of exactly the current inputs exists (nothing to do), else what changed."""
    items = load_audit_items(db, spec.name, discipline)
    if not items:
        return None
    answers = _answers(db, spec, discipline, items)
    digest = _digest(spec, items, AGENTS, answers, load_calibration(db, spec.name), _human_vetoes(db, spec, items))
    if audit_run_exists(db, spec.name, discipline, digest):
        return None
    _, previous = load_previous(db, spec.name, discipline)
    return PendingAudit(digest, _stale(spec, items, previous), answers_changed(spec, items, answers, previous))


def answers_changed(
    spec: BenchmarkSpec, items: Sequence[AuditItem], answers: Sequence[Answer], previous: PreviousFindings
) -> list[str]:
    """Items whose flagship answers differ from what the latest K3 finding counted: the items the answers landing
    affect (D1 is a corpus verdict, per generator family, with no item rows). Empty for a spec without K3."""
    kina = spec.audit.kina
    if kina is None:
        return []
    answered: dict[str, set[str]] = defaultdict(set)
    for a in answers:
        if a.model in kina.flagships:
            answered[a.item_id].add(a.model)
    k3 = K3_FLAGSHIP_DIFFICULTY
    changed = []
    for item in items:
        finding = previous.get((item.item_id, k3.name, k3.version))
        counted = int(finding.payload.get("flagships_answered", 0)) if finding else 0
        if len(answered[item.item_id]) != counted:
            changed.append(item.item_id)
    return changed


def answers_for_audit(spec: BenchmarkSpec, item_ids: set[str], stored: list[Answer]) -> list[Answer]:
    """The answers K3 (flagship difficulty) and D1 (self-preference) judge from.

    Decision (issue 18): imported answers are loaded BEFORE the audit, straight from the spec's evaluation.imports
    files, so a bank with recorded answers (MMLU-Pro's 29 models) is audited with them on the first run. Answers the
    slate generates exist only after the audit (models answer the released items), so they reach K3/D1 when the
    audit re-runs (the re-audit sensor, or the next materialisation); their stored copies are used then. Stored
    answers of imported models are ignored (the file is the source), so the audit's inputs stay the same.
    """
    imported: list[Answer] = []
    for entry in spec.evaluation.imports:
        frame = read_import_once(entry, spec.directory)
        mine = frame.filter(frame["item_id"].is_in(sorted(item_ids)))
        # column lists, not iter_rows: the same rows in the same order, without a dict per row (~26k a discipline)
        for item_id, model, correct in zip(
            mine["item_id"].to_list(), mine["model"].to_list(), mine["correct"].to_list(), strict=True
        ):
            imported.append(Answer(item_id, model, entry.family or model, correct))
    models = {a.model for a in imported}
    return [*imported, *(a for a in stored if a.model not in models)]


async def calibrate_spec(db: Database, spec: BenchmarkSpec, embedder: Embedder | None) -> list[KappaRow]:
    """Kappa of every agent on the gold labels: the agents that need no model run on the imported gold sheets' items;
    stored items rated in the review app contribute their latest findings (which win over a sheet's copy of the same
    item). Replaces the spec's calibration."""
    items, ratings = load_gold(db, spec.audit.gold_sheets)
    findings = (await run_audit(items, _context(spec, embedder))).findings if items else []
    stored = load_latest_findings(db, spec.name, {r.item_ref for r in ratings})
    rows = calibrate([*findings, *stored], human_defects(ratings, spec.audit), spec.audit, spec.seed)
    store_calibration(db, spec.name, rows)
    return rows


async def sheet_kappa_report(
    paths: Sequence[Path], spec: BenchmarkSpec, embedder: Embedder | None, human_reference: Path | None = None
) -> tuple[list[KappaRow], set[str]]:
    """Kappa of the agents that need no frontier model on gold sheets read from files (nothing stored); the
    escalation-gated deterministic agents (C1, D2) run on every item here, so that they are calibrated too."""
    sheets = [read_gold_sheet(p, reviewer=p.stem) for p in paths]
    items = [i for s in sheets for i in s.items]
    ctx = _context(spec, embedder)
    if human_reference is not None:
        ctx.human_reference = load_human_reference(human_reference)
    ungated = [dataclasses.replace(a, gate=None) if a in ESCALATED else a for a in AGENTS]  # calibrate them all
    findings = (await run_audit(items, ctx, agents=ungated)).findings
    rows = calibrate(findings, human_defects([r for s in sheets for r in s.ratings], spec.audit), spec.audit, spec.seed)
    return rows, advisory_agents(rows)


def tracked_agents(spec: BenchmarkSpec) -> list[tuple[str, str]]:
    """Item-level agents that judge every item: a missing or outdated finding of one of them makes the item stale."""
    agents: list[AnyAgent] = [
        *DETERMINISTIC_AGENTS,
        *([K2_FORMATTING] if spec.audit.kina else []),
        *([B1_TRI_JUDGE_ANSWER, B2_CLOSED_BOOK] if spec.audit.judges else []),
    ]
    return [(a.name, a.version) for a in agents]


def stale_items(db: Database, spec: BenchmarkSpec, discipline: str) -> list[str]:
    """Items whose content (question, options, key, linked and related facts' texts, difficulty) changed since the
    latest run's findings, or that a tracked agent's current version has not judged: what a re-audit re-judges."""
    return _stale(spec, load_audit_items(db, spec.name, discipline), load_previous(db, spec.name, discipline)[1])


def _stale(spec: BenchmarkSpec, items: Sequence[AuditItem], previous: PreviousFindings) -> list[str]:
    tracked = tracked_agents(spec)
    return [
        i.item_id
        for i in items
        if any((f := previous.get((i.item_id, a, v))) is None or f.input_hash != i.input_hash for a, v in tracked)
    ]

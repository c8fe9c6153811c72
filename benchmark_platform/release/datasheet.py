"""What a release says about itself, computed from its own tables: the datasheet (Gebru et al., "Datasheets for
Datasets", CACM 2021: motivation, composition, collection, preprocessing, uses, distribution, maintenance) and the
facts the Croissant manifest's responsible-AI fields repeat. Nothing here is hand-written per release."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

import polars as pl

from benchmark_platform.release.kina import screening_section


@dataclass(frozen=True)
class ReleaseSummary:
    spec_name: str
    version: str
    description: str
    licence: str
    canary: str
    disciplines: list[tuple[str, str]]  # (partition key, display path)
    tables: dict[str, pl.DataFrame]  # the released tables by name (dev split when sealed)
    sealed_items: int  # items in the encrypted test split
    spec_notes: tuple[str, ...] = ()  # what the spec configured per stage (models named, fallbacks chosen)
    include_manual_review: bool = False
    min_answered_share: float = 0.5  # analysis.min_answered_share: the leaderboard's ranking rule (issue 31)
    sealed_outcomes: pl.DataFrame | None = None  # item_outcomes rows of the sealed test split (None: nothing sealed)

    def table(self, name: str) -> pl.DataFrame:
        return self.tables.get(name, pl.DataFrame())

    @property
    def items(self) -> pl.DataFrame:
        return self.table("items")

    @property
    def generators(self) -> list[str]:
        items = self.items
        return sorted(items["generator"].drop_nulls().unique().to_list()) if "generator" in items.columns else []

    @property
    def evaluated_models(self) -> list[str]:
        answers = self.table("evaluation_answers")
        return sorted(answers["model"].unique().to_list()) if answers.height else []

    def limitations(self) -> list[str]:
        notes = []
        if self.imported_items:
            notes.append(
                f"{self.imported_items} items come from an existing public item bank: they may have been seen in "
                "training data, and the bank's own errors are inherited except where the audit caught them."
            )
        if self.generators == ["deterministic"]:
            notes.append(
                "Every question was generated deterministically from structured facts by templates and "
                "distractor mining (the default run calls no LLM): phrasing is formulaic and distractors are "
                "other values of the same field, so the items test recall of catalogued facts rather than "
                "reasoning."
            )
        empty = [
            key
            for key, _ in self.disciplines
            if key not in set(self.items["discipline"].to_list() if self.items.height else [])
        ]
        if empty:
            why = dict(funnel_table(self).select("discipline", "why none released").iter_rows())
            by_reason: dict[str, list[str]] = {}
            for key in empty:
                by_reason.setdefault(why.get(key) or "no item", []).append(key)
            notes.append(
                f"Disciplines without released items ({len(empty)} of {len(self.disciplines)}): "
                + "; ".join(f"{reason}: {', '.join(keys)}" for reason, keys in by_reason.items())
                + "; coverage of the taxonomy is uneven."
            )
        if self.evaluated_models and set(self.evaluated_models) <= {"random-baseline"}:
            notes.append(
                "Only the random baseline was evaluated; the leaderboard shows chance accuracy, not model ability."
            )
        unparsed = self.unparsed_note()
        if unparsed:
            notes.append(unparsed)
        findings, calibration = self.table("audit_findings"), self.table("gold_calibration")
        calibrated = set(calibration["agent"]) if calibration.height else set()
        uncalibrated = sorted(set(findings["agent"]) - calibrated) if findings.height else []
        if uncalibrated:
            notes.append(
                f"Audit agents without a gold-label calibration (kappa) in this release: "
                f"{', '.join(uncalibrated)}; their verdicts are not validated against human judgement."
            )
        if calibration.height and calibration["advisory"].any():
            advisory = sorted(set(calibration.filter(pl.col("advisory"))["agent"]))
            notes.append(
                f"Agents whose agreement with human gold labels fell below the threshold only advise: "
                f"{', '.join(advisory)} (data/gold_calibration.parquet)."
            )
        tiers = self.table("licences")
        if tiers.height and cast(int, tiers["tier"].max() or 0) > 1:  # no tier: an item bank without sources
            notes.append("Some facts come from tier-2/3 sources (not official records); see the licence table.")
        notes.append("Sources are snapshots at their recorded retrieval; facts may have changed since.")
        return notes

    def unparsed_note(self) -> str | None:
        """How many answers had no extractable option, and how they were scored (None when every answer parsed)."""
        board = self.table("leaderboard")
        if not board.height or "unparsed_answers" not in board.columns or not board["unparsed_answers"].sum():
            return None
        worst = board.filter(pl.col("unparsed_answers") > 0).sort(
            ["unparsed_answers", "model"], descending=[True, False]
        )
        listed = ", ".join(f"{r['model']} {r['unparsed_answers']}" for r in worst.head(3).iter_rows(named=True))
        return (
            f"Answers from which no option could be extracted score as wrong: {worst.height} of {board.height} "
            f"configurations have some (most: {listed}; per configuration in `data/leaderboard.parquet`, column "
            "`unparsed_answers`). Some harnesses (MMLU-Pro's scoring script among them) draw a random option for "
            "such answers instead, which adds about one in the number of options of them to a model's correct count."
        )

    @property
    def imported_items(self) -> int:
        return self.table("item_provenance").height

    def collection(self) -> str:
        sources = self.table("sources")
        bank = self.table("item_provenance")
        if bank.height and bank.height == self.items.height:
            banks = bank.group_by("bank_id", "file_name", "file_sha256", "licence", "attribution").len().sort("bank_id")
            return (
                "Every item was imported from an existing item bank (no question was generated): "
                + "; ".join(
                    f"{n} items from {b} ({f}, sha256 {h[:12]}, {lic}; {att})"
                    for b, f, h, lic, att, n in banks.iter_rows()
                )
                + (
                    ". Each item keeps its file, row and upstream id (`data/item_provenance.parquet`); items were "
                    "chosen per discipline by the selection stage after the audit."
                )
            )
        return (
            f"Facts were extracted from {sources.height} public sources ({_tier_counts(sources)}); every stored "
            "document keeps its URL, retrieval time, content hash, tier and licence, and every fact is a span "
            "of a stored document. Questions were generated from facts chosen per discipline by the selection "
            f"stage, by {', '.join(_GENERATORS.get(g, g) for g in self.generators) or 'no generator'}."
        )


_GENERATORS = {"deterministic": "deterministic generators (no LLM)"}


def _tier_counts(sources: pl.DataFrame) -> str:
    if not sources.height:
        return "none"
    counts = sources.group_by("tier").len().sort("tier")
    return ", ".join(f"{n} of tier {tier}" for tier, n in counts.iter_rows())


def _markdown(frame: pl.DataFrame, limit: int | None = None) -> str:
    if not frame.height:
        return "_(none)_"
    shown = frame.head(limit) if limit else frame
    header = "| " + " | ".join(shown.columns) + " |\n|" + "---|" * len(shown.columns) + "\n"
    body = "".join("| " + " | ".join(_cell(v) for v in row) + " |\n" for row in shown.iter_rows())
    more = (
        f"\n_({frame.height - shown.height} more rows in the Parquet table)_\n" if shown.height < frame.height else ""
    )
    return header + body + more


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def stage_report(s: ReleaseSummary) -> str:
    """Per stage, what ran and what fell back, from the release's own tables and the spec's configuration."""
    lines = []
    items = s.items
    bank = s.imported_items
    generated = items.filter(pl.col("generator").is_not_null()).height if "generator" in items.columns else 0
    lines.append(
        f"- **Items.** {items.height} released: {bank} imported from an item bank, {generated} generated"
        + (f" (generators: {', '.join(s.generators)})" if s.generators else "")
        + "."
    )
    anchors = s.table("stage_anchors")
    if anchors.height:
        kinds = anchors.with_columns(
            kind=pl.when(pl.col("derived"))
            .then(pl.lit("DERIVED from data (not expert-elicited)"))
            .when(pl.col("is_example"))
            .then(pl.lit("bundled examples (not expert-elicited)"))
            .otherwise(pl.lit("expert-elicited"))
        )
        for kind, group in kinds.group_by("kind", maintain_order=True):
            lines.append(
                f"- **Anchors: {kind[0]}** for {group.height} disciplines: {', '.join(sorted(group['discipline']))}."
            )
    else:
        lines.append("- **Anchors.** None imported: no discipline had anchor files.")
    signatures = s.table("stage_signatures")
    if signatures.height:
        fallback = signatures.filter(pl.col("fallback_used"))["discipline"].to_list()
        lines.append(
            f"- **Signatures of the fact pools (psi).** Deterministic fallback in {len(fallback)} of "
            f"{signatures.height} disciplines" + (f" ({', '.join(sorted(fallback))})" if fallback else "") + "."
        )
    lines += [f"- {note}" for note in s.spec_notes]
    selections = s.table("selections")
    if selections.height:
        chosen = selections.filter(pl.col("target") == "items")
        manual = chosen.filter(pl.col("manual_review").is_not_null())
        lines.append(
            f"- **Selection after the audit.** {chosen.height - manual.height} disciplines selected automatically "
            f"(methods: {', '.join(sorted(set(chosen.drop_nulls('certified_ratio')['method'])))}; lowest certified "
            f"ratio {float(cast(float, chosen['certified_ratio'].min()) or 0):.3f})."
        )
        for discipline, reason in manual.select("discipline", "manual_review").sort("discipline").iter_rows():
            shipped = "its audit survivors ship" if s.include_manual_review else "excluded from this release"
            lines.append(f"  - manual review: **{discipline}** ({reason}); {shipped}.")
        if "response" in chosen.columns:
            lines.append(response_note([json.loads(r) for r in chosen["response"].drop_nulls()]))
    findings = s.table("audit_findings")
    ran = sorted(set(findings["agent"])) if findings.height else []
    lines.append(f"- **Audit agents that ran:** {', '.join(ran) or 'none'}.")
    skips = s.table("stage_audit_skips")
    if skips.height:
        grouped = (
            skips.group_by("agent", "reason").agg(pl.col("discipline").n_unique().alias("n")).sort("agent", "reason")
        )
        for agent, reason, n in grouped.iter_rows():
            lines.append(f"  - skipped **{agent}** in {n} disciplines: {reason}")
    evaluations = s.table("stage_evaluations")
    if evaluations.height:
        how = {"baseline": "random baseline", "model": "generated through the LLM gateway", "imported": "imported"}
        for kind, group in evaluations.group_by("kind", maintain_order=True):
            detail = sorted(
                {g for g in group["scoring"].drop_nulls()} | {g for g in group["import_format"].drop_nulls()}
            )
            lines.append(
                f"- **Evaluated, {how.get(kind[0], kind[0])}**"
                + (f" ({', '.join(detail)})" if detail else "")
                + f": {group['model'].n_unique()} configurations ({', '.join(sorted(group['model'].unique())[:8])}"
                + (", ..." if group["model"].n_unique() > 8 else "")
                + ")."
            )
    return "\n".join(lines)


def response_note(responses: list[dict[str, Any]]) -> str:
    """The item selections' response-pattern term and held-out validation (selection/response.py), in one line."""
    applied = [r for r in responses if r.get("response_term") == "applied"]
    if not applied:
        return "- **Response patterns.** No response data: coverage-only selection."
    validated = [r for r in applied if "holdout_tau" in r]
    weights = sorted({float(r["response_weight"]) for r in applied})  # per discipline: boosted for a small K_d
    line = (
        f"- **Response patterns.** Models' imported answers entered the item selection in {len(applied)} of "
        f"{len(responses)} disciplines (facility location over answer patterns, weight "
        + (f"{weights[0]:g}" if len(weights) == 1 else f"{weights[0]:g} to {weights[-1]:g} by the discipline's K_d")
        + (
            f", and the items' Fisher information about ability, weight {information} / K_d^2"
            if (information := applied[0].get("response_information_weight"))
            else ""
        )
        + f", {max(r['response_models'] for r in applied)} models)."
    )
    if not validated:
        return line + f" Held-out validation: {applied[0].get('holdout_validation', 'not run')}."

    def mean(key: str) -> float:
        return sum(float(r[key]) for r in validated) / len(validated)

    return line + (
        f" Held-out validation per discipline ({validated[0]['holdout_validation']}), mean over "
        f"{len(validated)} disciplines: Kendall tau {mean('holdout_tau'):.3f} of the held-out models' ranking by the "
        f"selection with the IRT estimator vs {mean('random_tau'):.3f} for stratified random subsets of the same "
        f"size; accuracy error {mean('holdout_acc_mae_points'):.2f} vs {mean('random_acc_mae_points'):.2f} points."
    )


def spec_notes(
    signature_model: str | None,
    generators: list[str],
    judges: list[str],
    has_imports: bool,
    has_sources: bool = True,
    require_review_approval: bool = False,
) -> tuple[str, ...]:
    """What the spec configured that the tables alone do not show."""
    return (
        "**Signatures psi (KINA App. B).** "
        + (
            f"From the LLM {signature_model}."
            if signature_model
            else "Deterministic fallback features: the spec "
            "names no selection.signature_model (an LLM psi is the method; the fallback is a proxy)."
        ),
        "**Generators.** "
        + (
            ", ".join(generators)
            if generators
            else "none configured: only the deterministic strategies could run (no LLM-written questions)."
            if has_sources
            else "none: the spec has no sources, so nothing was generated (items come from its item bank)."
        ),
        "**Audit judges.** "
        + (
            ", ".join(judges)
            if judges
            else "none configured: every agent that needs an LLM judge was skipped (listed below with its reason)."
        ),
        "**Expert review.** "
        + (
            "Only items the review tournament approved ship (the committee's latest decision per item)."
            if require_review_approval
            else "Not required for this release (release.require_review_approval is false): items ship on the "
            "audit and the selection alone."
        ),
        "**Answers seen by the audit (K3, D1).** "
        + (
            "Imported answers are loaded before the audit, from the spec's evaluation.imports files; answers the "
            "slate generates reach the audit when it re-runs."
            if has_imports
            else "Only stored answers of earlier "
            "evaluations; answers generated in this run reach K3/D1 when the audit re-runs."
        ),
    )


def answer_coverage(s: ReleaseSummary) -> str:
    """Issue 31: the ranking rule for configurations with missing answers, and every such configuration by name."""
    board = s.table("leaderboard")
    rule = (
        "- **Missing answers and the ranking rule.** A missing answer (no recorded answer for an item) is not "
        "counted as wrong: the leaderboard ranks configurations by their accuracy over the items they answered "
        "(`answered_accuracy`, with its own bootstrap 95% CI), and only those that answered at least "
        f"{s.min_answered_share:.0%} of the items (analysis.min_answered_share); the others are listed unranked. "
        "`accuracy` is the strict score (a missing answer scores 0). An answer with no extractable option stays "
        "wrong: it was answered (`unparsed`). Accuracies over different item sets are not strictly comparable: "
        "where the spec has an item bank, `pool_accuracy` estimates each configuration's accuracy on the whole bank "
        "from the items it answered, which is the comparable figure. Heat-map cells with under "
        f"{s.min_answered_share:.0%} of their items answered are drawn n/a."
    )
    if not board.height or "answered" not in board.columns:
        return rule
    incomplete = board.filter(pl.col("missing") > 0).sort("model")
    if not incomplete.height:
        return rule + " Every configuration answered every released item."
    by_group = s.table("accuracy_by_group")
    lines = [rule, f"  Configurations with missing answers ({incomplete.height} of {board.height}):"]
    for r in incomplete.iter_rows(named=True):
        gaps = ""
        if by_group.height and "answered" in by_group.columns:
            worst = by_group.filter(
                (pl.col("model") == r["model"]) & (pl.col("grouping") == "discipline") & (pl.col("missing") > 0)
            ).sort(["missing", "group_value"], descending=[True, False])
            gaps = "; missing most in " + ", ".join(
                f"{g} ({a} of {n} answered)"
                for g, a, n in worst.select("group_value", "answered", "n_items").head(3).iter_rows()
            )
        answered = r["answered_accuracy"]
        pool = r.get("pool_accuracy")
        lines.append(
            f"  - **{r['model']}**: answered {r['answered']} of {r['n_items']} items ({r['missing']} missing)"
            + (f", {answered:.1f}% over them" if answered is not None else "")
            + f", strict {r['accuracy']:.1f}%"
            + (f", bank-level estimate {pool:.1f}%" if pool is not None else "")
            + (f"; rank {r['rank']}" if r["rank"] is not None else "; unranked")
            + gaps
            + "."
        )
    return "\n".join(lines)


def post_evaluation_audit(s: ReleaseSummary) -> str:
    """Issue 31 (OenoBench 4.3): the key-error suspects the evaluation's answers point to, counted by reason."""
    suspects = s.table("analyses/suspect_items")
    if "reason" not in suspects.columns:
        return "- **Post-evaluation audit.** Not run (no evaluated model answers)."
    counts = dict(suspects.group_by("reason").len().iter_rows()) if suspects.height else {}
    return (
        f"- **Post-evaluation audit (key-error suspects).** {suspects.height} of {s.items.height} released items are "
        f"suspects: {counts.get('no_model_correct', 0)} that no evaluated model answered correctly and "
        f"{counts.get('negative_point_biserial', 0)} whose correctness correlates negatively with the models' "
        "skill (point-biserial against each model's accuracy on the other items). They are reported with their "
        "evidence in `data/analyses/suspect_items.parquet` and still ship: a suspect is a question for a reviewer, "
        "not a verdict."
    )


def _with_items(s: ReleaseSummary) -> int:
    """Disciplines with at least one released item (open or sealed)."""
    return int((funnel_table(s)["released"] > 0).sum())


def _origin(s: ReleaseSummary) -> str:
    if s.items.height and s.imported_items == s.items.height:
        return "its provenance in the item bank (`data/item_provenance.parquet`)"
    return "the facts it came from (`data/item_facts.parquet`, `data/facts.parquet`) and their sources"


def datasheet(summary: ReleaseSummary, file_count: int) -> str:
    s = summary
    items = s.items
    per_discipline = (
        items.group_by("discipline").len("items").sort("discipline")
        if items.height
        else pl.DataFrame({"discipline": [], "items": []})
    )
    per_strategy = (
        items.group_by("strategy", "generator").len("items").sort("strategy") if items.height else pl.DataFrame()
    )
    findings = s.table("audit_findings")
    audit = (
        findings.group_by("agent", "agent_version", "severity").len("findings").sort("agent", "severity")
        if findings.height
        else pl.DataFrame()
    )
    actions = s.table("audit_actions")
    policy = actions.group_by("action").len("items").sort("action") if actions.height else pl.DataFrame()
    calibration = s.table("gold_calibration")
    if calibration.height:
        calibration = calibration.filter(pl.col("is_primary")).select(
            "agent", "rubric", "n", "kappa", "ci_low", "ci_high", "advisory"
        )
    licences = s.table("licences")
    licence_totals = (
        licences.group_by("licence").agg(pl.col("facts").sum(), pl.col("items").sum()).sort("licence")
        if licences.height
        else pl.DataFrame()
    )
    sources = (
        s.table("sources").select("source_id", "title", "publisher", "tier", "licence", "documents")
        if s.table("sources").height
        else pl.DataFrame()
    )
    split = (
        f"{items.height} items are open (dev split); {s.sealed_items} items form the test split, sealed with "
        "Fernet (files under sealed/; the key is distributed separately and is not part of the release)."
        if s.sealed_items
        else f"All {items.height} items are open; no test split is sealed in this release."
    )
    limitations = "\n".join(f"- {note}" for note in s.limitations())
    return f"""# Datasheet: {s.spec_name} {s.version}

Canary: {s.canary}

This datasheet follows Gebru et al., "Datasheets for Datasets" (2021). Every number below is computed from the
release's own tables.

## Motivation
- **Purpose.** {s.description.strip()}
- **Creators.** Built with benchmark_platform, a Dagster asset graph (ingest, facts, selection, generation, audit,
  evaluation, analysis, release); `lineage.json` records the build's run and the data version, code version and
  run of every upstream asset partition.

## Composition
- **Instances.** {items.height} multiple-choice questions in {_with_items(s)} of the taxonomy's {len(s.disciplines)} disciplines; each has its options
  (`data/options.parquet`) and {_origin(s)}.
- **Splits.** {split}
- **Labels.** {"The correct option of each imported item is the key its bank gives." if s.imported_items else "The correct option of each item is the fact's value; explanations cite the fact. Every option's truth value (right, or wrong for this stem) is proven by stored facts, listed per option in `data/options.parquet` (`proving_fact_ids`) and checked by the audit's G1_grounding agent."}
- **Per discipline.**

{_markdown(per_discipline)}
{funnel_section(s)}
- **Per generation strategy.**

{_markdown(per_strategy)}
- **Confidential or personal data.** Items are built only from the public sources listed below; names of
  businesses or persons appear only as those sources publish them (see `data/facts.parquet`).

## What ran and what fell back
{stage_report(s)}

{screening_section(s.tables)}
## Collection process
{s.collection()}

{_markdown(sources)}

## Preprocessing, cleaning, labelling
- Near-duplicate facts were removed; facts were selected per discipline; items were audited by:

{_markdown(audit)}
- **Calibration against human gold labels** (Cohen's kappa per agent and rubric, bootstrap 95% CI):

{_markdown(calibration)}
- **Policy actions** (drop: not released; advise: an advisory agent's failure, released with the note;
  `data/audit_actions.parquet` gives each item's reason):

{_markdown(policy)}
{post_evaluation_audit(s)}

## Uses
- Evaluating the factual knowledge of language models in the domain, per discipline, difficulty and strategy.
- Evaluated configurations in this release: {", ".join(s.evaluated_models) or "none"}; see
  `data/leaderboard.parquet` and `data/analyses/`.
{answer_coverage(s)}
- **Known limitations.**
{limitations}

## Distribution
- **Licence.** The release is distributed under {s.licence}; the content inherits its sources' licences:

{_markdown(licence_totals)}
- Per source: `data/licences.parquet`. Formats: Parquet tables, a Croissant manifest (`croissant.json`), exports for
  lm-evaluation-harness, Inspect AI and Hugging Face `datasets` (`exports/`). {file_count} files, each hashed in
  `manifest.json`.
- **Contamination.** The canary string above is in every file (Parquet metadata, JSON, text headers, PNG text
  chunks); do not train on files that contain it.

## Maintenance
- Versions are kept side by side (`releases/{s.spec_name}/<version>/`); a new version never deletes an old one.
- `benchmark-platform release verify <path>` checks every hash; `benchmark-platform release rebuild {s.version}`
  rebuilds this version from its recorded inputs and proves the files byte-identical;
  `benchmark-platform release diff A B` lists added, removed and changed items.
"""


# ---------------------------------------------------------------- issue 32: from import to release, per discipline

FUNNEL = ("imported", "generated", "audited", "dropped", "selected", "released")


def funnel_table(s: ReleaseSummary) -> pl.DataFrame:
    """Per discipline of the taxonomy: items imported from the bank or generated, audited, dropped by the audit,
    selected, released, from `data/item_outcomes` alone (with its sealed rows when a test split is sealed)."""
    outcomes = s.table("item_outcomes")
    if s.sealed_outcomes is not None and s.sealed_outcomes.height:
        outcomes = pl.concat([outcomes, s.sealed_outcomes], how="vertical_relaxed")
    rows = []
    for key, _ in s.disciplines:
        own = outcomes.filter(pl.col("discipline") == key) if outcomes.height else outcomes
        counts = {
            "imported": int((own["origin"] == "item_bank").sum()) if own.height else 0,
            "generated": int((own["origin"] == "generated").sum()) if own.height else 0,
            **{c: int(own[c].sum()) if own.height else 0 for c in ("audited", "dropped", "selected", "released")},
        }
        rows.append(
            {"discipline": key, **counts, "why none released": _none_released(own) if not counts["released"] else ""}
        )
    schema = {"discipline": pl.String, **{c: pl.Int64 for c in FUNNEL}, "why none released": pl.String}
    return pl.DataFrame(rows, schema=schema)


def _none_released(own: pl.DataFrame) -> str:
    """Why a discipline released nothing, from its items' own reasons (the most common one, and how many share it)."""
    if not own.height:
        return "no item was imported or generated for it"
    reasons = own.group_by("reason").len().sort(["len", "reason"], descending=[True, False])
    reason, n = reasons.row(0)
    return f"{reason} ({n} of {own.height} items)" if reasons.height > 1 else f"{reason} (all {n} items)"


def funnel_section(s: ReleaseSummary) -> str:
    """The datasheet's "From import to release" lines: the totals sentence and the per-discipline table."""
    table = funnel_table(s)
    totals = {c: int(table[c].sum()) for c in FUNNEL}
    with_items = int((table["released"] > 0).sum())
    return (
        f"- **From import to release.** {totals['imported']} imported from an item bank and {totals['generated']} "
        f"generated -> {totals['audited']} audited -> {totals['dropped']} dropped by the audit -> "
        f"{totals['selected']} selected -> {totals['released']} released, in {with_items} of {table.height} "
        "disciplines. Every item's fate and reason: `data/item_outcomes.parquet`."
        + (
            ""
            if s.table("leaderboard").height
            else " No model answered a released item: this release has no leaderboard."
        )
        + "\n\n"
        + _markdown(table)
    )

"""What a release says about itself, computed from its own tables: the datasheet (Gebru et al., "Datasheets for
Datasets", CACM 2021: motivation, composition, collection, preprocessing, uses, distribution, maintenance) and the
facts the Croissant manifest's responsible-AI fields repeat. Nothing here is hand-written per release."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl


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
            notes.append(
                f"Disciplines without released items: {', '.join(empty)} (no template produced questions "
                "from their facts); coverage of the taxonomy is uneven."
            )
        if self.evaluated_models and set(self.evaluated_models) <= {"random-baseline"}:
            notes.append(
                "Only the random baseline was evaluated; the leaderboard shows chance accuracy, not model ability."
            )
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
        if tiers.height and (tiers["tier"].max() or 0) > 1:
            notes.append("Some facts come from tier-2/3 sources (not official records); see the licence table.")
        notes.append("Sources are snapshots at their recorded retrieval; facts may have changed since.")
        return notes

    def collection(self) -> str:
        sources = self.table("sources")
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
  evaluation, analysis, release); the manifest records the data version, code version and run of every upstream
  asset partition.

## Composition
- **Instances.** {items.height} multiple-choice questions over {len(s.disciplines)} disciplines; each has its options
  (`data/options.parquet`), the facts it came from (`data/item_facts.parquet`, `data/facts.parquet`) and their sources.
- **Splits.** {split}
- **Labels.** The correct option of each item is the fact's value; explanations cite the fact.
- **Per discipline.**

{_markdown(per_discipline)}
- **Per generation strategy.**

{_markdown(per_strategy)}
- **Confidential or personal data.** Items are built only from the public sources listed below; names of
  businesses or persons appear only as those sources publish them (see `data/facts.parquet`).

## Collection process
{s.collection()}

{_markdown(sources)}

## Preprocessing, cleaning, labelling
- Near-duplicate facts were removed; facts were selected per discipline; items were audited by:

{_markdown(audit)}
- **Calibration against human gold labels** (Cohen's kappa per agent and rubric, bootstrap 95% CI):

{_markdown(calibration)}
- **Policy actions** (drop: not released; `data/audit_actions.parquet` gives each item's reason):

{_markdown(policy)}

## Uses
- Evaluating the factual knowledge of language models in the domain, per discipline, difficulty and strategy.
- Evaluated configurations in this release: {", ".join(s.evaluated_models) or "none"}; see
  `data/leaderboard.parquet` and `data/analyses/`.
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

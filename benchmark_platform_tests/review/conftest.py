"""Review test worlds: real OenoBench questions (with their human rubric ratings) as items, in a unique partition."""

from __future__ import annotations

import ast
import csv
import hashlib
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from benchmark_platform.review.models import Reviewer
from benchmark_platform.review.persist import add_reviewer
from benchmark_platform.review.rubrics import RUBRICS
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import Database, as_json, insert_rows

PASSWORD = "correct horse battery staple"
SHEETS = ("gold_sheet_scored.csv", "gold_sheet_v2_scored.csv")
APPLICABLE = tuple(k for k in RUBRICS if k != "combinatorial_validity")  # KINA's rubrics that fit 4-option items
AVA_QUESTION = "Clear Lake AVA is a sub-appellation"  # a gold-sheet question whose source is a real TTB AVA file
AVA_URL = "https://raw.githubusercontent.com/UCDavisLibrary/ava/9afb4d9b48b920dec76f4c811275f6c9a2960697/avas/clear_lake.geojson"
AVA_FIELDS = ("name", "county", "state", "within", "contains", "petitioner", "cfr_index", "cfr_revision_history")


def _score(ok: bool) -> int:
    return 5 if ok else 1


def gold_items(shared_data: Path) -> list[dict]:
    """4-option OenoBench questions rated by a human on eight binary criteria (cp1252 CSVs), mapped to KINA rubrics.

    Mapping: factuality <- answer_correct; source reliability <- source_faithful; logical rigor <- not_ambiguous and
    no_vague_language; distractor plausibility <- distractors_plausible; representativeness and depth <-
    difficulty_match and cognitive_match; combinatorial validity does not apply to 4-option items (not scored).
    """
    items = []
    for sheet in SHEETS:
        with open(shared_data / "oenobench" / "gold_sheets_scored" / sheet, encoding="cp1252", newline="") as f:
            for row in csv.DictReader(f):
                options = ast.literal_eval(row["options"])
                if len(options) != 4:
                    continue
                ok = {
                    k: row[k] == "1"
                    for k in (
                        "answer_correct",
                        "source_faithful",
                        "not_ambiguous",
                        "no_vague_language",
                        "distractors_plausible",
                        "difficulty_match",
                        "cognitive_match",
                    )
                }
                reference = {
                    "representativeness_depth": _score(ok["difficulty_match"] and ok["cognitive_match"]),
                    "factuality": _score(ok["answer_correct"]),
                    "source_reliability": _score(ok["source_faithful"]),
                    "logical_rigor": _score(ok["not_ambiguous"] and ok["no_vague_language"]),
                    "distractor_plausibility": _score(ok["distractors_plausible"]),
                }
                assert set(reference) == set(APPLICABLE)
                items.append(
                    {
                        "uuid": row["uuid"],
                        "question": row["question_text"],
                        "options": [o["text"] for o in options],
                        "answer_index": "ABCD".index(row["correct_answer"]),
                        "generator": row["generator"],
                        "explanation": row.get("source_fact") or row.get("source_facts") or "",
                        "reference": reference,
                        "flawed": min(
                            reference[k]
                            for k in ("factuality", "source_reliability", "logical_rigor", "distractor_plausibility")
                        )
                        == 1,
                    }
                )
    return items


@dataclass
class World:
    db: Database
    spec: str
    discipline: str
    items: list[dict]
    reviewers: list[str] = field(default_factory=list)
    admin: str = ""

    def item_ids(self) -> list[str]:
        return [i["item_id"] for i in self.items]


@pytest.fixture
def make_world(db: Database, shared_data: Path):
    """make_world(n_items, n_reviewers): a fresh spec/discipline with real items, reviewers and one admin."""
    pool = gold_items(shared_data)

    def make(n_items: int, n_reviewers: int, affiliations: bool = True, ava_source: bool = False) -> World:
        """``ava_source`` puts the Clear Lake AVA question first and links it to its real TTB source document."""
        tag = uuid.uuid4().hex[:8]
        world = World(db=db, spec=f"review_t{tag}", discipline=f"wine_{tag}", items=[])
        chosen = sorted(pool, key=lambda i: not i["question"].startswith(AVA_QUESTION)) if ava_source else pool
        for item in chosen[:n_items]:
            world.items.append({**item, "item_id": f"{tag}-{item['uuid']}"})
        with db.transaction() as conn:
            insert_rows(
                conn,
                "items",
                ("item_id", "spec", "discipline", "format", "question", "options", "answer_index", "explanation"),
                [
                    (
                        i["item_id"],
                        world.spec,
                        world.discipline,
                        "mcq4",
                        i["question"],
                        as_json(i["options"]),
                        i["answer_index"],
                        i["explanation"],
                    )
                    for i in world.items
                ],
            )
            insert_rows(
                conn,
                "generation_metadata",
                ("item_id", "strategy", "generator", "prompt_version"),
                [(i["item_id"], "oenobench", i["generator"], "gold-sheet") for i in world.items],
            )
        if ava_source:
            attach_ava_source(db, world, shared_data)
        for k in range(n_reviewers):
            rid = f"rev{k}-{tag}"
            add_reviewer(
                db,
                Reviewer(
                    reviewer_id=rid,
                    disciplines=frozenset({world.discipline}),
                    exams_passed=frozenset({world.discipline}),
                    affiliation=f"lab{k}-{tag}" if affiliations else "",
                ),
                "reviewer",
                PASSWORD,
            )
            world.reviewers.append(rid)
        world.admin = f"admin-{tag}"
        add_reviewer(
            db,
            Reviewer(reviewer_id=world.admin, disciplines=frozenset()),
            "admin",
            PASSWORD,
        )
        return world

    return make


def attach_ava_source(db: Database, world: World, shared_data: Path) -> None:
    """The Clear Lake AVA's GeoJSON from the UC Davis AVA project (real bytes), with its text as the ingest adapter
    renders it ("name: value" lines of the current feature), and the fact "within: North Coast" linked to the item."""
    raw = (shared_data / "ttb_ava_ucdavis" / "avas" / "clear_lake.geojson").read_bytes()
    current = next(f["properties"] for f in json.loads(raw)["features"] if not f["properties"].get("valid_end"))
    text = "\n".join(f"{k}: {current[k]}" for k in AVA_FIELDS if current.get(k))
    fact = "within: North Coast"
    start = text.index(fact)
    source_id, document_id = f"ttb_ava_geojson_{world.spec}", f"doc-{world.spec}"
    with db.transaction() as conn:
        insert_rows(
            conn,
            "sources",
            ("source_id", "spec", "adapter", "title", "publisher", "base_url", "tier", "licence", "attribution"),
            [
                (
                    source_id,
                    world.spec,
                    "geojson",
                    "American Viticultural Areas (27 CFR part 9), per-AVA GeoJSON",
                    "UC Davis Library AVA project, from US TTB rulemaking",
                    "https://github.com/UCDavisLibrary/ava",
                    1,
                    "CC0-1.0",
                    "UC Davis Library AVA project",
                )
            ],
        )
        insert_rows(
            conn,
            "documents",
            ("document_id", "source_id", "url", "retrieved_at", "media_type", "content_hash", "raw", "text", "title"),
            [
                (
                    document_id,
                    source_id,
                    AVA_URL,
                    "2026-05-07T00:00:00Z",
                    "application/geo+json",
                    hashlib.sha256(raw).hexdigest(),
                    raw,
                    text,
                    "Clear Lake",
                )
            ],
        )
        insert_rows(
            conn,
            "facts",
            ("fact_id", "spec", "discipline", "document_id", "span_start", "span_end", "text", "text_hash", "method"),
            [
                (
                    f"fact-{world.spec}",
                    world.spec,
                    world.discipline,
                    document_id,
                    start,
                    start + len(fact),
                    fact,
                    hashlib.sha256(fact.encode()).hexdigest(),
                    "template:within",
                )
            ],
        )
        insert_rows(conn, "item_facts", ("item_id", "fact_id"), [(world.items[0]["item_id"], f"fact-{world.spec}")])


def spec_for(world: World, **review: object) -> BenchmarkSpec:
    return BenchmarkSpec.model_validate(
        {
            "name": world.spec,
            "description": "review test",
            "seed": 5,
            "taxonomy": [{"name": world.discipline, "key": world.discipline}],
            "review": review,
            "release": {"version": "v0.1", "licence": "CC0-1.0", "canary": "test"},
        }
    )

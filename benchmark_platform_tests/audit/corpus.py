"""A small stored corpus for audit tests: one source and document, facts, items linked to them (own spec name)."""

from __future__ import annotations

import hashlib

from benchmark_platform.spec import BenchmarkSpec, load_spec
from benchmark_platform.store import Database, as_json, insert_rows

QUESTIONS = [
    (
        "Which grape variety is the principal red grape of Barolo?",
        ["Nebbiolo", "Barbera", "Dolcetto", "Freisa"],
        0,
        "Barolo is made from the Nebbiolo grape in Piedmont.",
    ),
    (
        "In which year was the Napa Valley AVA established?",
        ["1981", "1978", "1990", "1983"],
        0,
        "The Napa Valley AVA was established in 1981.",
    ),
    (
        "Which county contains the Atlas Peak AVA?",
        ["Napa County", "Sonoma County", "Lake County", "Marin County"],
        0,
        "Atlas Peak AVA lies within Napa County, California.",
    ),
    (
        "Which river flows through the Mosel wine region?",
        ["Mosel", "Rhine", "Main", "Danube"],
        0,
        "The Mosel wine region follows the Mosel river.",
    ),
    (
        "Which producer is based in the town of Healdsburg?",
        ["Seghesio Family Vineyards", "Opus One", "Ridge", "Stag's Leap"],
        0,
        "Seghesio Family Vineyards is a producer located in Healdsburg.",
    ),
    (
        "Which famous region is known for Chardonnay in many styles?",
        ["Burgundy", "Rioja", "Douro", "Mosel"],
        0,
        "Burgundy grows Chardonnay.",
    ),
]


def audit_spec(name: str, **audit: object) -> BenchmarkSpec:
    """The wine spec's audit under another name. The corpus' hand-written items carry no per-option proofs, so
    G1_grounding fails them all: it stays non-critical here (tests/generation/test_grounding.py tests it on generated
    items), so that these tests see the other agents' verdicts."""
    spec = load_spec("wine")
    critical = [a for a in spec.audit.critical if a != "G1_grounding"]
    return spec.model_copy(
        update={"name": name, "audit": spec.audit.model_copy(update={"critical": critical, **audit})}
    )


def fact_id(spec: str, text: str) -> str:
    return hashlib.sha256(f"{spec}|{text}".encode()).hexdigest()[:20]


def seed_corpus(db: Database, spec: str, disciplines: tuple[str, ...]) -> dict[str, list[str]]:
    """Every question in every discipline; returns discipline -> item ids."""
    source, document = f"{spec}_src", f"{spec}_doc"
    out: dict[str, list[str]] = {}
    with db.transaction() as conn:
        insert_rows(
            conn,
            "sources",
            ("source_id", "spec", "adapter", "title", "publisher", "base_url", "tier", "licence", "attribution"),
            [(source, spec, "test", "t", "p", "https://example.org", 1, "CC0", "test")],
        )
        text = " ".join(q[3] for q in QUESTIONS)
        insert_rows(
            conn,
            "documents",
            ("document_id", "source_id", "url", "retrieved_at", "media_type", "content_hash", "raw", "text", "title"),
            [(document, source, "https://example.org/d", "2026-11-29", "text/plain", "0" * 64, b"x", text, "d")],
        )
        for d in disciplines:
            ids = []
            for n, (question, options, answer, fact) in enumerate(QUESTIONS):
                fid, item = fact_id(spec, d + fact), f"{spec}-{d}-{n}"
                insert_rows(
                    conn,
                    "facts",
                    (
                        "fact_id",
                        "spec",
                        "discipline",
                        "document_id",
                        "span_start",
                        "span_end",
                        "text",
                        "text_hash",
                        "method",
                    ),
                    [(fid, spec, d, document, n * 100, n * 100 + 10, fact, fid, "sentence")],
                )
                insert_rows(
                    conn,
                    "items",
                    (
                        "item_id",
                        "spec",
                        "discipline",
                        "format",
                        "question",
                        "options",
                        "answer_index",
                        "explanation",
                        "difficulty",
                    ),
                    [(item, spec, d, "mcq4", question, as_json(options), answer, "", "L2")],
                )
                insert_rows(conn, "item_facts", ("item_id", "fact_id"), [(item, fid)])
                insert_rows(
                    conn,
                    "generation_metadata",
                    ("item_id", "strategy", "generator", "prompt_version"),
                    [(item, "template" if n % 2 else "fact_to_question", "deterministic", "1")],
                )
                ids.append(item)
            out[d] = ids
    return out


def add_fact(db: Database, spec: str, discipline: str, text: str, items: list[str]) -> None:
    """New facts land for a discipline and are linked to some of its items."""
    fid = fact_id(spec, discipline + text)
    with db.transaction() as conn:
        insert_rows(
            conn,
            "facts",
            ("fact_id", "spec", "discipline", "document_id", "span_start", "span_end", "text", "text_hash", "method"),
            [(fid, spec, discipline, f"{spec}_doc", 5000, 5010, text, fid, "sentence")],
        )
        insert_rows(conn, "item_facts", ("item_id", "fact_id", "role"), [(i, fid, "support") for i in items])

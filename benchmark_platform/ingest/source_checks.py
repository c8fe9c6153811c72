"""Checks of one stored source (the ingest asset's checks): non-empty, no duplicate content, sane text, full
provenance. Pure over the rows `source_rows` reads, so they are testable without Dagster."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchmark_platform.ingest.encoding import encoding_problems
from benchmark_platform.store import Database

CHECKS = ("non_empty", "unique_content", "encoding_sane", "provenance_complete")


@dataclass(frozen=True)
class CheckOutcome:
    name: str
    passed: bool
    description: str
    metadata: dict[str, Any] = field(default_factory=dict)


def source_rows(db: Database, source_id: str) -> list[dict[str, Any]]:
    return db.query(
        """SELECT d.document_id, d.url, d.content_hash, d.text, d.retrieved_at, s.tier, s.licence,
                  t.exchange_id IS NOT NULL AS traced
           FROM documents d JOIN sources s USING (source_id) LEFT JOIN document_traces t USING (document_id)
           WHERE d.source_id = %s ORDER BY d.document_id""",
        (source_id,),
    )


def check_source(rows: list[dict[str, Any]]) -> list[CheckOutcome]:
    hashes: dict[str, str] = {}
    duplicates = []
    for row in rows:
        if row["content_hash"] in hashes:
            duplicates.append(f"{row['url']} = {hashes[row['content_hash']]}")
        hashes.setdefault(row["content_hash"], row["url"])
    garbled = [(row["url"], problems) for row in rows if (problems := encoding_problems(row["text"]))]
    incomplete = [
        row["url"]
        for row in rows
        if not (
            row["traced"]
            and row["url"].startswith(("http://", "https://"))
            and row["tier"] in (1, 2, 3)
            and row["licence"]
            and len(row["content_hash"]) == 64
            and row["retrieved_at"]
        )
    ]
    return [
        CheckOutcome("non_empty", bool(rows), f"{len(rows)} documents", {"documents": len(rows)}),
        CheckOutcome(
            "unique_content",
            not duplicates,
            f"{len(duplicates)} documents repeat another's bytes",
            {"examples": duplicates[:5]},
        ),
        CheckOutcome(
            "encoding_sane",
            not garbled,
            f"{len(garbled)} documents with signs of a wrong decoding",
            {"examples": [f"{url}: {'; '.join(p)}" for url, p in garbled[:5]]},
        ),
        CheckOutcome(
            "provenance_complete",
            not incomplete,
            f"{len(incomplete)} documents lack a verified trace, URL, tier, licence or hash",
            {"examples": incomplete[:5]},
        ),
    ]

"""What a wine release asks about (issue 34): every released item classified into the kind of knowledge it tests.

`python -m benchmark_platform.bench wine_content [RELEASE_DIR ...] [--sample N] [--seed S]`

RELEASE_DIR is a release bundle (`<releases>/wine/<version>`; default: every wine release `make run` wrote under
`releases/`). An item's kind is the kind of its answer fact (else of
its first linked fact), read from the fact's extraction method ('rulebook:claim_deadline', 'template:surface_ha') and,
for the styles a rulebook covers, its text (sweet styles are a sweetness question). Administration (declaration
deadlines and delays, vat capacity, regulation numbers) and statistics (customs harvest declarations, surveyed
variety areas, production volumes) are what a sommelier is not examined on; the table prints their share per
discipline and in all. `--sample N` prints N items drawn with a seeded generator, for a reader's judgement.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

import polars as pl

from benchmark_platform.paths import RELEASES_DIR

ADMINISTRATION, STATISTICS = "administration", "statistics"
# extraction method -> kind (methods not listed: 'other')
KINDS: dict[str, str] = {
    **dict.fromkeys(
        [
            "rulebook:claim_deadline",
            "rulebook:declassification_notice",
            "rulebook:cellar_capacity",
            "rulebook:export_notice",
            "rulebook:bottling_notice",
            "template:cfr_index",
            "template:created",
        ],
        ADMINISTRATION,
    ),
    **dict.fromkeys(
        [
            "template:q_aop_rouge",
            "template:q_aop_blanc",
            "template:s_aop",
            "template:nb_declaration",
            "template:surface_ha",
            "template:volproduction",
            "template:superficietotale",
            "template:superficieplantée",
        ],
        STATISTICS,
    ),
    **dict.fromkeys(
        [
            "rulebook:variety",
            "rulebook:principal_variety",
            "rulebook:accessory_variety",
            "rulebook:sole_variety",
            "template:colour",
        ],
        "varieties",
    ),
    **dict.fromkeys(["rulebook:colour", "rulebook:style"], "styles and colours"),
    **dict.fromkeys(["rulebook:ageing_until", "rulebook:elevage"], "ageing and élevage"),
    "rulebook:max_residual_sugar": "sweetness",
    **dict.fromkeys(
        ["rulebook:mention", "rulebook:bottle", "rulebook:release_from", "rulebook:label_rule"],
        "bottle, labelling, release",
    ),
    **dict.fromkeys(
        ["rulebook:department", "rulebook:commune", "template:state", "template:county", "template:within", "clause"],
        "geography",
    ),
    "rulebook:soil_climate": "soils and climate",
    **dict.fromkeys(
        [
            "rulebook:min_density",
            "rulebook:max_buds",
            "rulebook:max_load",
            "rulebook:base_yield",
            "rulebook:yield_cap",
        ],
        "vineyard numbers",  # yields, densities, buds, loads: what issue 34 calls number trivia
    ),
    **dict.fromkeys(
        ["rulebook:harvest_method", "rulebook:harvest_passes", "rulebook:pruning", "rulebook:irrigation"],
        "vineyard and harvest rules",
    ),
    **dict.fromkeys(
        [
            "rulebook:min_sugar",
            "rulebook:min_natural_alcohol",
            "rulebook:max_alcohol_after_enrichment",
            "rulebook:max_total_so2",
            "rulebook:max_concentration",
        ],
        "ripeness and alcohol norms",
    ),
    **dict.fromkeys(["rulebook:banned_equipment", "rulebook:oak_chips"], "cellar equipment and practices"),
    "sentence": "prose",
    "template:City": "registry",
}
RULEBOOK_SOURCE = "inao_cahiers"
SWEET_STYLES = ("liquoreux", "moelleux", "doux naturel", "sweet")


def kind(method: str, text: str) -> str:
    found = KINDS.get(method, "other")
    if method == "rulebook:style" and any(word in text for word in SWEET_STYLES):
        return "sweetness"
    return found


def classify(release: Path) -> pl.DataFrame:
    """One row per released item: item_id, discipline, question, kind."""
    data = release / "data"
    items = pl.read_parquet(data / "items.parquet")
    links = pl.read_parquet(data / "item_facts.parquet")
    facts = pl.read_parquet(data / "facts.parquet").select("fact_id", "method", "text")
    # the answer fact, else the first linked fact (by fact id: the release's own order is not a meaning)
    links = links.with_columns((pl.col("role") != "answer").alias("_rank")).sort("item_id", "_rank", "fact_id")
    first = links.group_by("item_id", maintain_order=True).first().join(facts, on="fact_id", how="left")
    out = items.join(first.select("item_id", "method", "text"), on="item_id", how="left")
    kinds = [kind(m or "", t or "") for m, t in zip(out["method"], out["text"], strict=True)]
    return out.with_columns(pl.Series("kind", kinds)).sort("discipline", "item_id")


def table(classified: pl.DataFrame) -> str:
    """Items per discipline and kind, with the administration + statistics share per discipline and in all."""
    by: dict[str, Counter[str]] = defaultdict(Counter)
    for d, k in zip(classified["discipline"], classified["kind"], strict=True):
        by[d][k] += 1
        by["ALL"][k] += 1
    kinds = sorted({k for c in by.values() for k in c})
    lines = ["| discipline | items | admin | stats | admin+stats share | " + " | ".join(kinds) + " |"]
    lines.append("|" + "---|" * (5 + len(kinds)))
    for d in [*sorted(k for k in by if k != "ALL"), "ALL"]:
        c, n = by[d], sum(by[d].values())
        paper = c[ADMINISTRATION] + c[STATISTICS]
        share = f"{100 * paper / n:.1f}%" if n else "-"
        lines.append(
            f"| {d} | {n} | {c[ADMINISTRATION]} | {c[STATISTICS]} | {share} | "
            + " | ".join(str(c[k]) for k in kinds)
            + " |"
        )
    return "\n".join(lines)


def rulebooks_asked(release: Path) -> tuple[int, int, list[str]]:
    """(rulebooks some released item's fact comes from, rulebooks in the release's sources, the URLs of the others)."""
    data = release / "data"
    facts = pl.read_parquet(data / "facts.parquet").filter(pl.col("source_id") == RULEBOOK_SOURCE)
    linked = set(pl.read_parquet(data / "item_facts.parquet")["fact_id"])
    asked = set(facts.filter(pl.col("fact_id").is_in(linked))["document_url"])
    spec = json.loads((release / "spec.json").read_text(encoding="utf-8"))
    source = next(s for s in spec["sources"] if s["id"] == RULEBOOK_SOURCE)
    every = {source["url_template"].format(key=key) for key in source["keys"]}
    return len(asked & every), len(every), sorted(every - asked)


def sample(release: Path, classified: pl.DataFrame, n: int, seed: int) -> str:
    options = pl.read_parquet(release / "data" / "options.parquet").sort("item_id", "position")
    by_item: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    for item_id, text, correct in zip(options["item_id"], options["text"], options["is_correct"], strict=True):
        by_item[item_id].append((text, correct))
    rows = classified.rows(named=True)
    chosen = random.Random(seed).sample(range(len(rows)), min(n, len(rows)))
    out = []
    for i, at in enumerate(chosen, 1):
        r = rows[at]
        marks = "; ".join(("*" if ok else "") + text for text, ok in by_item[r["item_id"]])
        out.append(f"{i}. [{r['discipline']} / {r['kind']}] {r['question']}\n   options: {marks}")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmark_platform.bench wine_content")
    parser.add_argument("releases", nargs="*", type=Path, help="release bundles (default: releases/wine/*)")
    parser.add_argument("--sample", type=int, default=0, help="print this many items drawn with --seed")
    parser.add_argument("--seed", type=int, default=34)
    args = parser.parse_args()
    releases = args.releases or sorted(p for p in (RELEASES_DIR / "wine").glob("*") if p.is_dir())
    if not releases:
        print(
            f"error: no release under {RELEASES_DIR / 'wine'}: run `make run` or name a release bundle", file=sys.stderr
        )
        return 2
    for release in releases:
        if not (release / "data" / "items.parquet").is_file():
            print(f"error: {release}: no data/items.parquet (not a release bundle)", file=sys.stderr)
            return 2
        classified = classify(release)
        print(f"## {release}\n\n{table(classified)}\n")
        asked, total, missing = rulebooks_asked(release)
        print(f"rulebook appellations asked about: {asked} of {total}")
        for url in missing:
            print(f"   not asked: {'/'.join(url.split('/')[-3:])}")
        if args.sample:
            print(sample(release, classified, args.sample, args.seed) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

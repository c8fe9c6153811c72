"""Anchors DERIVED from an item bank, for banks that come without expert anchors (e.g. MMLU-Pro). Not
expert-elicited: every folder written here says so (`is_example: true` and a note starting with "DERIVED").

Per category: 5 random items as A_d (a third of a category under 15 items, at least 1); item labels (up to 60
in-category positives, 60 other-category negatives); pair labels (same-source pairs y_T = 1, cross-category pairs
y_T = 0, perturbed copies y_T = y_U = 1); strata by the bank's stratum key with quotas 0.8-1.2 x the stratum's share
of K_d (lower quotas 0 under 25 items: a small category's audit may leave a stratum empty). Any category size works. `python -m benchmark_platform.itembank.derived_anchors SPEC TOTAL`
rewrites the spec's anchors/<discipline>/ folders from its bank, K_d being each category's share of TOTAL (by bank
size, or with `--quotas taxonomy` by the taxonomy's stated item counts, e.g. KINA's Table 8 quotas);
`--lower-share` sets the lower quotas' 0.8.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
import yaml

from benchmark_platform.anchors import AnchorItem, AnchorSet, LabelledItem, PairLabel, Prototype, Stratum

USAGE = """Rewrite a spec's anchors/<discipline>/ folders with anchors DERIVED from its item bank (not
expert-elicited; the files say so). K_d is each category's share of TOTAL (largest remainder), capped by the
category's size. Example: python -m benchmark_platform.itembank.derived_anchors examples/my_bank/spec.yaml 20"""

SMALL_CATEGORY = 25  # fewer items: lower quotas 0, fewer anchor items

if TYPE_CHECKING:
    from benchmark_platform.spec import TaxonomyNode

DERIVED_NOTE = "DERIVED from the item bank by benchmark_platform/itembank/derived_anchors.py; not expert-elicited."


def _family(src: str) -> str:
    return src.split("-")[0]


def _perturb(text: str, rng: np.random.Generator) -> str:
    """A near-duplicate: the same text with about one word in ten dropped."""
    words = text.split()
    keep = rng.random(len(words)) > 0.1
    keep[0] = True
    return " ".join(w for w, kept in zip(words, keep, strict=True) if kept)


def largest_remainder(sizes: dict[str, int], total: int) -> dict[str, int]:
    whole = sum(sizes.values())
    exact = {c: total * n / whole for c, n in sizes.items()}
    out = {c: int(v) for c, v in exact.items()}
    for c in sorted(exact, key=lambda c: (-(exact[c] - out[c]), c))[: total - sum(out.values())]:
        out[c] += 1
    return out


def derive_anchor_set(
    category: str,
    items: pl.DataFrame,
    k_total: int,
    rng: np.random.Generator,
    note: str = DERIVED_NOTE,
    lower_share: float = 0.8,
) -> tuple[AnchorSet, pl.DataFrame]:
    """(derived anchors of one category, the category's items that are not anchor items).

    `items` has question_id, question, category, src for every category (negatives come from the others)."""
    own = items.filter(pl.col("category") == category)
    other = items.filter(pl.col("category") != category)
    if own.height == 0:
        raise ValueError(f"category {category!r} has no items")
    order = rng.permutation(own.height)
    n_anchors = 5 if own.height >= 15 else max(1, own.height // 3)
    anchor_rows = own[order[:n_anchors]]
    pool = own[order[n_anchors:]]
    small = own.height < SMALL_CATEGORY
    stratified = pool if pool.height else own  # a one-item category: its anchor item is its stratum
    families = stratified["src"].map_elements(_family, return_dtype=pl.String)
    shares = families.value_counts().sort("src")
    strata = []
    for name, count in shares.iter_rows():
        expected = k_total * count / stratified.height
        strata.append(
            Stratum(
                name=name,
                omega=count / stratified.height,
                lower=0 if small else min(count, int(lower_share * expected)),
                upper=math.ceil(1.2 * expected) + 1,
            )
        )
    names = {s.name for s in strata}
    anchor_items = [
        AnchorItem(
            id=f"q{r['question_id']}",
            text=r["question"],
            src=r["src"],
            stratum=_family(r["src"]) if _family(r["src"]) in names else strata[0].name,  # a family only anchors have
        )
        for r in anchor_rows.iter_rows(named=True)
    ]
    positives = pool[rng.permutation(pool.height)[:60]]
    negatives = other[rng.permutation(other.height)[:60]]
    labels = [
        LabelledItem(id=f"q{r['question_id']}", text=r["question"], src=r["src"], y_A=1)
        for r in positives.iter_rows(named=True)
    ]
    labels += [
        LabelledItem(id=f"q{r['question_id']}", text=r["question"], src=r["src"], y_A=0)
        for r in negatives.iter_rows(named=True)
    ]
    pairs = []
    pos = positives.to_dicts()
    by_src: dict[str, list[dict[str, Any]]] = {}
    for r in pos:
        by_src.setdefault(r["src"], []).append(r)
    for group in by_src.values():
        for a, b in zip(group[::2], group[1::2], strict=False):
            pairs.append(PairLabel(q=f"q{a['question_id']}", u=f"q{b['question_id']}", y_T=1, y_U=0))
    for a, b in zip(pos[:20], negatives.to_dicts()[:20], strict=False):  # a small bank has fewer of either
        pairs.append(PairLabel(q=f"q{a['question_id']}", u=f"q{b['question_id']}", y_T=0, y_U=0))
    start = min(20, len(pos) // 2)  # a small category: copies of its second half (y_U needs both labels)
    for r in pos[start : start + 20]:
        copy_id = f"q{r['question_id']}_copy"
        labels.append(LabelledItem(id=copy_id, text=_perturb(r["question"], rng), src=r["src"], y_A=1))
        pairs.append(PairLabel(q=f"q{r['question_id']}", u=copy_id, y_T=1, y_U=1))
    subjects = sorted({s.split("-", 1)[1].replace("_", " ") for s in own["src"] if "-" in s})
    payload = dict(
        discipline=category,
        is_example=True,
        note=note,
        k_total=k_total,
        prototype=Prototype(concepts=tuple(subjects) or (category,)),
        anchor_items=tuple(anchor_items),
        item_labels=tuple(labels),
        pair_labels=tuple(pairs),
        strata=tuple(strata),
        files=(),
    )
    version = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
    return AnchorSet(version=version, **payload), pool


def _csv(rows: list[dict[str, object]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def write_anchor_folder(anchors: AnchorSet, folder: Path, discipline: str) -> None:
    """anchors.yaml (header and prototype) and one CSV per table, as anchors/io.py reads them."""
    folder.mkdir(parents=True, exist_ok=True)
    header = {
        "discipline": discipline,
        "k_total": anchors.k_total,
        "is_example": True,
        "note": anchors.note,
        "prototype": {k: list(v) for k, v in anchors.prototype.components().items() if v},
    }
    (folder / "anchors.yaml").write_text(yaml.safe_dump(header, sort_keys=False, allow_unicode=True), "utf-8")
    tables = {
        "anchor_items": [a.model_dump() for a in anchors.anchor_items],
        "item_labels": [i.model_dump() for i in anchors.item_labels],
        "pair_labels": [p.model_dump() for p in anchors.pair_labels],
        "strata": [{**s.model_dump(), "keys": ";".join(s.keys)} for s in anchors.strata],
    }
    for name, rows in tables.items():
        (folder / f"{name}.csv").write_text(_csv(rows), "utf-8")


def leaf_items(taxonomy: list[TaxonomyNode]) -> dict[str, int]:
    """Each taxonomy leaf's stated item count (KINA Table 8); 1 where the spec states none."""
    out: dict[str, int] = {}
    for node in taxonomy:
        out |= leaf_items(node.children) if node.children else {node.leaf_key: node.items or 1}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmark_platform.itembank.derived_anchors",
        description=USAGE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("spec", help="a bundled spec name or the path of a spec .yaml with an item_bank")
    parser.add_argument("total", type=int, help="items to select over all categories (K, split into K_d)")
    parser.add_argument("--seed", type=int, default=None, help="default: the spec's seed")
    parser.add_argument(
        "--quotas",
        choices=["bank", "taxonomy"],
        default="bank",
        help="K_d in proportion to each discipline's bank items (default) or to its taxonomy leaf's `items` (KINA "
        "Table 8), over the disciplines the bank fills",
    )
    parser.add_argument(
        "--lower-share",
        type=float,
        default=0.8,
        help="a stratum's lower quota as a share of its expected count (0: none, when a screening such as KINA's K3 "
        "decides how many of a family survive)",
    )
    args = parser.parse_args()
    try:
        return _derive(args.spec, args.total, args.seed, args.quotas, args.lower_share)
    except ValueError as exc:  # SpecError, ItemBankError: one line naming the file
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


def _derive(spec_name: str, total: int, seed: int | None, quota_basis: str = "bank", lower_share: float = 0.8) -> int:
    from benchmark_platform.itembank.run import load_bank
    from benchmark_platform.spec import load_spec

    spec = load_spec(spec_name)
    if spec.item_bank is None:
        raise ValueError(f"{spec.directory}: spec {spec.name} has no item_bank")
    if total < 1:
        raise ValueError(f"TOTAL must be at least 1, got {total}")
    bank = load_bank(spec.item_bank, spec.directory)
    items = pl.DataFrame(
        [
            # src: the bank's source, else its stratum key (the category), so every derived stratum has a name
            {
                "question_id": b.upstream_id,
                "question": b.question,
                "category": b.discipline,
                "src": b.source or b.stratum_key,
            }
            for b in bank.items
        ]
    )
    sizes = dict(items.group_by("category").len().sort("category").iter_rows())
    weights = sizes if quota_basis == "bank" else {d: leaf_items(spec.taxonomy)[d] for d in sizes}
    quotas = {c: max(1, min(n, sizes[c])) for c, n in largest_remainder(weights, total).items()}
    note = DERIVED_NOTE + (
        ""
        if quota_basis == "bank"
        else f" K_d: the taxonomy's item count for the discipline (KINA Table 8) scaled to {total} over the "
        f"{len(sizes)} disciplines the bank fills."
    )
    rng = np.random.default_rng(spec.seed if seed is None else seed)
    for discipline in spec.discipline_keys:
        if discipline not in sizes:
            continue
        anchors, _ = derive_anchor_set(discipline, items, quotas[discipline], rng, note, lower_share)
        write_anchor_folder(anchors, spec.anchors_dir / discipline, discipline)
        print(
            f"{discipline}: K_d {quotas[discipline]}, {len(anchors.strata)} strata -> {spec.anchors_dir / discipline}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The bundled `kina_mmlu_pro` spec: MMLU-Pro items in KINA's taxonomy through a reviewed subject table, the K3
flagships by their stated rule, KINA Table 8 quotas scaled to the filled subfields, and item ids of its own."""

from __future__ import annotations

import csv
from collections import Counter

import polars as pl

from benchmark_platform.anchors import load_anchor_set
from benchmark_platform.itembank.derived_anchors import largest_remainder, leaf_items
from benchmark_platform.itembank.run import load_bank
from benchmark_platform.spec import load_spec

SPEC = load_spec("kina_mmlu_pro")
TABLE = SPEC.directory / "subject_map.csv"


def test_every_subject_is_mapped_or_left_out_with_a_reason() -> None:
    rows = list(csv.DictReader(TABLE.open(encoding="utf-8")))
    bank = load_bank(SPEC.item_bank, SPEC.directory)  # type: ignore[arg-type]
    subjects = Counter(pl.read_parquet(bank.path)["src"].to_list())
    assert {r["category"] for r in rows} == set(subjects)  # the 57 MMLU subjects and the STEM sources, no other
    assert all(r["rationale"].strip() for r in rows)
    assert len(rows) == 91
    mapped = {r["category"] for r in rows if r["discipline"]}
    assert len(bank.items) == sum(subjects[s] for s in mapped) == 8560
    assert len(bank.excluded) == sum(n for s, n in subjects.items() if s not in mapped) == 3472
    assert len({item.discipline for item in bank.items}) == 48
    # the kina spec's own taxonomy, so the subfields are KINA's 261 leaves, most of them left empty
    assert SPEC.discipline_keys == load_spec("kina").discipline_keys and len(SPEC.discipline_keys) == 261


def test_item_ids_do_not_collide_with_the_mmlu_pro_spec() -> None:
    mmlu_pro = load_spec("mmlu_pro")
    assert SPEC.item_bank is not None and mmlu_pro.item_bank is not None
    ours = {i.item_id for i in load_bank(SPEC.item_bank, SPEC.directory).items}
    theirs = {i.item_id for i in load_bank(mmlu_pro.item_bank, mmlu_pro.directory).items}
    assert ours and not ours & theirs
    assert SPEC.evaluation.imports[0].item_bank == SPEC.item_bank.id


def test_flagships_are_the_five_best_models_by_bank_accuracy() -> None:
    answers = pl.read_parquet(SPEC.directory / SPEC.evaluation.imports[0].path)
    total = pl.read_parquet(SPEC.directory / SPEC.item_bank.path).height  # type: ignore[union-attr]
    by_answered = answers.group_by("model").agg(acc=pl.col("correct").mean()).sort(["acc", "model"], descending=True)
    # the same five when a missing answer counts as wrong (DeepSeek-Coder-V2 answered 10,351 of 12,032)
    by_all = answers.group_by("model").agg(acc=pl.col("correct").sum() / total).sort(["acc", "model"], descending=True)
    kina = SPEC.audit.kina
    assert kina is not None and kina.unanswered_counts_wrong
    assert kina.flagships == by_answered["model"].head(5).to_list()
    assert set(kina.flagships) == set(by_all["model"].head(5).to_list())
    assert "five" in kina.flagship_rule


def test_anchors_are_derived_with_table_8_quotas_scaled_to_the_filled_subfields() -> None:
    bank = load_bank(SPEC.item_bank, SPEC.directory)  # type: ignore[arg-type]
    filled = sorted({item.discipline for item in bank.items})
    folders = sorted(p.name for p in SPEC.anchors_dir.iterdir() if p.is_dir())
    assert folders == filled
    table_8 = leaf_items(SPEC.taxonomy)
    expected = largest_remainder({d: table_8[d] for d in filled}, 899)
    anchors = {d: load_anchor_set(SPEC.anchors_dir / d) for d in filled}
    assert {d: a.k_total for d, a in anchors.items()} == expected
    assert sum(a.k_total for a in anchors.values()) == 899
    for a in anchors.values():
        assert a.note.startswith("DERIVED") and "Table 8" in a.note
        assert all(s.lower == 0 for s in a.strata)  # K3 decides how many of a source family survive

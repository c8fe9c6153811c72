"""The `kina` location end to end from an item bank, in-process on the real PostgreSQL: a small example bank (real
MMLU-Pro items mapped to three KINA subfields, built here in the test; not shipped, not KINA's items) goes through
anchors (derived), centrality, selection, audit, evaluation imports (the 29 models' recorded answers), analysis and
the release gate to a release that holds exactly the selected items."""

from __future__ import annotations

import dagster as dg
import numpy as np
import polars as pl
import pytest

from benchmark_platform.defs.common import DatabaseResource
from benchmark_platform.defs.llm.resources import LLMGatewayResource
from benchmark_platform.defs.pipeline import materialize_all
from benchmark_platform.defs.release.assets import ReleaseDirectory
from benchmark_platform.evaluation.importers import read_mmlu_pro_items, read_mmlu_pro_matrices
from benchmark_platform.itembank.derived_anchors import derive_anchor_set, write_anchor_folder
from benchmark_platform.release.bundle import verify_release
from benchmark_platform.spec import BenchmarkSpec, load_spec
from benchmark_platform.store import Database

# MMLU subject (MMLU-Pro's src 'ori_mmlu-<subject>') -> KINA subfield (partition key)
pytestmark = pytest.mark.slow  # builds the KINA graph from its example bank

SUBFIELDS = {
    "high_school_world_history": "world_history",
    "econometrics": "quantitative_economics",
    "high_school_psychology": "psychology",
}
PER_SUBFIELD = 84  # every world-history and econometrics item MMLU-Pro has
K_PER_SUBFIELD = 6


@pytest.fixture(scope="module")
def kina_with_bank(shared_data, tmp_path_factory) -> BenchmarkSpec:
    folder = tmp_path_factory.mktemp("kina_example")
    items = read_mmlu_pro_items(shared_data / "mmlu_pro_outputs").with_columns(
        subject=pl.col("src").str.strip_prefix("ori_mmlu-")
    )
    bank = pl.concat([items.filter(pl.col("subject") == subject).head(PER_SUBFIELD) for subject in SUBFIELDS]).select(
        id="item_id", question="question", options="options", answer="answer", category="subject", source="src"
    )
    (folder / "data").mkdir()
    bank.write_parquet(folder / "data" / "bank.parquet")
    answers = read_mmlu_pro_matrices(shared_data / "mmlu_pro_outputs").filter(
        pl.col("item_id").is_in(bank["id"].to_list())
    )
    answers.write_parquet(folder / "data" / "answers.parquet")
    frame = bank.select(
        question_id="id", question="question", category=pl.col("category").replace_strict(SUBFIELDS), src="source"
    )
    rng = np.random.default_rng(899)
    for subfield in SUBFIELDS.values():
        anchors, _ = derive_anchor_set(subfield, frame, K_PER_SUBFIELD, rng)
        write_anchor_folder(anchors, folder / "anchors" / subfield, subfield)
    kina = load_spec("kina")
    return BenchmarkSpec.model_validate(
        {
            **kina.model_dump(exclude={"directory"}),
            "item_bank": {
                "id": "kina_example",
                "path": "data/bank.parquet",
                "licence": "MIT",
                "attribution": "MMLU-Pro items (TIGER-AI-Lab), a test fixture; not KINA's items",
                "categories": SUBFIELDS,
            },
            # a small pool: a looser alignment bar keeps enough items on the shortlist for the quotas
            "selection": {**kina.selection.model_dump(), "centrality": {"alpha_A": 0.3, "alpha_C": 0.0}},
            "evaluation": {
                "imports": [{"format": "results_parquet", "path": "data/answers.parquet", "item_bank": "kina_example"}]
            },
            "directory": folder,
        }
    )


@pytest.fixture(scope="module")
def built(kina_with_bank, migrated_database, tmp_path_factory):
    db = Database(migrated_database())
    root = tmp_path_factory.mktemp("kina_releases")
    lines: list[str] = []
    with dg.instance_for_test() as instance:
        database = DatabaseResource(url=db.url)
        gate = materialize_all(
            kina_with_bank,
            instance=instance,
            log=lines.append,
            resources={
                "database": database,
                "llm": LLMGatewayResource(database=database),
                "release_directory": ReleaseDirectory(root=str(root)),
            },
            disciplines=list(SUBFIELDS.values()),
        )
        records = instance.fetch_materializations(dg.AssetKey(["kina", "selected_items"]), limit=100).records
        selection_metadata = {
            r.partition_key: r.asset_materialization.metadata for r in records if r.asset_materialization is not None
        }
    return db, kina_with_bank, gate, lines, root / "kina" / kina_with_bank.release.version, selection_metadata


def test_kina_materialises_from_the_example_bank(built):
    db, spec, gate, lines, release_dir, _ = built
    assert gate.passed, gate.describe()
    # the audit calibration (read by every discipline) first, one line per partition, unpartitioned, gate, release
    assert len(lines) == 1 + len(SUBFIELDS) + 3 and "setup" in lines[0]
    assert all(f"bank_items {PER_SUBFIELD} " in line for line in lines[1 : 1 + len(SUBFIELDS)])
    assert verify_release(release_dir) == []
    selections = db.query(
        "SELECT discipline, k_total, manual_review FROM selections WHERE spec = 'kina' AND target = 'items'"
    )
    assert sorted(r["discipline"] for r in selections) == sorted(SUBFIELDS.values())
    # K is the anchors' K_d, capped by what the audited shortlist allows (selected_items); never a manual review here
    assert all(r["manual_review"] is None and 0 < r["k_total"] <= K_PER_SUBFIELD for r in selections), selections


def test_release_is_exactly_the_selection_and_the_leaderboard_counts_it(built):
    db, spec, _, _, release_dir, _ = built
    selected = {r["item_id"] for r in db.query("SELECT item_id FROM selected_items WHERE spec = 'kina'")}
    released = pl.read_parquet(release_dir / "data" / "items.parquet")
    k_total = db.scalar("SELECT sum(k_total) FROM selections WHERE spec = 'kina' AND target = 'items'")
    assert set(released["item_id"]) == selected and released.height == len(selected) == k_total
    dropped = {
        r["item_id"]
        for r in db.query(
            "SELECT p.item_id FROM audit_policy p JOIN audit_runs r USING (audit_run_id) "
            "WHERE r.spec = 'kina' AND p.action = 'drop'"
        )
    }
    assert not selected & dropped
    board = pl.read_parquet(release_dir / "data" / "leaderboard.parquet")
    assert board.height == 29 + 1  # the 29 models' imported answers and the random baseline
    assert set(board["n_items"]) == {released.height}
    provenance = pl.read_parquet(release_dir / "data" / "item_provenance.parquet")
    assert set(provenance["item_id"]) == selected and set(provenance["bank_id"]) == {"kina_example"}
    answers = pl.read_parquet(release_dir / "data" / "evaluation_answers.parquet")
    assert set(answers["item_id"]) == selected


def test_the_selection_uses_the_imported_answers_and_records_the_held_out_estimate(built):
    """Issue 19: the 29 models' answers enter the item selection, and its held-out validation over model splits is in
    the selection's row, the asset's Dagster metadata, the released selections table and the datasheet."""
    db, spec, _, _, release_dir, metadata = built
    rows = db.query("SELECT discipline, response FROM selections WHERE spec = 'kina' AND target = 'items'")
    assert len(rows) == len(SUBFIELDS)
    for row in rows:
        response = row["response"]
        assert response["response_term"] == "applied" and response["response_models"] == 29
        assert response["holdout_splits"] == spec.selection.response.validation_splits
        assert response["holdout_models"] == 29 and response["holdout_visible_models"] == 14  # half of 29, rounded
        for figure in ("holdout_tau", "random_tau", "holdout_acc_mae_points", "random_acc_mae_points"):
            assert isinstance(response[figure], float), (figure, response)
        assert -1 <= response["holdout_tau"] <= 1 and response["holdout_acc_mae_points"] >= 0
        shown = metadata[row["discipline"]]
        assert shown["response_term"].value == "applied"
        assert shown["holdout_tau"].value == response["holdout_tau"]
        assert shown["random_tau"].value == response["random_tau"]
        assert "model splits" in shown["holdout_validation"].value
    released = pl.read_parquet(release_dir / "data" / "selections.parquet").filter(pl.col("target") == "items")
    assert released["response"].null_count() == 0
    datasheet = (release_dir / "datasheet.md").read_text(encoding="utf-8")
    assert "Models' imported answers entered the item selection in 3 of 3 disciplines" in datasheet
    assert "Held-out validation per discipline" in datasheet
    # the analysis estimates each configuration's accuracy on the whole pool (252 bank items) from the release
    pool = pl.read_parquet(release_dir / "data" / "analyses" / "pool_accuracy.parquet")
    assert pool.height == 29 + 1 and set(pool["pool_items"]) == {PER_SUBFIELD * len(SUBFIELDS)}
    assert pool.filter(pl.col("observed_pool_accuracy").is_null())["model"].to_list() == ["random-baseline"]


def test_with_review_required_only_tournament_approved_items_ship(built):
    db, *_ = built
    selected = sorted(r["item_id"] for r in db.query("SELECT item_id FROM selected_items WHERE spec = 'kina'"))
    decisions = [(selected[0], 1, "approved"), (selected[1], 1, "approved"), (selected[1], 2, "rejected")]
    with db.transaction() as conn, conn.cursor() as cur:
        for item_id, round_, decision in decisions:
            cur.execute(
                "INSERT INTO review_committee_decisions (item_id, round, decision, decided_by) VALUES (%s, %s, %s, 'x')",
                (item_id, round_, decision),
            )
    try:
        approved = {r["item_id"] for r in db.query("SELECT item_id FROM released_items('kina', false, true)")}
        assert approved == {selected[0]}  # the latest decision counts: selected[1] was rejected in round 2
        everything = {r["item_id"] for r in db.query("SELECT item_id FROM released_items('kina', false, false)")}
        assert everything == set(selected)
    finally:
        with db.transaction() as conn, conn.cursor() as cur:
            cur.execute("DELETE FROM review_committee_decisions WHERE decided_by = 'x'")

"""Releases of a trimmed wine graph (two sources, two disciplines, a sealed test split) on the real PostgreSQL:
verify, rebuild byte-identical, Croissant validated by mlcroissant, exports loaded by lm-eval, Inspect and datasets.

The graph is materialised once per module (and once more by the rebuild test, which is the point of that test).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from benchmark_platform.cli.main import main as cli
from benchmark_platform.cli.run import materialize_all
from benchmark_platform.defs import build_definitions
from benchmark_platform.defs.common import DatabaseResource
from benchmark_platform.defs.release.assets import ReleaseDirectory, ReleaseKey
from benchmark_platform.defs.release.rebuild import rebuild_release
from benchmark_platform.release.bundle import (
    MANIFEST,
    assemble,
    diff_releases,
    list_releases,
    read_manifest,
    verify_release,
)
from benchmark_platform.release.exports import task_name
from benchmark_platform.release.seal import new_key, unseal
from benchmark_platform.release.tables import read_plots, read_release_tables
from benchmark_platform.spec import BenchmarkSpec, load_spec
from benchmark_platform.store import Database, migrate

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")  # the exports load from local files only
os.environ.setdefault("HF_HUB_OFFLINE", "1")

DISCIPLINES = {"regions", "grape_varieties"}
SOURCES = {"ttb_ava_geojson", "wikipedia_grape_list"}


def trimmed_wine(**release: object) -> BenchmarkSpec:
    """The bundled wine spec cut down to two sources and two disciplines (same code path, a fraction of the time)."""
    spec = load_spec("wine")
    data = json.loads(spec.model_dump_json())
    data["taxonomy"][0]["children"] = [c for c in data["taxonomy"][0]["children"] if c["key"] in DISCIPLINES]
    data["sources"] = [s for s in data["sources"] if s["id"] in SOURCES]
    facts = data["facts"]
    facts["lexicons"] = {k: v for k, v in facts["lexicons"].items() if k in DISCIPLINES}
    facts["templates"] = [t for t in facts["templates"] if t["source"] in SOURCES]
    facts["entity_disciplines"] = {k: v for k, v in facts["entity_disciplines"].items() if v in DISCIPLINES}
    facts["tie_order"] = [d for d in facts["tie_order"] if d in DISCIPLINES]
    facts["prose_sources"] = [s for s in facts["prose_sources"] if s in SOURCES]
    data["generation"]["templates"] = [t for t in data["generation"]["templates"] if t["discipline"] in DISCIPLINES]
    data["release"].update(release)
    return BenchmarkSpec.model_validate({**data, "directory": spec.directory})


@pytest.fixture(scope="module")
def built(fresh_database, tmp_path_factory):
    db = Database(fresh_database())
    migrate(db)
    spec = trimmed_wine(test_share=0.25)
    key = new_key()
    root = tmp_path_factory.mktemp("releases")
    resources = {"database": DatabaseResource(url=db.url), "release_directory": ReleaseDirectory(root=str(root)),
                 "release_key": ReleaseKey(key=key)}
    with dg.instance_for_test() as instance:
        materialize_all(spec, instance=instance, resources=resources, log=lambda _: None)
        yield {"db": db, "spec": spec, "key": key, "root": root, "instance": instance, "resources": resources,
               "dir": root / spec.name / spec.release.version}


def _open(directory: Path, name: str) -> pl.DataFrame:
    return pl.read_parquet(directory / "data" / f"{name}.parquet")


def test_release_verifies_and_names_every_tampered_file(built, tmp_path):
    directory = built["dir"]
    assert verify_release(directory) == []
    assert cli(["release", "verify", str(directory)]) == 0
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    items = copy / "data" / "items.parquet"
    items.write_bytes(items.read_bytes()[:-1] + b"\x00")
    (copy / "exports" / "extra.txt").write_text("x")
    (copy / "datasheet.md").unlink()
    assert sorted(verify_release(copy)) == ["data/items.parquet: content hash differs from the manifest",
                                            "datasheet.md: missing", "exports/extra.txt: not listed in the manifest"]
    assert cli(["release", "verify", str(copy)]) == 1


def test_manifest_records_every_upstream_partition_with_versions_and_run(built):
    spec, manifest = built["spec"], read_manifest(built["dir"])
    assets = manifest["provenance"]["assets"]
    assert set(assets[f"{spec.name}/audit_findings"]) == DISCIPLINES
    assert set(assets[f"{spec.name}/source_documents"]) == SOURCES
    assert set(assets[f"{spec.name}/analysis"]) == {""}
    for asset, partitions in assets.items():
        for partition, entry in partitions.items():
            assert entry is not None, f"{asset}[{partition}] never materialised"
            assert entry["data_version"] and entry["run_id"]
    findings = assets[f"{spec.name}/audit_findings"]["regions"]
    assert findings["code_version"] == build_definitions(spec).resolve_assets_def(
        dg.AssetKey([spec.name, "audit_findings"])).code_versions_by_key[dg.AssetKey([spec.name, "audit_findings"])]
    event = built["instance"].get_latest_materialization_event(dg.AssetKey([spec.name, "release"]))
    assert event.asset_materialization.tags["dagster/data_version"]


def test_rebuild_reproduces_identical_files_and_keeps_the_release(built):
    directory = built["dir"]
    before = read_manifest(directory)
    report = rebuild_release(directory, built["instance"], built["resources"], log=lambda _: None)
    assert report.identical, report.differences
    assert report.files == len(before["files"]) and not report.code_changes and report.new_llm_calls == 0
    assert read_manifest(directory) == before and verify_release(directory) == []
    row = built["db"].query("SELECT path FROM releases WHERE spec = %s AND version = %s",
                            (built["spec"].name, built["spec"].release.version))
    assert row == [{"path": str(directory)}]


def test_every_file_carries_the_canary(built):
    directory, canary = built["dir"], built["spec"].release.canary
    files = read_manifest(directory)["files"]
    assert {"croissant.json", "datasheet.md", "spec.json", "data/items.parquet"} <= set(files)
    assert any(p.startswith("plots/") for p in files) and any(p.startswith("sealed/") for p in files)
    for path in [*files, MANIFEST]:
        if path.endswith(".parquet"):
            assert pl.read_parquet_metadata(directory / path)["canary"] == canary, path
        else:
            assert canary.encode() in (directory / path).read_bytes(), path


def test_test_split_is_sealed_and_the_key_is_never_written(built):
    directory, key = built["dir"], built["key"]
    manifest = read_manifest(directory)
    dev = set(_open(directory, "items")["item_id"])
    sealed = pl.read_parquet(unseal((directory / "sealed" / "items.parquet.fernet.json").read_bytes(), key))
    test = set(sealed["item_id"])
    assert dev and test and not dev & test
    assert manifest["split"] == {"test_share": 0.25, "dev_items": len(dev), "test_items": len(test)}
    for table in ("options", "item_facts", "audit_findings", "evaluation_answers"):
        assert not set(_open(directory, table)["item_id"]) & test, table
    hf = pl.read_parquet(directory / "exports" / "hf" / "data" / "dev-00000-of-00001.parquet")
    assert set(hf["id"]) == dev
    for path in directory.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path
    # without the key the release cannot be built at all, and nothing is written
    db, spec = built["db"], built["spec"]
    with pytest.raises(ValueError, match="BENCHMARK_PLATFORM_RELEASE_KEY"):
        assemble(spec, read_release_tables(db, spec), read_plots(db, spec), None)


def test_tables_cover_audit_evaluation_analysis_and_licences(built):
    directory, db, spec = built["dir"], built["db"], built["spec"]
    items = _open(directory, "items")
    assert set(items["discipline"]) == DISCIPLINES
    options = _open(directory, "options")
    assert options.group_by("item_id").agg(pl.col("is_correct").sum())["is_correct"].to_list() == [1] * items.height
    assert set(_open(directory, "audit_findings")["agent"]) >= {"structure", "A1_lexical_hygiene", "A3_fact_echo"}
    assert set(_open(directory, "audit_actions").columns) == {"item_id", "discipline", "action", "reason"}
    answers = _open(directory, "evaluation_answers")
    assert set(answers["item_id"]) == set(items["item_id"]) and "random-baseline" in set(answers["model"])
    assert _open(directory, "leaderboard").height >= 1
    assert list((directory / "plots").glob("*.png")) and list((directory / "data" / "analyses").glob("*.parquet"))
    # the licence table is the released facts joined to their sources
    facts = _open(directory, "facts").join(_open(directory, "sources").select("source_id", "licence"), on="source_id",
                                           suffix="_source")
    assert (facts["licence"] == facts["licence_source"]).all()
    licences = _open(directory, "licences")
    expected = db.query("""SELECT s.licence, count(DISTINCT f.fact_id)::int AS facts FROM facts f
                           JOIN documents d USING (document_id) JOIN sources s USING (source_id)
                           WHERE f.fact_id = ANY(%s) GROUP BY s.licence ORDER BY s.licence""",
                        (list(_open(directory, "item_facts")["fact_id"].unique()),))
    got = licences.group_by("licence").agg(pl.col("facts").sum()).sort("licence").to_dicts()
    assert got == expected
    datasheet = (directory / "datasheet.md").read_text()
    for heading in ("## Motivation", "## Composition", "## Collection process", "## Preprocessing", "## Uses",
                    "## Distribution", "## Maintenance", "Known limitations", "deterministic template"):
        assert heading in datasheet
    assert f"{items.height} items are open" in datasheet and "CC0-1.0" in datasheet


def test_croissant_manifest_validates_with_mlcroissant(built):
    mlc = pytest.importorskip("mlcroissant", reason="install the release-exports extra")

    directory = built["dir"]
    document = json.loads((directory / "croissant.json").read_text())
    assert "http://mlcommons.org/croissant/RAI/1.0" in document["conformsTo"]
    for field in ("rai:dataCollection", "rai:dataLimitations", "rai:dataBiases", "rai:personalSensitiveInformation",
                  "rai:dataUseCases", "rai:dataReleaseMaintenancePlan"):
        assert document[field], field
    dataset = mlc.Dataset(jsonld=str(directory / "croissant.json"))  # raises on any validation error
    assert not dataset.metadata.ctx.issues.errors
    records = list(dataset.records("items"))
    assert {r["items/item_id"].decode() for r in records} == set(_open(directory, "items")["item_id"])


def test_exports_load_in_lm_eval_inspect_and_datasets(built):
    directory, spec = built["dir"], built["spec"]
    name = task_name(spec.name, spec.release.version)
    dev = _open(directory, "items")

    TaskManager = pytest.importorskip("lm_eval.tasks", reason="install the release-exports extra").TaskManager
    task = TaskManager(include_path=str(directory / "exports" / "lm_eval"), include_defaults=False).load([name])[
        "tasks"][name]
    docs = list(task.test_docs())
    assert len(docs) == dev.height
    doc = docs[0]
    assert task.doc_to_text(doc).endswith("Answer:") and task.doc_to_choice(doc)[task.doc_to_target(doc)] == \
        doc["answer_letter"]
    task.build_all_requests(limit=2, rank=0, world_size=1)
    assert len(task.instances) == sum(len(d["choices"]) for d in docs[:2])  # one loglikelihood request per option

    inspect_ai = pytest.importorskip("inspect_ai", reason="install the release-exports extra")
    inspect_dir = directory / "exports" / "inspect"
    assert [t.name for t in inspect_ai.list_tasks("*.py", root_dir=inspect_dir)] == [name]
    module_spec = importlib.util.spec_from_file_location(f"release_{name}", inspect_dir / f"{name}.py")
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    inspect_task = getattr(module, name)()
    assert len(inspect_task.dataset) == dev.height
    sample = inspect_task.dataset[0]
    assert sample.target in "ABCDEFGHIJ" and len(sample.choices) == spec.generation.options_per_item

    datasets = pytest.importorskip("datasets", reason="install the release-exports extra")
    loaded = datasets.load_dataset(str(directory / "exports" / "hf"))
    assert list(loaded) == ["dev"] and loaded["dev"].num_rows == dev.height
    assert set(loaded["dev"]["id"]) == set(dev["item_id"])


def test_new_versions_keep_old_ones_and_diff_lists_item_changes(built, tmp_path, capsys):
    root, db, spec = built["root"], built["db"], built["spec"]
    newer = trimmed_wine(test_share=0.25, version="v0.2")
    defs = build_definitions(newer)
    dg.materialize([a for a in defs.assets if isinstance(a, dg.AssetsDefinition)],
                   selection=dg.AssetSelection.assets(dg.AssetKey([spec.name, "release"])), instance=built["instance"],
                   resources={**defs.resources, **built["resources"]})
    assert [(r["version"], r["items"]) for r in list_releases(root)] == [
        ("v0.1", _open(built["dir"], "items").height), ("v0.2", _open(built["dir"], "items").height)]
    assert verify_release(built["dir"]) == [] and verify_release(root / spec.name / "v0.2") == []
    assert cli(["release", "list", "--root", str(root)]) == 0
    assert "v0.1" in capsys.readouterr().out
    assert diff_releases(built["dir"], root / spec.name / "v0.2") == {"added": [], "removed": [], "changed": []}

    # an edited copy: one item removed, one reworded, one new
    edited = tmp_path / spec.name / "v0.3"
    shutil.copytree(built["dir"], edited)
    items = _open(edited, "items").sort("item_id")
    gone, reworded = items["item_id"][0], items["item_id"][1]
    items = items.filter(pl.col("item_id") != gone).with_columns(
        question=pl.when(pl.col("item_id") == reworded).then(pl.lit("Reworded?")).otherwise("question"))
    items = pl.concat([items, items.tail(1).with_columns(item_id=pl.lit("zz_new_item"))])
    items.write_parquet(edited / "data" / "items.parquet")
    assert diff_releases(built["dir"], edited) == {"added": ["zz_new_item"], "removed": [gone],
                                                   "changed": [reworded]}
    assert cli(["release", "diff", str(built["dir"]), str(edited)]) == 0
    assert "1 added, 1 removed, 1 changed" in capsys.readouterr().out
    assert db.scalar("SELECT count(*) FROM releases WHERE spec = %s", (spec.name,)) == 2

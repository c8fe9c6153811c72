"""Releases of a trimmed wine graph (one source, one discipline, a sealed test split) on the real PostgreSQL:
verify, rebuild byte-identical, Croissant validated by mlcroissant, exports loaded by lm-eval, Inspect and datasets.

The graph is materialised once per module (and once more by the rebuild test, which is the point of that test).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from benchmark_platform.bench._faultkit import trimmed_spec
from benchmark_platform.cli.main import main as cli
from benchmark_platform.defs import build_definitions
from benchmark_platform.defs.common import DatabaseResource
from benchmark_platform.defs.pipeline import materialize_all
from benchmark_platform.defs.release.assets import ReleaseDirectory, ReleaseKey
from benchmark_platform.defs.release.rebuild import rebuild_release
from benchmark_platform.release.bundle import (
    LINEAGE,
    MANIFEST,
    assemble,
    diff_releases,
    list_releases,
    read_lineage,
    read_manifest,
    sha256_file,
    verify_release,
)
from benchmark_platform.release.exports import task_name
from benchmark_platform.release.persist import read_plots, read_release_tables
from benchmark_platform.release.report import REPORT_FILES
from benchmark_platform.release.seal import new_key, unseal
from benchmark_platform.spec import BenchmarkSpec, SpecError
from benchmark_platform.store import Database
from benchmark_platform.store.settings import DATABASE_URL_ENV

pytestmark = pytest.mark.slow  # builds a release through the whole graph

DISCIPLINES = {"regions"}
SOURCES = {"ttb_ava_geojson"}


def trimmed_wine(**release: object) -> BenchmarkSpec:
    """The bundled wine spec cut down to one source and one discipline (same code path, a fraction of the time)."""
    return trimmed_spec(DISCIPLINES, SOURCES, **release)


@pytest.fixture(scope="module")
def built(migrated_database, tmp_path_factory):
    db = Database(migrated_database())
    spec = trimmed_wine(test_share=0.25)
    key = new_key()
    root = tmp_path_factory.mktemp("releases")
    resources = {
        "database": DatabaseResource(url=db.url),
        "release_directory": ReleaseDirectory(root=str(root)),
        "release_key": ReleaseKey(key=key),
    }
    # resources that read the URL from the environment themselves (e.g. the LLM gateway's cache) use this database too
    with pytest.MonkeyPatch.context() as env, dg.instance_for_test() as instance:
        env.setenv(DATABASE_URL_ENV, db.url)
        materialize_all(spec, instance=instance, resources=resources, log=lambda _: None)
        yield {
            "db": db,
            "spec": spec,
            "key": key,
            "root": root,
            "instance": instance,
            "resources": resources,
            "dir": root / spec.name / spec.release.version,
        }


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
    assert sorted(verify_release(copy)) == [
        "data/items.parquet: content hash differs from the manifest",
        "datasheet.md: missing",
        "exports/extra.txt: not listed in the manifest",
    ]
    assert cli(["release", "verify", str(copy)]) == 2  # a damaged bundle is an expected failure: one error line, exit 2


def test_lineage_records_every_upstream_partition_with_versions_and_run(built):
    spec, lineage = built["spec"], read_lineage(built["dir"])
    assert lineage["dagster_run_id"] and lineage["built_at"]
    assets = lineage["assets"]
    assert set(assets[f"{spec.name}/audit_findings"]) == DISCIPLINES
    assert set(assets[f"{spec.name}/source_documents"]) == SOURCES
    assert set(assets[f"{spec.name}/analysis"]) == {""}
    for asset, partitions in assets.items():
        for partition, entry in partitions.items():
            assert entry is not None, f"{asset}[{partition}] never materialised"
            assert entry["data_version"] and entry["run_id"]
    findings = assets[f"{spec.name}/audit_findings"]["regions"]
    assert (
        findings["code_version"]
        == build_definitions(spec)
        .resolve_assets_def(dg.AssetKey([spec.name, "audit_findings"]))
        .code_versions_by_key[dg.AssetKey([spec.name, "audit_findings"])]
    )
    event = built["instance"].get_latest_materialization_event(dg.AssetKey([spec.name, "release"]))
    assert event.asset_materialization.tags["dagster/data_version"]


def test_rebuild_reproduces_identical_files_and_keeps_the_release(built):
    directory = built["dir"]
    before = read_manifest(directory)
    report = rebuild_release(directory, built["instance"], built["resources"], log=lambda _: None)
    assert report.identical, report.differences
    assert report.files == len(before["files"]) and not report.code_changes and report.new_llm_calls == 0
    assert read_manifest(directory) == before and verify_release(directory) == []
    row = built["db"].query(
        "SELECT path FROM releases WHERE spec = %s AND version = %s",
        (built["spec"].name, built["spec"].release.version),
    )
    assert row == [{"path": str(directory)}]


def test_rebuild_refuses_a_spec_the_code_no_longer_accepts(built, tmp_path):
    """After the spec models moved on, rebuild names the problem and the code revision to rebuild from."""
    copy = tmp_path / "wine" / "v0.1"
    shutil.copytree(built["dir"], copy)
    spec_json = json.loads((copy / "spec.json").read_text())
    spec_json["selection"]["retired_setting"] = 40
    (copy / "spec.json").write_text(json.dumps(spec_json))
    manifest = read_manifest(copy)
    manifest["files"]["spec.json"]["sha256"] = sha256_file(copy / "spec.json")
    (copy / MANIFEST).write_text(json.dumps(manifest))
    assert verify_release(copy) == []
    revision = re.escape(read_lineage(copy)["code_revision"] or "not recorded")
    with pytest.raises(SpecError, match=f"selection.retired_setting.*{revision}"):
        rebuild_release(copy, built["instance"], built["resources"], log=lambda _: None)


def test_every_file_carries_the_canary(built):
    directory, canary = built["dir"], built["spec"].release.canary
    files = read_manifest(directory)["files"]
    assert {"croissant.json", "datasheet.md", "spec.json", "data/items.parquet"} <= set(files)
    assert any(p.startswith("plots/") for p in files) and any(p.startswith("sealed/") for p in files)
    for path in [*files, MANIFEST, LINEAGE]:
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
    test_only_facts = set(
        pl.read_parquet(unseal((directory / "sealed" / "item_facts.parquet.fernet.json").read_bytes(), key))["fact_id"]
    ) - set(_open(directory, "item_facts")["fact_id"])
    assert test_only_facts and not test_only_facts & set(_open(directory, "facts")["fact_id"])
    hf = pl.read_parquet(directory / "exports" / "hf" / "data" / "dev-00000-of-00001.parquet")
    assert set(hf["id"]) == dev
    for path in directory.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path
    # without the key the release cannot be built at all, and nothing is written
    db, spec = built["db"], built["spec"]
    with pytest.raises(ValueError, match="BENCHMARK_PLATFORM_RELEASE_KEY"):
        assemble(spec, read_release_tables(db, spec), read_plots(db, spec), None)


def test_the_report_is_listed_counted_and_shows_no_sealed_item(built):
    """report/ is in the manifest (so verify and rebuild cover it), the datasheet's file count includes it, and no
    sealed item's id reaches the report's data."""
    directory = built["dir"]
    files = read_manifest(directory)["files"]
    assert set(REPORT_FILES) <= set(files)
    assert f"{len(files)} files, each hashed" in (directory / "datasheet.md").read_text().replace("\n  ", " ")
    sealed = pl.read_parquet(unseal((directory / "sealed" / "items.parquet.fernet.json").read_bytes(), built["key"]))
    data_js = (directory / "report" / "data.js").read_bytes()
    assert sealed.height and not [i for i in sealed["item_id"] if i.encode() in data_js]
    assert all(i.encode() in data_js for i in _open(directory, "items")["item_id"])


def test_tables_cover_audit_evaluation_analysis_and_licences(built):
    directory, db, spec = built["dir"], built["db"], built["spec"]
    items = _open(directory, "items")
    assert set(items["discipline"]) == DISCIPLINES
    sealed = {
        name: pl.read_parquet(unseal((directory / "sealed" / f"{name}.parquet.fernet.json").read_bytes(), built["key"]))
        for name in ("items", "audit_actions")
    }
    released = set(items["item_id"]) | set(sealed["items"]["item_id"])
    actions = pl.concat([_open(directory, "audit_actions"), sealed["audit_actions"]], how="vertical_relaxed")
    dropped = set(actions.filter(pl.col("action") == "drop")["item_id"])
    # the release is the after-audit selection: exactly the selected items, none the audit dropped
    selected = {r["item_id"] for r in db.query("SELECT item_id FROM selected_items WHERE spec = %s", (spec.name,))}
    assert released == selected and not released & dropped
    options = _open(directory, "options")
    assert options.group_by("item_id").agg(pl.col("is_correct").sum())["is_correct"].to_list() == [1] * items.height
    assert set(_open(directory, "audit_findings")["agent"]) >= {"structure", "A1_lexical_hygiene", "A3_fact_echo"}
    assert {"item_id", "discipline", "action", "reason"} <= set(_open(directory, "audit_actions").columns)
    answers = _open(directory, "evaluation_answers")
    assert set(answers["item_id"]) == set(items["item_id"]) and "random-baseline" in set(answers["model"])
    assert _open(directory, "leaderboard").height >= 1
    assert list((directory / "plots").glob("*.png")) and list((directory / "data" / "analyses").glob("*.parquet"))
    # the licence table is the released facts (open and sealed) joined to their sources
    sealed_facts = pl.read_parquet(
        unseal((directory / "sealed" / "facts.parquet.fernet.json").read_bytes(), built["key"])
    )
    facts = pl.concat([_open(directory, "facts"), sealed_facts]).unique("fact_id")
    used = {*_open(directory, "item_facts")["fact_id"], *_open(directory, "options")["proving_fact_ids"].explode()}
    assert not set(_open(directory, "facts")["fact_id"]) - used  # facts items came from, or that prove an option
    by_source = facts.join(_open(directory, "sources").select("source_id", licence_of_source="licence"), on="source_id")
    assert (by_source["licence"] == by_source["licence_of_source"]).all()
    expected = by_source.group_by("licence").agg(facts=pl.len()).sort("licence")
    licences = _open(directory, "licences").group_by("licence").agg(pl.col("facts").sum()).sort("licence")
    assert licences.to_dicts() == expected.to_dicts()
    datasheet = (directory / "datasheet.md").read_text()
    for heading in (
        "## Motivation",
        "## Composition",
        "## Collection process",
        "## Preprocessing",
        "## Uses",
        "## Distribution",
        "## Maintenance",
        "Known limitations",
        "generated deterministically",
    ):
        assert heading in datasheet
    assert f"{items.height} items are open" in datasheet and "CC0-1.0" in datasheet


# Each export is loaded by its real library in a child interpreter: offline, with its own caches, and without the
# libraries' logging and console set-up leaking into the rest of the test session.
_CROISSANT = """
import json, sys
import mlcroissant as mlc
dataset = mlc.Dataset(jsonld=sys.argv[1])  # raises on any validation error
print(json.dumps({"errors": sorted(map(str, dataset.metadata.ctx.issues.errors)),
                  "items": sorted(r["items/item_id"].decode() for r in dataset.records("items"))}))
"""
_HARNESSES = """
import importlib.util, json, sys
from pathlib import Path
exports, name, cache = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
from lm_eval.tasks import TaskManager
task = TaskManager(include_path=str(exports / "lm_eval"), include_defaults=False).load([name])["tasks"][name]
docs = list(task.test_docs())
task.build_all_requests(limit=2, rank=0, world_size=1)
doc = docs[0]
lm_eval = {"ids": sorted(d["id"] for d in docs), "prompt": task.doc_to_text(doc),
           "target": task.doc_to_choice(doc)[task.doc_to_target(doc)], "answer_letter": doc["answer_letter"],
           "requests": len(task.instances), "options_of_first_two": sum(len(d["choices"]) for d in docs[:2])}
import inspect_ai
listed = [t.name for t in inspect_ai.list_tasks("*.py", root_dir=exports / "inspect")]
module_spec = importlib.util.spec_from_file_location("release_task", exports / "inspect" / f"{name}.py")
module = importlib.util.module_from_spec(module_spec)
module_spec.loader.exec_module(module)
dataset = getattr(module, name)().dataset
inspect = {"listed": listed, "ids": sorted(str(s.id) for s in dataset),
           "targets": sorted({s.target for s in dataset}), "choices": sorted({len(s.choices) for s in dataset})}
import datasets
loaded = datasets.load_dataset(str(exports / "hf"), cache_dir=cache)
hf = {"splits": list(loaded), "ids": sorted(loaded["dev"]["id"])}
print(json.dumps({"lm_eval": lm_eval, "inspect": inspect, "hf": hf}))
"""


def _skip_without(*modules: str) -> None:
    """Skip (without importing them here) when the release-exports extra is not installed."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} missing: pip install -e '.[release-exports]'")


def _run_isolated(script: str, *args: object, tmp_path: Path) -> dict:
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf_home"),
        "HF_DATASETS_CACHE": str(tmp_path / "hf_cache"),
    }
    done = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_croissant_manifest_validates_with_mlcroissant(built, tmp_path):
    directory = built["dir"]
    document = json.loads((directory / "croissant.json").read_text())
    assert "http://mlcommons.org/croissant/RAI/1.0" in document["conformsTo"]
    for field in (
        "rai:dataCollection",
        "rai:dataLimitations",
        "rai:dataBiases",
        "rai:personalSensitiveInformation",
        "rai:dataUseCases",
        "rai:dataReleaseMaintenancePlan",
    ):
        assert document[field], field
    _skip_without("mlcroissant")
    result = _run_isolated(_CROISSANT, directory / "croissant.json", tmp_path=tmp_path)
    assert result["errors"] == []
    assert result["items"] == sorted(_open(directory, "items")["item_id"])


def test_exports_load_in_lm_eval_inspect_and_datasets(built, tmp_path):
    directory, spec = built["dir"], built["spec"]
    name = task_name(spec.name, spec.release.version)
    dev = sorted(_open(directory, "items")["item_id"])
    _skip_without("lm_eval", "inspect_ai", "datasets")
    result = _run_isolated(_HARNESSES, directory / "exports", name, tmp_path / "cache", tmp_path=tmp_path)
    lm_eval, inspect, hf = result["lm_eval"], result["inspect"], result["hf"]
    assert lm_eval["ids"] == dev and lm_eval["prompt"].endswith("Answer:")
    assert lm_eval["target"] == lm_eval["answer_letter"]
    assert lm_eval["requests"] == lm_eval["options_of_first_two"]  # one loglikelihood request per option
    assert inspect["listed"] == [name] and inspect["ids"] == dev
    option_counts = sorted(set(_open(directory, "options").group_by("item_id").len()["len"]))
    assert set(inspect["targets"]) <= set("ABCDEFGHIJ") and inspect["choices"] == option_counts
    assert hf == {"splits": ["dev"], "ids": dev}


def test_new_versions_keep_old_ones_and_diff_lists_item_changes(built, tmp_path, capsys):
    root, db, spec = built["root"], built["db"], built["spec"]
    newer = trimmed_wine(test_share=0.25, version="v0.2")
    defs = build_definitions(newer)
    dg.materialize(
        [a for a in defs.assets if isinstance(a, dg.AssetsDefinition)],
        selection=dg.AssetSelection.assets(dg.AssetKey([spec.name, "release"])),
        instance=built["instance"],
        resources={**defs.resources, **built["resources"]},
    )
    assert [(r["version"], r["items"]) for r in list_releases(root)] == [
        ("v0.1", _open(built["dir"], "items").height),
        ("v0.2", _open(built["dir"], "items").height),
    ]
    # an evaluation harness importing the inspect export leaves Python's bytecode cache beside it: not release content
    cache = built["dir"] / "exports" / "inspect" / "__pycache__" / "harness.cpython-311.pyc"
    cache.parent.mkdir(exist_ok=True)
    cache.write_bytes(b"bytecode")
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
        question=pl.when(pl.col("item_id") == reworded).then(pl.lit("Reworded?")).otherwise("question")
    )
    items = pl.concat([items, items.tail(1).with_columns(item_id=pl.lit("zz_new_item"))])
    items.write_parquet(edited / "data" / "items.parquet")
    assert diff_releases(built["dir"], edited) == {"added": ["zz_new_item"], "removed": [gone], "changed": [reworded]}
    assert cli(["release", "diff", str(built["dir"]), str(edited)]) == 0
    assert "1 added, 1 removed, 1 changed" in capsys.readouterr().out
    assert db.scalar("SELECT count(*) FROM releases WHERE spec = %s", (spec.name,)) == 2


def test_a_rerun_leaves_every_file_but_the_lineage_byte_identical(built):
    """manifest.json holds what the release is; the run's ids and times go to lineage.json alone (issue 22, 8)."""
    directory = built["dir"]
    with pytest.MonkeyPatch.context() as env:
        env.setenv(DATABASE_URL_ENV, built["db"].url)
        # this spec's release current again (another test of the module may have built another version since)
        materialize_all(built["spec"], instance=built["instance"], resources=built["resources"], log=lambda _: None)
        before = {p.relative_to(directory).as_posix(): p.read_bytes() for p in directory.rglob("*") if p.is_file()}
        lineage_before = read_lineage(directory)
        # nothing changed: everything is up to date, the release is not written again (issue 41)
        materialize_all(built["spec"], instance=built["instance"], resources=built["resources"], log=lambda _: None)
        unchanged = {p.relative_to(directory).as_posix(): p.read_bytes() for p in directory.rglob("*") if p.is_file()}
        assert unchanged == before
        materialize_all(
            built["spec"], instance=built["instance"], resources=built["resources"], log=lambda _: None, force=True
        )
    after = {p.relative_to(directory).as_posix(): p.read_bytes() for p in directory.rglob("*") if p.is_file()}
    assert set(after) == set(before)
    changed = sorted(name for name in before if before[name] != after[name])
    assert changed == ["lineage.json"]
    assert read_lineage(directory)["dagster_run_id"] != lineage_before["dagster_run_id"]
    assert "provenance" not in read_manifest(directory) and "dagster_run_id" not in (directory / MANIFEST).read_text()


def test_a_damaged_manifest_is_one_clear_error(built, tmp_path, capsys):
    copy = tmp_path / "wine" / "v0.1"
    shutil.copytree(built["dir"], copy)
    text = (copy / MANIFEST).read_bytes()
    (copy / MANIFEST).write_bytes(text[: len(text) // 2])
    assert cli(["release", "verify", str(copy)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {copy / MANIFEST}: the release's manifest is damaged"), err
    assert cli(["release", "list", "--root", str(tmp_path)]) == 2

"""Issue 41 on a whole built graph (every asset of a trimmed copy of the bundled `wine` spec: one source, two
disciplines, as the daemon test builds; the mechanism is the same for eleven sources and six disciplines, and
`test_wine_pipeline.py` builds the whole spec): after one anchor file changes, Dagster's own
stale status (the resolver behind the UI's stale badges and its "Materialize stale and missing") marks exactly that
discipline's `anchors` partition, and `run --plan` (`stale_plan`) is that set; the run then rebuilds that discipline
only. Facts rebuilt with the same content leave what reads them current (their data version is their content), and
new gold labels make the audit calibration and findings stale."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from benchmark_platform.audit.agents import AuditItem
from benchmark_platform.audit.calibration import GoldSheet, Rating
from benchmark_platform.audit.persist import store_gold_sheets
from benchmark_platform.bench._faultkit import trimmed_spec, write_spec
from benchmark_platform.defs import build_definitions
from benchmark_platform.defs.common import DatabaseResource, EmbedderResource, key
from benchmark_platform.defs.llm.resources import LLMGatewayResource
from benchmark_platform.defs.pipeline import _Loading, materialize_all, stale_plan
from benchmark_platform.defs.release.assets import ReleaseDirectory
from benchmark_platform.spec import load_spec
from benchmark_platform.store import Database
from benchmark_platform.store.settings import DATABASE_URL_ENV

pytestmark = pytest.mark.slow  # builds the whole (trimmed) wine graph once, then parts of it again

CHANGED = "regions"
DISCIPLINES = (CHANGED, "grape_varieties")


def _statuses(spec, instance) -> dict[tuple[str, str | None], str]:
    """Every materialisable asset partition's stale status, from one resolver as the UI's GraphQL builds it."""
    from dagster._core.definitions.data_version import CachingStaleStatusResolver

    graph = build_definitions(spec).resolve_asset_graph()
    resolver = CachingStaleStatusResolver(instance, graph, _Loading(instance))
    out = {}
    for asset_key in graph.materializable_asset_keys:
        node = graph.get(asset_key)
        for partition in node.partitions_def.get_partition_keys() if node.partitions_def else [None]:
            out[(asset_key.path[-1], partition)] = resolver.get_status(asset_key, partition).value
    return out


def _not_fresh(statuses: dict[tuple[str, str | None], str]) -> dict[tuple[str, str | None], str]:
    return {k: v for k, v in statuses.items() if v != "FRESH"}


def _planned(plan: dict[dg.AssetKey, list[str | None]]) -> set[tuple[str, str | None]]:
    return {(k.path[-1], p) for k, ps in plan.items() for p in ps}


def test_one_anchor_file_gold_labels_and_unchanged_facts(migrated_database, tmp_path: Path) -> None:
    db = Database(migrated_database("bp_stale"))
    spec = load_spec(str(write_spec(trimmed_spec(DISCIPLINES), tmp_path / "wine")))
    database = DatabaseResource(url=db.url)
    resources = {
        "database": database,
        "embedder": EmbedderResource(),
        "llm": LLMGatewayResource(database=database),
        "release_directory": ReleaseDirectory(root=str(tmp_path / "releases")),
    }
    with pytest.MonkeyPatch.context() as env, dg.instance_for_test() as instance:
        env.setenv(DATABASE_URL_ENV, db.url)
        lines: list[str] = []

        def build() -> list[str]:
            lines.clear()
            materialize_all(spec, instance=instance, resources=resources, log=lines.append)
            return [line for line in lines if not line.endswith("up to date") and "release gate" not in line]

        assert build()  # the first build builds everything
        assert _not_fresh(_statuses(spec, instance)) == {}
        assert stale_plan(spec, instance, resources) == {}

        # one discipline's anchor file changes: Dagster marks that discipline's anchors partition, nothing else
        anchors_file = spec.anchors_dir / CHANGED / "anchors.yaml"
        anchors_file.write_text(anchors_file.read_text(encoding="utf-8") + "\n# reviewed again\n", encoding="utf-8")
        plan = stale_plan(spec, instance, resources)  # observes the anchor files, as `run` does first
        stale = _not_fresh(_statuses(spec, instance))
        assert stale == {("anchors", CHANGED): "STALE"}
        assert _planned(plan) == set(stale)
        # the run rebuilds that discipline (down the graph, round by round), then analysis and the release
        built = build()
        assert [line.split("]")[0] for line in built] == [
            f"[wine disciplines {spec.discipline_keys.index(CHANGED) + 1}/{len(spec.discipline_keys)} {CHANGED}",
            "[wine unpartitioned 1/1",
            "[wine release 1/1",
        ]
        assert _not_fresh(_statuses(spec, instance)) == {} and stale_plan(spec, instance, resources) == {}

        # facts rebuilt from the same candidates come back with the same content version: nothing below is stale
        facts = [a for a in build_definitions(spec).assets or [] if getattr(a, "key", None) == key(spec, "facts")]
        dg.materialize(facts, partition_key=CHANGED, instance=instance, resources=resources)
        assert _not_fresh(_statuses(spec, instance)) == {}

        # new gold labels (`audit import-gold`): what reads them is stale once they are observed
        item = AuditItem(
            "g1", "Which grape is Barolo made from?", ("Nebbiolo", "Merlot"), 0, ("Barolo is Nebbiolo.",), 2
        )
        store_gold_sheets(db, [GoldSheet("gold_one", "utf-8", [item], [Rating("g1", "rater", "answer_correct", 1.0)])])
        assert _planned(stale_plan(spec, instance, resources)) == {
            ("audit_calibration", None),
            *(("audit_findings", d) for d in spec.discipline_keys),
        }
        assert set(_not_fresh(_statuses(spec, instance))) == _planned(stale_plan(spec, instance, resources))

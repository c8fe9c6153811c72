"""Issue 41: what is stale comes from Dagster's own stale status (the resolver its UI uses), fed by the observed
anchor files, and `run`'s partition builder rebuilds exactly that, round after round, down the graph.

On a copy of the bundled `mmlu_pro` spec (an item-bank spec: its support centrality is cheap), anchors and support
centrality are built for every discipline; then one discipline's anchor file changes."""

from __future__ import annotations

import shutil

import dagster as dg
import pytest

from benchmark_platform.defs import build_definitions
from benchmark_platform.defs.common import DatabaseResource, key
from benchmark_platform.defs.pipeline import _build_partition, _Group, _Resolver, stale_status
from benchmark_platform.paths import PROJECT_ROOT
from benchmark_platform.spec import load_spec
from benchmark_platform.store import Database, migrate

pytestmark = pytest.mark.slow  # builds anchors and support centrality for all 14 mmlu_pro categories, then again
FRESH, STALE = "FRESH", "STALE"


@pytest.fixture
def built(fresh_database, tmp_path):
    url = fresh_database()
    migrate(Database(url))
    shutil.copytree(PROJECT_ROOT / "benchmark_platform" / "specs" / "mmlu_pro", tmp_path / "mmlu_pro")
    spec = load_spec(str(tmp_path / "mmlu_pro" / "spec.yaml"))
    defs = build_definitions(spec)
    names = ("anchor_files", "anchors", "support_centrality")
    by_key = {a.key: a for a in defs.assets or [] if isinstance(a, dg.AssetsDefinition)}
    assets = [by_key[key(spec, n)] for n in names[1:]]
    observed = [a for a in defs.assets or [] if isinstance(a, dg.SourceAsset) and a.key == key(spec, names[0])]
    resources = {"database": DatabaseResource(url=url)}
    with dg.instance_for_test() as instance:

        def observe() -> None:
            from dagster._core.definitions.observe import observe as run_observation

            run_observation(observed, instance=instance, resources=resources)

        def run(_label: str, keys: list[dg.AssetKey], partition: str | None) -> list:
            dg.materialize(
                [*assets, *observed], selection=keys, partition_key=partition, instance=instance, resources=resources
            )
            return [k.path[-1] for k in keys]

        group = _Group("disciplines", assets[0].partitions_def, spec.discipline_keys, assets)
        observe()
        for discipline in spec.discipline_keys:
            assert _build_partition(_Resolver(instance, defs.resolve_asset_graph()), group, discipline, False, run) == [
                "anchors",
                "support_centrality",
            ]
        yield spec, defs.resolve_asset_graph(), instance, group, observe, run


def _statuses(spec, graph, instance, name: str) -> dict[str, str]:
    return {d: stale_status(instance, graph, key(spec, name), d).value for d in spec.discipline_keys}


def test_one_changed_anchor_file_makes_exactly_its_partitions_stale(built) -> None:
    spec, graph, instance, group, observe, run = built
    changed, others = "law", [d for d in spec.discipline_keys if d != "law"]
    assert set(_statuses(spec, graph, instance, "anchors").values()) == {FRESH}
    # an unchanged observation changes nothing
    observe()
    assert set(_statuses(spec, graph, instance, "anchors").values()) == {FRESH}
    assert _build_partition(_Resolver(instance, graph), group, changed, False, run) == []

    strata = spec.anchors_dir / changed / "anchors.yaml"
    strata.write_text(strata.read_text(encoding="utf-8") + "\n# reviewed again\n", encoding="utf-8")
    observe()
    anchors = _statuses(spec, graph, instance, "anchors")
    assert anchors[changed] == STALE and {anchors[d] for d in others} == {FRESH}
    # Dagster marks what reads the anchors once they are rebuilt (their new data version may equal the old one)
    assert set(_statuses(spec, graph, instance, "support_centrality").values()) == {FRESH}
    run("disciplines", [key(spec, "anchors")], changed)
    centrality = _statuses(spec, graph, instance, "support_centrality")
    assert centrality[changed] == STALE and {centrality[d] for d in others} == {FRESH}
    assert _statuses(spec, graph, instance, "anchors")[changed] == FRESH

    # run's builder takes it from there, and then has nothing left; other disciplines have nothing to do
    assert _build_partition(_Resolver(instance, graph), group, changed, False, run) == ["support_centrality"]
    assert _build_partition(_Resolver(instance, graph), group, changed, False, run) == []
    assert [_build_partition(_Resolver(instance, graph), group, d, False, run) for d in others[:2]] == [[], []]
    # from a stale anchors partition, one call walks down: anchors first, then (stale only now) what reads them
    second = others[2]
    (spec.anchors_dir / second / "anchors.yaml").write_text(
        (spec.anchors_dir / second / "anchors.yaml").read_text(encoding="utf-8") + "\n# again\n", encoding="utf-8"
    )
    observe()
    assert _build_partition(_Resolver(instance, graph), group, second, False, run) == ["anchors", "support_centrality"]
    assert _statuses(spec, graph, instance, "support_centrality")[second] == FRESH
    # --force rebuilds the partition whatever its status
    assert _build_partition(_Resolver(instance, graph), group, others[0], True, run) == [
        "anchors",
        "support_centrality",
    ]

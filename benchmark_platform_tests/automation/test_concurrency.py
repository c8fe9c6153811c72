import dagster as dg

from benchmark_platform.defs import build_definitions
from benchmark_platform.defs.automation.concurrency import (
    DATABASE_POOL,
    definitions_pools,
    pool_limits,
    set_pool_limits,
    workspace_pool_limits,
)
from benchmark_platform.llm.config import ModelConfig
from benchmark_platform.paths import PROJECT_ROOT


def test_one_pool_per_provider_and_one_for_the_database() -> None:
    models = [
        ModelConfig(name="a", family="openai", base_url="https://openrouter.ai/api/v1", model="x"),
        ModelConfig(name="b", family="google", base_url="https://openrouter.ai/api/v1", model="y"),
        ModelConfig(name="c", family="gemma", backend="local_llama", model="gemma"),
    ]
    limits = pool_limits(models, ["stage_items"])
    assert limits == {DATABASE_POOL: 2, "llm_openrouter_ai": 1, "llm_local": 1, "stage_items": 1}
    with dg.instance_for_test() as instance:
        set_pool_limits(instance, limits)
        set_pool_limits(instance, limits)  # idempotent
        assert {pool: instance.event_log_storage.get_concurrency_info(pool).slot_count for pool in limits} == limits


def test_every_discipline_stage_has_one_pool_and_a_single_run_policy(wine_spec) -> None:
    """A stage that calls no model queues on its own stage pool; a range of disciplines is one run (anchors excepted:
    one discipline per run, for its per-discipline data version)."""
    defs = build_definitions(wine_spec)
    stages = [
        a
        for a in defs.assets or []
        if isinstance(a, dg.AssetsDefinition)
        and a.partitions_def is not None
        and list(a.partitions_def.get_partition_keys()) == wine_spec.discipline_keys
    ]
    assert len(stages) >= 12
    for asset in stages:
        name = asset.key.path[-1]
        expected = "stage_review" if name.startswith("review_") else f"stage_{name}"
        assert asset.op.pool == expected, name  # the wine spec configures no model: no provider pool
        if name == "anchors":
            assert asset.backfill_policy == dg.BackfillPolicy.multi_run(max_partitions_per_run=1)
        else:
            assert asset.backfill_policy == dg.BackfillPolicy.single_run(), name
    limits = workspace_pool_limits(PROJECT_ROOT / "workspace.yaml")  # what `benchmark-platform dev` writes
    assert definitions_pools(defs) <= set(limits)
    assert limits["stage_audit_findings"] == 1 and limits[DATABASE_POOL] == 2

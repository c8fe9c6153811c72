import dagster as dg

from benchmark_platform.defs.automation.concurrency import DATABASE_POOL, pool_limits, set_pool_limits
from benchmark_platform.llm.config import ModelConfig


def test_one_pool_per_provider_and_one_for_the_database() -> None:
    models = [
        ModelConfig(name="a", family="openai", base_url="https://openrouter.ai/api/v1", model="x"),
        ModelConfig(name="b", family="google", base_url="https://openrouter.ai/api/v1", model="y"),
        ModelConfig(name="c", family="gemma", backend="local_llama", model="gemma"),
    ]
    limits = pool_limits(models)
    assert limits == {DATABASE_POOL: 2, "llm_openrouter_ai": 1, "llm_local": 1}
    with dg.instance_for_test() as instance:
        set_pool_limits(instance, limits)
        set_pool_limits(instance, limits)  # idempotent
        assert {pool: instance.event_log_storage.get_concurrency_info(pool).slot_count for pool in limits} == limits

"""One executor for every job, chosen by run configuration: in-process (the default), multiprocess or celery.

    execution: {config: {multiprocess: {max_concurrent: 2}}}
    execution: {config: {celery: {broker: "redis://127.0.0.1:6379/0", backend: "redis://127.0.0.1:6379/0"}}}

Celery workers run `celery -A dagster_celery.app worker -Q dagster` with this package on PYTHONPATH, the same
DAGSTER_HOME and a PostgreSQL instance storage (see docs/scale-out.md); the same code runs in every mode.
"""

import dagster as dg
from dagster._core.executor.init import InitExecutorContext
from dagster_celery import celery_executor

LOCAL_MODES = dg.multi_or_in_process_executor.config_schema.config_type.fields  # multiprocess, in_process


def _requirements(config: dict) -> list:
    return dg.multiple_process_executor_requirements() if "in_process" not in config else []


@dg.executor(
    name="benchmark_executor",
    requirements=_requirements,
    config_schema=dg.Field(
        dg.Selector({**LOCAL_MODES, "celery": celery_executor.config_schema.as_field()}),
        # In process by default: within a partition the stages form a chain, so a run has no two steps to execute at
        # once, and the multiprocess executor would start a Python importing Dagster and the stage (1-2 s of CPU) for
        # each of a partition's ~12 steps. The run itself is still a process of its own under the daemon's launcher.
        default_value={"in_process": {}},
    ),
)
def benchmark_executor(init_context: InitExecutorContext) -> dg.Executor:
    config = init_context.executor_config
    chosen, sub_config = (
        (celery_executor, config["celery"]) if "celery" in config else (dg.multi_or_in_process_executor, config)
    )
    return chosen.executor_creation_fn(
        InitExecutorContext(
            job=init_context.job, executor_def=chosen, executor_config=sub_config, instance=init_context.instance
        )
    )

"""benchmark_platform: build, audit, select, evaluate and release LLM knowledge benchmarks with Dagster."""

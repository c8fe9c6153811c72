"""Benchmarks: `python -m benchmark_platform.bench NAME` runs bench/NAME.py's main(); its last line is one JSON object."""

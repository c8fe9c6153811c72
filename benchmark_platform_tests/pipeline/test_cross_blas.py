"""Issue 30: the same inputs give the same selection and analysis bytes whichever BLAS kernel and thread count run.

Two processes compute the selection stage's outputs (support-centrality scores and pairs, the chosen set with its
gains, certificate and held-out validation) for two MMLU-Pro categories and two wine disciplines, and the IRT pool
accuracy table, from stored inputs (cross_blas_worker.py): one under OpenBLAS's default kernel for this CPU with two
threads, one under the Prescott (SSE3) kernel with one thread. Every output, written as release parquet, must have
the same sha256. On b924b0b all 13 outputs differed (1 failed in 140 s; this code: 1 passed in 115 s, both under
a load average of 14-16 on 2 cores).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from benchmark_platform.paths import PACKAGE_DIR

CONFIGS = {
    "default kernel, 2 threads": {"OPENBLAS_NUM_THREADS": "2"},
    "Prescott kernel, 1 thread": {"OPENBLAS_CORETYPE": "Prescott", "OPENBLAS_NUM_THREADS": "1"},
}


def _start(settings: dict[str, str]) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENBLAS_", "OMP_", "MKL_"))} | settings
    return subprocess.Popen(
        [sys.executable, "-m", "benchmark_platform_tests.pipeline.cross_blas_worker"],
        cwd=PACKAGE_DIR.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_selection_and_analysis_bytes_do_not_depend_on_the_blas_kernel_or_threads():
    processes = {name: _start(settings) for name, settings in CONFIGS.items()}  # both at once: one per core
    reports = {}
    for name, process in processes.items():
        out, err = process.communicate()
        assert process.returncode == 0, f"{name}: the worker failed:\n{err[-3000:]}"
        reports[name] = json.loads(out)
    (first, a), (second, b) = reports.items()
    assert a["blas"] != b["blas"], f"the two configurations ran the same BLAS: {a['blas']}"
    assert a["outputs"].keys() == b["outputs"].keys() and len(a["outputs"]) == 13
    differing = [key for key in a["outputs"] if a["outputs"][key] != b["outputs"][key]]
    assert not differing, (
        f"{len(differing)} of {len(a['outputs'])} outputs differ between {first} and {second}: {differing}"
    )

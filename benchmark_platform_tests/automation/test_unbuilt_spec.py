"""Issue 36, point 9: `make dev` loads three code locations; the sensors of `kina` (nobody builds it) are off by default
and say why, and loading the definitions prints none of Dagster's beta/superseded warnings for the APIs we chose."""

from __future__ import annotations

import subprocess
import sys

import dagster as dg
import pytest

from benchmark_platform.defs import build_definitions
from benchmark_platform.paths import PROJECT_ROOT
from benchmark_platform.spec import load_spec


def test_sensors_of_a_spec_nobody_builds_are_off_and_say_so():
    kina = build_definitions(load_spec("kina"))
    sensors = list(kina.sensors or [])
    assert {s.name for s in sensors} >= {"kina_taxonomy_sensor", "kina_automation_condition_sensor"}
    assert all(s.default_status == dg.DefaultSensorStatus.STOPPED for s in sensors)
    assert all((s.description or "").startswith("Off by default: nobody builds kina") for s in sensors)
    wine = {s.name: s for s in build_definitions(load_spec("wine")).sensors or []}
    assert wine["wine_taxonomy_sensor"].default_status == dg.DefaultSensorStatus.RUNNING
    assert not (wine["wine_taxonomy_sensor"].description or "").startswith("Off by default")


@pytest.mark.slow  # a fresh interpreter imports Dagster and all three code locations
def test_loading_every_code_location_prints_no_dagster_warning():
    modules = (
        "benchmark_platform.definitions, benchmark_platform.definitions_kina, benchmark_platform.definitions_mmlu_pro"
    )
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", f"import {modules}"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Warning" not in done.stderr, done.stderr

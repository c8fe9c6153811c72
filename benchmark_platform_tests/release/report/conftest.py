"""The synthetic MMLU-Pro-sized report, written once per session (report_synthetic.py builds it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_synthetic import synthetic_summary, write_report


@pytest.fixture(scope="session")
def synthetic_report(tmp_path_factory) -> Path:
    return write_report(synthetic_summary(), tmp_path_factory.mktemp("synthetic_release"))

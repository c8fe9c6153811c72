"""Anchor imports get the shared input limits (issue 22, 2): deep nesting and oversized files are AnchorFileErrors
naming the file, never a RecursionError."""

from __future__ import annotations

import shutil

import pytest

from benchmark_platform.anchors.io import AnchorFileError, load_anchor_set
from benchmark_platform.inputs import InputLimits
from benchmark_platform.paths import SPECS_DIR

REGIONS = SPECS_DIR / "wine" / "anchors" / "regions"


@pytest.fixture
def folder(tmp_path):
    target = tmp_path / "regions"
    shutil.copytree(REGIONS, target)
    return target


def test_the_bundled_folder_loads_within_the_default_limits(folder):
    assert load_anchor_set(folder).discipline == "regions"


def test_100000_nested_brackets_are_a_clear_error(folder):
    (folder / "anchors.yaml").write_text("discipline: regions\nk_total: " + "[" * 50_000 + "]" * 50_000 + "\n")
    with pytest.raises(AnchorFileError, match="nested 50,000 levels deep"):
        load_anchor_set(folder)


def test_an_oversized_file_is_refused_before_it_is_parsed(folder):
    size = (folder / "anchors.yaml").stat().st_size
    with pytest.raises(AnchorFileError, match=f"anchors.yaml: {size:,} bytes is over the limit of 100"):
        load_anchor_set(folder, InputLimits(max_bytes=100))

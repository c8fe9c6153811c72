"""Issue 30 for the second bundled release: this machine builds the `mmlu_pro` release the repository names
(specs/mmlu_pro/release_digest.json: the sorted item ids per discipline and the leaderboard), so a CPU, BLAS kernel
or thread count that changes which items ship, or what the leaderboard says, fails CI naming the first difference."""

from __future__ import annotations

import pytest

from benchmark_platform.release.bundle import verify_release
from benchmark_platform.release.digest import committed_digest, first_difference, release_digest
from benchmark_platform.spec import load_spec
from benchmark_platform.store import Database
from benchmark_platform_tests.pipeline.building import build_release

pytestmark = pytest.mark.slow  # builds the whole mmlu_pro graph (14 categories, 12,032 items, 29 models' answers)


def test_the_mmlu_pro_release_is_the_committed_digest(migrated_database, tmp_path):
    db = Database(migrated_database("bp_mmlu_pro"))
    spec = load_spec("mmlu_pro")
    release = build_release(spec, db, tmp_path)
    assert verify_release(release) == []
    difference = first_difference(committed_digest(spec.directory), release_digest(release))
    assert difference is None, f"this machine built another {spec.name} release than the committed digest: {difference}"

"""`benchmark-platform run` with several specs builds them at once, one process each (issue 41): each spec's lines
as they happen, the summaries in the order given once all have finished, and a spec that fails neither stops the
others nor hides its one error line; the exit status is the worst."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmark_platform.bench._faultkit import cli, cli_env, trimmed_spec, write_spec

pytestmark = pytest.mark.slow  # two trimmed wine builds


def test_two_specs_build_at_once_and_a_failing_one_stops_only_itself(fresh_database, tmp_path: Path):
    good = write_spec(trimmed_spec().model_copy(update={"name": "wine_good"}), tmp_path / "good")
    broken = write_spec(trimmed_spec().model_copy(update={"name": "wine_broken"}), tmp_path / "broken")
    anchors = broken.parent / "anchors" / "regions" / "anchors.yaml"
    anchors.write_text(anchors.read_text() + "k_total: 3\n")  # found by the anchors stage, after ingest and facts

    build = cli(["run", "--spec", str(good), "--spec", str(broken)], cli_env(fresh_database()), tmp_path / "build")
    assert build.wait() == 2
    said = (tmp_path / "build.stdout").read_text()
    errors = [line for line in (tmp_path / "build.stderr").read_text().splitlines() if line.startswith("error:")]

    assert said.splitlines()[1] == "building wine_good, wine_broken at once, one process each"
    assert "[wine_good disciplines 1/1 regions]" in said and "[wine_broken sources 1/1 ttb_ava_geojson]" in said
    assert f"release: {tmp_path / 'releases' / 'wine_good' / 'v0.1'}" in said  # the good spec is released
    assert (tmp_path / "releases" / "wine_good" / "v0.1" / "manifest.json").is_file()
    assert not (tmp_path / "releases" / "wine_broken").exists()
    assert len(errors) == 1 and "duplicate key 'k_total'" in errors[0] and str(anchors) in errors[0]
    done = said.splitlines()[-1]
    assert done.startswith("done in ") and "wine_good " in done and "wine_broken failed after" in done
    assert "Traceback" not in (tmp_path / "build.stderr").read_text()

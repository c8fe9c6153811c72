"""Hostile files (issue 40): each test is one defect found by the fault pass, and fails on the code before the fix.

YAML bombs and duplicate keys, specs with settings no run can use, gold sheets that were imported as mojibake or
replaced review ratings, damaged releases, a release replace interrupted, forged LLM journal lines, an unset API key.
Every expected failure is one `error:` line naming the file and exit 2.
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from benchmark_platform.anchors.io import AnchorFileError, load_anchor_set
from benchmark_platform.bench._badinputs import GOOD_ROW, HEADER
from benchmark_platform.cli.main import expected_error, main
from benchmark_platform.defs.release.assets import RELEASE_KEY_ENV, ReleaseKey
from benchmark_platform.paths import SPECS_DIR
from benchmark_platform.release import bundle
from benchmark_platform.spec import SpecError, load_spec
from benchmark_platform.store.settings import DATABASE_URL_ENV

WINE = SPECS_DIR / "wine" / "spec.yaml"


def bomb(levels: int = 7, children: int = 9) -> str:
    """The fault pass' alias bomb: each level a mapping whose children are nine aliases of the level below."""
    lines = ["n0: &n0 {name: L0}"]
    for i in range(1, levels + 1):
        lines.append(f"n{i}: &n{i} {{name: L{i}, children: [" + ", ".join([f"*n{i - 1}"] * children) + "]}")
    return "\n".join(lines) + "\n"


def spec_text(**changes: str) -> str:
    """A small valid spec (YAML), with top-level entries replaced or added."""
    entries = {
        "name": "hostile",
        "description": "a spec of the hostile-input tests",
        "seed": "1",
        "taxonomy": "[{name: Wine, children: [{name: Regions, key: regions}]}]",
        "release": "{version: v0.1, licence: CC-BY-4.0, canary: hostile-canary}",
    }
    entries.update(changes)
    return "".join(f"{k}: {v}\n" for k, v in entries.items())


def check(path: Path) -> subprocess.CompletedProcess[str]:
    """`benchmark-platform spec check` in a process limited to 2 GB of address space (the issue's limit)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2_000_000 * 1024, 2_000_000 * 1024))

    return subprocess.run(
        [sys.executable, "-m", "benchmark_platform.cli.main", "spec", "check", str(path)],
        capture_output=True,
        text=True,
        preexec_fn=limit,
    )


def one_error(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in stderr, stderr[-2000:]
    return lines[0]


# -- 1. YAML: alias bombs, duplicate keys ----------------------------------------------------------------------------
def test_the_alias_bomb_spec_is_one_line_under_a_2gb_limit(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(spec_text(taxonomy="[*n7]").replace("taxonomy:", bomb() + "taxonomy:"))
    result = check(path)
    assert result.returncode == 2
    assert str(path) in one_error(result.stderr) and "alias" in result.stderr


def test_an_alias_bomb_in_an_included_file_is_refused(tmp_path):
    (tmp_path / "taxonomy.yaml").write_text(bomb() + "all: [*n7]\n")
    path = tmp_path / "spec.yaml"
    path.write_text(spec_text(taxonomy="!include taxonomy.yaml"))
    with pytest.raises(SpecError, match="taxonomy.yaml: aliases expand beyond the budget"):
        load_spec(path)


def test_an_alias_bomb_in_anchors_yaml_is_an_anchor_file_error(tmp_path):
    folder = tmp_path / "regions"
    shutil.copytree(SPECS_DIR / "wine" / "anchors" / "regions", folder)
    (folder / "anchors.yaml").write_text(bomb() + "discipline: regions\nk_total: 5\nnote: [*n7]\n")
    with pytest.raises(AnchorFileError, match="aliases expand beyond the budget"):
        load_anchor_set(folder)


def test_a_self_referencing_alias_is_refused(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(spec_text(taxonomy="&t [{name: Wine, children: *t}]"))
    with pytest.raises(SpecError, match="refers to a block that contains it"):
        load_spec(path)


def test_a_few_reused_blocks_still_load(tmp_path):
    path = tmp_path / "spec.yaml"
    leaf = "{name: Regions, key: regions}"
    path.write_text(spec_text(taxonomy=f"[{{name: Wine, children: [&r {leaf}]}}, {{name: Again, children: [*r]}}]"))
    with pytest.raises(SpecError, match="regions"):  # the alias loads; the spec then finds the key twice
        load_spec(path)


def test_a_duplicate_key_is_refused_naming_the_line(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(spec_text() + "seed: 2\n")
    result = check(path)
    assert result.returncode == 2
    assert "duplicate key 'seed' (first on line 3)" in one_error(result.stderr)


def test_a_duplicate_key_in_anchors_yaml_is_refused(tmp_path):
    folder = tmp_path / "regions"
    shutil.copytree(SPECS_DIR / "wine" / "anchors" / "regions", folder)
    (folder / "anchors.yaml").write_text((folder / "anchors.yaml").read_text() + "k_total: 3\n")
    with pytest.raises(AnchorFileError, match="duplicate key 'k_total'"):
        load_anchor_set(folder)


# -- 11. settings no run can use -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("change", "field"),
    [({"seed": "-1"}, "seed"), ({"review": "{hourly_rate: .inf}"}, "review.hourly_rate")],
)
def test_a_negative_seed_or_an_infinite_number_fails_spec_check(tmp_path, change, field):
    path = tmp_path / "spec.yaml"
    path.write_text(spec_text(**change))
    assert main(["spec", "check", str(path)]) == 2
    with pytest.raises(SpecError, match=field):
        load_spec(path)


def test_an_infinite_stratum_weight_is_refused(tmp_path):
    folder = tmp_path / "regions"
    shutil.copytree(SPECS_DIR / "wine" / "anchors" / "regions", folder)
    text = (folder / "anchors.yaml").read_text()
    assert "omega: 0.7," in text
    (folder / "anchors.yaml").write_text(text.replace("omega: 0.7,", "omega: .inf,"))
    with pytest.raises(AnchorFileError, match="omega: Input should be a finite number"):
        load_anchor_set(folder)


# -- 10, 11. gold sheets ---------------------------------------------------------------------------------------------
@pytest.fixture
def gold_env(db, monkeypatch):
    monkeypatch.setenv(DATABASE_URL_ENV, db.url)
    return db


def import_gold(path: Path, capsys) -> tuple[int, str]:
    code = main(["audit", "import-gold", str(path)])
    return code, capsys.readouterr().err


def test_gold_options_as_mappings_without_text_are_one_error(tmp_path, gold_env, capsys):
    sheet = tmp_path / "dict_options.csv"
    sheet.write_text(HEADER + 'q1,Which?,"[{""label"": ""Dijon""}, {""label"": ""Lyon""}]",A,1,0\n')
    code, err = import_gold(sheet, capsys)
    assert code == 2 and "dict_options.csv:2: option 1 is a mapping without a `text`" in one_error(err)


def test_the_same_item_rated_twice_by_one_reviewer_is_one_error(tmp_path, gold_env, capsys):
    sheet = tmp_path / "twice.csv"
    sheet.write_text(HEADER + GOOD_ROW + GOOD_ROW)
    code, err = import_gold(sheet, capsys)
    assert code == 2 and "twice.csv:3: reviewer 'twice' rates item 'q1'" in one_error(err)
    assert gold_env.scalar("SELECT count(*) FROM gold_labels WHERE sheet = 'twice'") == 0


def test_a_sheet_in_mixed_encodings_is_refused(tmp_path, gold_env, capsys):
    sheet = tmp_path / "mixed.csv"
    utf8_row = GOOD_ROW.replace("Dijon", "Mâcon").encode("utf-8")
    cp1252_row = GOOD_ROW.replace("q1", "q2").replace("Dijon", "Mâcon").encode("cp1252")
    sheet.write_bytes(HEADER.encode() + utf8_row + cp1252_row)
    code, err = import_gold(sheet, capsys)
    assert code == 2 and "mixed encodings" in one_error(err)
    assert gold_env.scalar("SELECT count(*) FROM gold_items WHERE sheet = 'mixed'") == 0


def test_a_sheet_named_like_a_review_round_does_not_replace_its_ratings(tmp_path, gold_env, capsys):
    round_sheet = "review:hostile:regions:r1"
    with gold_env.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM gold_labels WHERE sheet = %s", (round_sheet,))
        cur.execute(
            "INSERT INTO gold_labels (sheet, item_ref, reviewer, rubric, rating) VALUES (%s, 'i1', 'r1', 'x', 1)",
            (round_sheet,),
        )
    sheet = tmp_path / f"{round_sheet}.csv"
    sheet.write_text(HEADER + GOOD_ROW)
    code, err = import_gold(sheet, capsys)
    assert code == 2 and "may not start with 'review:'" in one_error(err)
    rows = gold_env.query("SELECT item_ref, reviewer FROM gold_labels WHERE sheet = %s", (round_sheet,))
    assert rows == [{"item_ref": "i1", "reviewer": "r1"}]


# -- 9, 13. releases -------------------------------------------------------------------------------------------------
def make_release(root: Path, version: str = "v0.1", body: bytes = b"rows") -> Path:
    files = {"data/items.txt": body, "datasheet.md": b"# hostile\n"}
    manifest = {
        "benchmark": "hostile",
        "version": version,
        "files": {p: {"sha256": bundle.sha256_bytes(d), "bytes": len(d)} for p, d in files.items()},
    }
    directory = root / "hostile" / version
    directory.parent.mkdir(parents=True, exist_ok=True)
    bundle.write_release(directory, files, manifest, {"dagster_run_id": "r1", "assets": {}})
    return directory


def test_a_kill_between_the_two_renames_leaves_a_complete_release(tmp_path, monkeypatch):
    directory = make_release(tmp_path, body=b"old rows")
    real_rename = Path.rename

    def killed(self: Path, target):  # the kill lands right before the new bundle is renamed in
        if self.name.endswith(".partial"):
            raise KeyboardInterrupt("killed")
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", killed)
    with pytest.raises(KeyboardInterrupt):
        make_release(tmp_path, body=b"new rows")
    monkeypatch.setattr(Path, "rename", real_rename)
    bundle.recover_release(directory)  # what the next write does first
    assert bundle.verify_release(directory) == []
    assert (directory / "data/items.txt").read_bytes() == b"old rows"
    make_release(tmp_path, body=b"new rows")
    assert (directory / "data/items.txt").read_bytes() == b"new rows"
    assert sorted(p.name for p in directory.parent.iterdir()) == ["v0.1"]


def test_verify_exits_2_on_a_damaged_bundle(tmp_path, capsys):
    directory = make_release(tmp_path)
    (directory / "data/items.txt").write_bytes(b"tampered")
    assert main(["release", "verify", str(directory)]) == 2
    assert "data/items.txt: content hash differs" in one_error(capsys.readouterr().err)


def test_verify_rejects_a_garbage_lineage(tmp_path, capsys):
    directory = make_release(tmp_path)
    (directory / "lineage.json").write_text(json.dumps({"assets": [1, 2, 3], "code_revision": {"x": 1}}))
    assert main(["release", "verify", str(directory)]) == 2
    assert "lineage.json" in one_error(capsys.readouterr().err)
    with pytest.raises(ValueError, match="lineage is damaged"):
        bundle.read_lineage(directory)


def test_verify_refuses_a_manifest_entry_outside_the_bundle(tmp_path, capsys):
    directory = make_release(tmp_path)
    outside = tmp_path / "x"
    outside.write_bytes(b"secret")
    manifest = json.loads((directory / "manifest.json").read_text())
    manifest["files"]["../../../x"] = {"sha256": bundle.sha256_bytes(b"secret"), "bytes": 6}
    (directory / "manifest.json").write_text(json.dumps(manifest))
    assert main(["release", "verify", str(directory)]) == 2
    assert "outside the bundle" in one_error(capsys.readouterr().err)


def test_list_shows_every_release_and_marks_the_damaged_one(tmp_path, capsys):
    good = make_release(tmp_path, "v0.1")
    damaged = make_release(tmp_path, "v0.2")
    (damaged / "manifest.json").write_text("{not json")
    assert main(["release", "list", "--root", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert str(good) in out and f"DAMAGED {damaged}" in out
    assert "1 of 2 releases" in one_error(err)


# -- 6. the LLM journal ----------------------------------------------------------------------------------------------
def test_the_journal_folder_is_private_and_checked(tmp_path, monkeypatch):
    from benchmark_platform.llm.cache import UnsafeFolder, private_folder, state_folder

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    folder = state_folder()
    assert folder.stat().st_mode & 0o777 == 0o700
    folder.chmod(0o777)
    with pytest.raises(UnsafeFolder, match="not writable by others"):
        state_folder()
    planted = tmp_path / "planted"
    planted.mkdir(mode=0o755)
    planted.chmod(0o757)
    with pytest.raises(UnsafeFolder):
        private_folder(planted)


def test_a_planted_journal_line_is_not_replayed_into_the_cache(db, tmp_path, monkeypatch):
    from benchmark_platform.llm.cache import ResponseStore

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    journal = tmp_path / "journal"
    journal.mkdir(mode=0o700)
    forged_hash = "f" * 63 + "0"
    cache_row = [forged_hash, "m", "p", '{"x": 1}', '{"choices": [{"message": {"content": "forged"}}]}']
    cache_row += [1, 1, 0, 0.0, "none", 1.0]
    call_row = ["planted-1", "run", forged_hash, "m", "p", 0.0, 1.0, 1, 1, 0, 0.0, "none", False, False, 0, "ok", None]
    (journal / "planted-0.jsonl").write_text(json.dumps([cache_row, call_row]) + "\n")
    store = ResponseStore(db, journal)
    try:
        store.recover()
    finally:
        store.close()
    assert db.scalar("SELECT count(*) FROM llm_call_cache WHERE request_hash = %s", (forged_hash,)) == 0


# -- 10. one line, not a traceback -----------------------------------------------------------------------------------
def test_an_unset_api_key_variable_is_an_expected_one_line_error(db, monkeypatch):
    from benchmark_platform.llm.config import GatewaySettings, ModelConfig
    from benchmark_platform.llm.gateway import Gateway

    monkeypatch.delenv("HOSTILE_UNSET_KEY", raising=False)
    model = ModelConfig(name="remote", family="x", base_url="http://127.0.0.1:9/v1", model="m", api_key_env="K")
    with pytest.raises(Exception) as info:
        Gateway([model], GatewaySettings(), db, run_id="hostile", api_keys={})
    message = expected_error(info.value)
    assert message is not None and "environment variable K is not set" in message


def test_the_faults_bench_reads_the_cli_s_indented_release_line(tmp_path):
    from benchmark_platform.bench.faults import _release_dir

    out = tmp_path / "run"
    out.with_suffix(".stdout").write_text("== building wine v0.1\n   release: /somewhere/wine/v0.1\ndone\n")
    assert _release_dir(out) == Path("/somewhere/wine/v0.1")


def test_a_blocking_check_that_stops_a_build_is_one_line():
    @dg.asset
    def findings() -> None:
        return None

    @dg.asset_check(asset=findings, blocking=True)
    def policy_applied() -> dg.AssetCheckResult:
        return dg.AssetCheckResult(passed=False)

    with pytest.raises(Exception) as info:
        dg.materialize([findings, policy_applied], raise_on_error=True)
    message = expected_error(info.value)
    assert message is not None and "blocking asset check failed" in message and "policy_applied" in message


def test_a_secret_variable_left_unset_is_one_line(monkeypatch):
    """Issue 40, 10: `release.test_share` > 0 without BENCHMARK_PLATFORM_RELEASE_KEY stopped with Dagster's config
    traceback. The same Dagster error, raised by a real materialisation, becomes one line naming the variable."""
    from benchmark_platform.cli.main import expected_error

    monkeypatch.delenv(RELEASE_KEY_ENV, raising=False)

    @dg.asset
    def sealed(release_key: ReleaseKey) -> None:
        pass

    with pytest.raises(dg.DagsterInvalidConfigError) as raised:
        dg.materialize([sealed], resources={"release_key": ReleaseKey(key=dg.EnvVar(RELEASE_KEY_ENV))})
    assert expected_error(raised.value) == (
        f"the environment variable {RELEASE_KEY_ENV} is not set; this build reads it (through Dagster's EnvVar, "
        "never logged or stored): set it in the environment and rerun"
    )

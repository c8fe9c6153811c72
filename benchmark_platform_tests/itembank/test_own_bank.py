"""Issue 32 / issue 40 items 3-5 and 10: one's own bank on the real PostgreSQL. Keys are exactly one letter or index
(recorded model answers too), encodings are declared or refused, a huge CSV field is one line, spec paths resolve
from the spec's folder, `spec check` opens the bank, anchors derive for any category size, an item that moves
category follows, two specs share one bank file without sharing rows, and `spec drop` removes one of them."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from benchmark_platform.cli.main import main
from benchmark_platform.itembank.config import ItemBankConfig, bank_item_prefix
from benchmark_platform.itembank.derived_anchors import derive_anchor_set
from benchmark_platform.itembank.read import ItemBankError, parse_key, read_item_bank
from benchmark_platform.itembank.run import import_discipline
from benchmark_platform.spec import load_spec
from benchmark_platform.store import Database
from benchmark_platform.store.drop import drop_spec, spec_row_counts

HEADER = ["id", "category", "question", "options", "answer"]


def bank_rows(n_geo: int = 6, n_hist: int = 5) -> list[list[str]]:
    rows = [
        [
            f"g{i}",
            "geo",
            f"Which river is number {i}?",
            json.dumps(["Rhône", "Loire", "Seine"], ensure_ascii=False),
            "B",
        ]
        for i in range(n_geo)
    ]
    rows += [[f"h{i}", "hist", f"Which year is number {i}?", json.dumps(["1789", "1815"]), "A"] for i in range(n_hist)]
    return rows


def write_csv(path: Path, rows: list[list[str]], encoding: str = "utf-8") -> Path:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([HEADER, *rows])
    path.write_bytes(buffer.getvalue().encode(encoding))
    return path


def write_spec(folder: Path, name: str = "own_bank", bank: str = "items.csv", **extra: object) -> Path:
    raw = {
        "name": name,
        "description": "a test bank",
        "seed": 1,
        "taxonomy": [{"name": "All", "children": [{"name": "Geo", "key": "geo"}, {"name": "Hist", "key": "hist"}]}],
        "item_bank": {
            "id": "own",
            "path": bank,
            "licence": "CC0-1.0",
            "attribution": "a test",
            "columns": {"source": None},
            "categories": {"geo": "geo", "hist": "hist"},
            "stratum_key": "category",
            **extra,
        },
        "release": {"version": "v0.1", "licence": "CC0-1.0", "canary": "CANARY own bank"},
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), "utf-8")
    return path


def config(path: Path, **extra: object) -> ItemBankConfig:
    return ItemBankConfig.model_validate(
        {
            "id": "own",
            "path": path,
            "licence": "CC0-1.0",
            "attribution": "a test",
            "columns": {"source": None},
            "categories": {"geo": "geo", "hist": "hist", "phil": "hist"},
            "stratum_key": "category",
            **extra,
        }
    )


@pytest.mark.parametrize(
    ("value", "fmt", "expected"),
    [
        ("B", "letter", 1),
        (" c ", "letter", 2),
        ("", "letter", None),
        ("CD", "letter", None),
        ("A)", "letter", None),
        ("D", "letter", None),
        (1, "index", 1),
        ("2", "index", 2),
        ("", "index", None),
        ("1.0", "index", None),
        (True, "index", None),
        (3, "index", None),
        ("-1", "index", None),
    ],
)
def test_a_key_is_exactly_one_letter_or_index(value, fmt, expected):
    got = parse_key(value, 3, fmt)
    assert got == expected if expected is not None else isinstance(got, str)


def test_spec_check_opens_the_bank_and_names_each_bad_key_row(tmp_path, capsys):
    rows = bank_rows()
    rows[1][4], rows[3][4] = "", "CD"
    write_csv(tmp_path / "items.csv", rows)
    assert main(["spec", "check", str(write_spec(tmp_path))]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: bank_items: item_bank.path: ")
    assert f"{tmp_path / 'items.csv'}:3: field 'answer': '' is not exactly one of the option letters A-C" in err[0]
    rows[1][4] = "A"
    write_csv(tmp_path / "items.csv", rows)
    assert main(["spec", "check", str(write_spec(tmp_path))]) == 2
    assert "items.csv:5: field 'answer': 'CD'" in capsys.readouterr().err


def test_an_encoding_is_declared_or_the_file_is_refused(tmp_path):
    path = write_csv(tmp_path / "items.csv", bank_rows(), encoding="cp1252")
    with pytest.raises(ItemBankError, match=r"items.csv:2: not UTF-8 \(byte 0xf4 .*set item_bank.encoding"):
        read_item_bank(config(path), tmp_path)
    bank = read_item_bank(config(path, encoding="cp1252"), tmp_path)
    assert bank.items[0].options[0] == "Rhône"
    mixed = path.read_bytes() + 'g99,geo,Où?,"[""a"", ""b""]",A\n'.encode()  # a UTF-8 row in a cp1252 file
    path.write_bytes(mixed)
    with pytest.raises(ItemBankError, match=r"items.csv:13: not cleanly cp1252: bytes c3 b9 .* mixes encodings"):
        read_item_bank(config(path, encoding="cp1252"), tmp_path)
    with pytest.raises(ItemBankError, match="not UTF-8"):
        read_item_bank(config(path), tmp_path)


def test_a_field_over_the_csv_limit_is_one_line_naming_the_row(tmp_path):
    rows = bank_rows()
    rows[2][2] = "x" * (200 * 1024)
    path = write_csv(tmp_path / "items.csv", rows)
    with pytest.raises(ItemBankError) as info:
        read_item_bank(config(path), tmp_path)
    assert str(info.value) == f"{path}:4: unreadable CSV (a field longer than 128 KiB)"


def test_spec_paths_resolve_from_the_spec_folder_whatever_the_cwd(tmp_path):
    folder = tmp_path / "mybank"
    folder.mkdir()
    write_csv(folder / "items.csv", bank_rows())
    write_spec(folder)
    code = "from benchmark_platform.cli.main import main; raise SystemExit(main(['spec', 'check', 'mybank/own_bank.yaml']))"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert load_spec(folder / "own_bank.yaml").directory == folder.resolve()


def test_derived_anchors_for_any_category_size():
    rng = __import__("numpy").random.default_rng(0)
    items = pl.DataFrame(
        {
            "question_id": [f"{c}{i}" for c, n in (("a", 1), ("b", 5), ("c", 40)) for i in range(n)],
            "question": [
                f"question {c} {i} about something" for c, n in (("a", 1), ("b", 5), ("c", 40)) for i in range(n)
            ],
            "category": [c for c, n in (("a", 1), ("b", 5), ("c", 40)) for _ in range(n)],
            "src": [c for c, n in (("a", 1), ("b", 5), ("c", 40)) for _ in range(n)],
        }
    )
    for category, k in (("a", 1), ("b", 3), ("c", 10)):
        anchors, _ = derive_anchor_set(category, items, k, rng)
        assert anchors.anchor_items and anchors.strata and anchors.k_total == k
        if category != "a":
            assert {p.y_U for p in anchors.pair_labels} == {0, 1}
        assert all(s.lower == 0 for s in anchors.strata) == (category != "c")
    done = subprocess.run(
        [sys.executable, "-m", "benchmark_platform.itembank.derived_anchors", "--help"], capture_output=True, text=True
    )
    assert "K_d is each category's share of TOTAL" in done.stdout and "examples/my_bank/spec.yaml" in done.stdout


def stored(db: Database, spec: str) -> dict[str, str]:
    rows = db.query("SELECT item_id, discipline FROM items WHERE spec = %s", (spec,))
    return {r["item_id"]: r["discipline"] for r in rows}


def test_an_item_that_moves_category_follows_and_two_specs_share_a_bank_file(db, tmp_path):
    path = write_csv(tmp_path / "items.csv", bank_rows())
    cfg = config(path)
    for discipline in ("geo", "hist"):
        import_discipline(db, "own", tmp_path, cfg, discipline)
    rows = bank_rows()
    rows[0][1] = "hist"  # g0 moves geo -> hist; the hist partition imports first, as a range's order may be
    write_csv(path, rows)
    for discipline in ("hist", "geo"):
        import_discipline(db, "own", tmp_path, cfg, discipline)
    assert stored(db, "own")["own-g0"] == "hist"
    assert db.query("SELECT discipline FROM item_bank_rows WHERE item_id = 'own-g0'") == [{"discipline": "hist"}]
    for discipline in ("geo", "hist"):  # a second spec on the same file: its own rows, the first spec's untouched
        import_discipline(db, "own_half", tmp_path, cfg, discipline)
    assert set(stored(db, "own_half")) == {f"{bank_item_prefix('own_half', 'own')}{r[0]}" for r in rows}
    assert len(stored(db, "own")) == len(rows)
    assert spec_row_counts(db, "own_half") == {"item_bank_rows": 11, "items": 11}
    assert drop_spec(db, "own_half") == {"item_bank_rows": 11, "items": 11}
    assert stored(db, "own_half") == {} and len(stored(db, "own")) == len(rows)
    drop_spec(db, "own")


def test_spec_drop_asks_for_confirmation(db, tmp_path, capsys, monkeypatch):
    # `spec drop` exports what Dagster reads (prepare_environment): set here, so the test leaves the environment as it was
    for name in ("BENCHMARK_PLATFORM_DAGSTER_DATABASE_URL", "DAGSTER_HOME", "DAGSTER_DISABLE_TELEMETRY"):
        monkeypatch.setenv(name, os.environ.get(name, ""))
    monkeypatch.setenv("BENCHMARK_PLATFORM_DATABASE_URL", db.url)
    import_discipline(db, "own_drop", tmp_path, config(write_csv(tmp_path / "items.csv", bank_rows())), "geo")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["spec", "drop", "own_drop"]) == 2
    assert "needs confirmation: rerun with --yes" in capsys.readouterr().err and stored(db, "own_drop")
    assert main(["spec", "drop", "own_drop", "--yes"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dropped spec own_drop: 12 rows") and not stored(db, "own_drop")
    assert "wiped Dagster's materialisation history of 0 assets of own_drop" in out


def test_recorded_answers_follow_the_key_rule(tmp_path):
    from benchmark_platform.evaluation.importers import read_results_import

    write_csv(tmp_path / "items.csv", bank_rows())
    answers = tmp_path / "answers.csv"
    answers.write_text("model,id,answer\nm1,g0,B\nm1,g1,-\nm1,h0,b\nm2,g0,A\n", "utf-8")
    entry = {"format": "answers_csv", "path": "answers.csv", "item_bank": "own", "no_answer": "-"}
    spec = load_spec(_with_import(write_spec(tmp_path), entry))
    frame = read_results_import(spec.evaluation.imports[0], spec.directory).sort("model", "item_id")
    assert frame.select("model", "item_id", "prediction", "correct").rows() == [
        ("m1", "own_bank.own-g0", "B", True),
        ("m1", "own_bank.own-g1", None, False),
        ("m1", "own_bank.own-h0", "B", False),
        ("m2", "own_bank.own-g0", "A", False),
    ]
    good = answers.read_text("utf-8")
    for bad in ("m1,g2,\n", "m1,g2,AB\n", "m1,zz,A\n"):
        answers.write_text(good + bad, "utf-8")
        with pytest.raises(ValueError, match=r"answers.csv:6: field '(answer|id)'"):
            read_results_import(spec.evaluation.imports[0], spec.directory)


def _with_import(path: Path, entry: dict[str, object]) -> Path:
    raw = yaml.safe_load(path.read_text("utf-8"))
    raw["evaluation"] = {"imports": [entry]}
    path.write_text(yaml.safe_dump(raw, sort_keys=False), "utf-8")
    return path


def test_the_check_of_a_bank_spec_loads_no_dagster(tmp_path):
    write_csv(tmp_path / "items.csv", bank_rows())
    spec = write_spec(tmp_path)
    code = (
        "import sys\nfrom benchmark_platform.cli.main import main\n"
        f"assert main(['spec', 'check', {str(spec)!r}]) == 0\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'dagster', 'faiss', 'sklearn', 'spacy'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
    assert "note: geo: no anchor files" in done.stdout


def test_spec_check_names_the_stage_file_and_field_of_an_unmeetable_lower_quota(tmp_path, capsys):
    write_csv(tmp_path / "items.csv", bank_rows())
    spec_file = write_spec(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "benchmark_platform.itembank.derived_anchors", str(spec_file), "6"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    strata = tmp_path / "anchors" / "hist" / "strata.csv"
    rows = list(csv.DictReader(strata.open(encoding="utf-8")))
    rows[0]["lower"] = rows[0]["upper"] = "9"
    with strata.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    header = strata.with_name("anchors.yaml")
    header.write_text(re.sub(r"k_total: \d+", "k_total: 9", header.read_text("utf-8")), "utf-8")
    assert main(["spec", "check", str(spec_file)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: selected_items: {strata}: stratum 'hist' field 'lower': needs at least L_h=9 items but the bank has "
        "5 of discipline 'hist' in it (lower it, or map more of the bank's stratum keys to it in `keys`)"
    )


def test_no_answers_on_released_items_is_a_valid_state_that_clears_old_analyses(db, tmp_path):
    from benchmark_platform.analysis.run import NoAnswersError, analyse_spec

    write_csv(tmp_path / "items.csv", bank_rows())
    spec = load_spec(write_spec(tmp_path, name="own_no_answers"))
    with db.transaction() as conn, conn.cursor() as cur:  # an earlier run's analysis
        cur.execute(
            "INSERT INTO analysis_tables (spec, name, row_index, row) VALUES (%s, 'stale', 0, '{}')", (spec.name,)
        )
    with pytest.raises(NoAnswersError, match="no evaluation answers on released items"):
        analyse_spec(db, spec, print)
    assert db.query("SELECT * FROM analysis_tables WHERE spec = %s", (spec.name,)) == []


def test_a_manual_review_discipline_released_on_request_respects_its_k(db, tmp_path):
    """sql/0320: 6 audit survivors of a discipline whose selection went to manual review; its anchors gave K_d=2:
    include_manual_review releases 2 of them (item-id order), never all 6; without anchors (no K_d) all survivors."""
    spec = "own_manual_k"
    import_discipline(db, spec, tmp_path, config(write_csv(tmp_path / "items.csv", bank_rows())), "geo")
    ids = sorted(stored(db, spec))
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            "INSERT INTO audit_runs (spec, discipline, inputs_hash) VALUES (%s, 'geo', 'h') RETURNING audit_run_id",
            (spec,),
        )
        run = cur.fetchone()[0]
        for item_id in ids:
            cur.execute(
                "INSERT INTO audit_findings (audit_run_id, item_id, agent, agent_version, severity) "
                "VALUES (%s, %s, 'structure', '1', 'pass')",
                (run, item_id),
            )
        cur.execute(
            "INSERT INTO anchor_imports (spec, discipline, file_name, content_hash, is_example, k_total) "
            "VALUES (%s, 'geo', 'anchors.yaml', 'c', true, 2) RETURNING import_id",
            (spec,),
        )
        import_id = cur.fetchone()[0]
        cur.execute(
            "INSERT INTO selections (spec, discipline, target, import_id, method, k_total, manual_review) "
            "VALUES (%s, 'geo', 'items', %s, 'manual_review', 2, 'empty reference bank')",
            (spec, import_id),
        )

    def released(include: bool) -> list[str]:
        rows = db.query("SELECT item_id FROM released_items(%s, %s, false) ORDER BY item_id", (spec, include))
        return [r["item_id"] for r in rows]

    assert released(False) == [] and released(True) == ids[:2]
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("UPDATE selections SET import_id = NULL WHERE spec = %s", (spec,))
    assert released(True) == ids
    drop_spec(db, spec)

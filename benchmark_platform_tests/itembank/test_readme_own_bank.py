"""Issue 32 end to end: the README's "Your own bank" commands, run literally (as subprocesses, in their order) on a bank
this test writes: the bank in cp1252 (declared), the answers in UTF-8, the raters' sheet in cp1252, a category of
5 items. The release verifies and rebuilds byte-identical; its per-item reasons name the A1 word, the human rating
and K_d; the leaderboard has the three models; every count the datasheet states agrees with the release's tables."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from benchmark_platform.paths import PROJECT_ROOT

pytestmark = pytest.mark.slow  # runs the README's own-bank commands as subprocesses

EXAMPLE = PROJECT_ROOT / "examples" / "my_bank"
BANK = [  # id, category, question, options, key, difficulty
    *[
        (
            f"g{i}",
            "geography",
            f"Quelle rivière traverse la ville numéro {i} ?",
            ["Rhône", "Loire", "Seine", "Marne"],
            "ABCD"[i % 4],
            "easy",
        )
        for i in range(9)
    ],
    (
        "g9",
        "geography",
        "Which famous bridge crosses the Seine near the Louvre?",
        ["Pont des Arts", "Tower Bridge", "Rialto", "Charles Bridge"],
        "A",
        "easy",
    ),
    *[
        (
            f"h{i}",
            "history",
            f"En quelle année l'événement numéro {i} eut-il lieu ?",
            ["1789", "1815", "1848", "1870"],
            "ABCD"[(i + 1) % 4],
            "medium",
        )
        for i in range(8)
    ],
    *[
        (
            f"s{i}",
            "science",
            f"Which element is number {i} in this list of gases?",
            ["Hydrogen", "Helium", "Neon", "Argon"],
            "ABCD"[(i + 2) % 4],
            "hard",
        )
        for i in range(5)
    ],
]


def readme_commands() -> list[str]:
    """The commands of the README's "Your own bank" section: its first bash block, comments stripped."""
    text = (PROJECT_ROOT / "README.md").read_text("utf-8")
    section = text.split("## Your own bank", 1)[1].split("\n## ", 1)[0]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def write_bank(folder: Path) -> None:
    folder.mkdir(parents=True)
    with (folder / "items.csv").open("w", encoding="cp1252", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\r\n")
        writer.writerow(["id", "category", "question", "options", "answer", "difficulty", "author"])
        for iid, cat, q, options, key, level in BANK:
            writer.writerow([iid, cat, q, json.dumps(options, ensure_ascii=False), key, level, "tester"])
    with (folder / "answers.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["model", "id", "answer"])
        for n, (model, skill) in enumerate((("strong", 5), ("middling", 3), ("weak", 1))):
            for i, (iid, _, _, _, key, _) in enumerate(BANK):
                right = (i + n) % 6 < skill
                writer.writerow([model, iid, key if right else "-" if i % 7 == 0 else "ABCD"["ABCD".index(key) - 1]])
    with (folder / "my_bank_ratings.csv").open("w", encoding="cp1252", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\r\n")
        writer.writerow(["item_id", "question_text", "options", "correct_answer", "answer_correct", "reviewer"])
        for iid, _, q, options, key, _ in BANK:
            if iid in ("h3", "g1"):
                for who in ("r1", "r2"):
                    writer.writerow(
                        [iid, q, json.dumps(options, ensure_ascii=False), key, 0 if iid == "h3" else 1, who]
                    )
    spec = yaml.safe_load((EXAMPLE / "spec.yaml").read_text("utf-8"))
    spec["item_bank"]["encoding"] = "cp1252"
    (folder / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True), "utf-8")


def datasheet_disagreements(release: Path) -> list[str]:
    """Every count the datasheet states about items, recomputed from the release's own tables; what disagrees."""
    text = (release / "datasheet.md").read_text("utf-8")
    items = pl.read_parquet(release / "data" / "items.parquet")
    outcomes = pl.read_parquet(release / "data" / "item_outcomes.parquet")
    spec = json.loads((release / "spec.json").read_text("utf-8"))
    leaves = [c.get("key") for node in spec["taxonomy"] for c in node.get("children", [])]
    wrong = []

    def expect(what: str, stated: int, actual: int) -> None:
        if stated != actual:
            wrong.append(f"{what}: the datasheet says {stated}, the tables {actual}")

    found = re.search(r"\*\*Instances\.\*\* (\d+) multiple-choice questions in (\d+) of the taxonomy's (\d+)", text)
    assert found, "no Instances sentence"
    expect("released items", int(found[1]), items.height)
    expect("disciplines with items", int(found[2]), items["discipline"].n_unique())
    expect("disciplines", int(found[3]), len(leaves))
    found = re.search(
        r"From import to release\.\*\* (\d+) imported from an item bank and (\d+) generated -> (\d+) audited -> (\d+) "
        r"dropped by the audit -> (\d+) selected -> (\d+) released, in (\d+) of (\d+) disciplines",
        text,
    )
    assert found, "no From import to release sentence"
    totals = {
        "imported": int((outcomes["origin"] == "item_bank").sum()),
        "generated": int((outcomes["origin"] == "generated").sum()),
        **{c: int(outcomes[c].sum()) for c in ("audited", "dropped", "selected", "released")},
    }
    for (name, actual), stated in zip(totals.items(), found.groups()[:6], strict=True):
        expect(f"total {name}", int(stated), actual)
    expect("released = items.parquet", totals["released"], items.height)
    expect("disciplines released", int(found[7]), items["discipline"].n_unique())
    table = text.split("| discipline | imported |", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    for row in table:
        cells = [c.strip() for c in row.strip("|").split("|")]
        own = outcomes.filter(pl.col("discipline") == cells[0])
        for name, stated in zip(
            ("imported", "generated", "audited", "dropped", "selected", "released"), cells[1:7], strict=True
        ):
            if name in ("imported", "generated"):
                actual = int((own["origin"] == ("item_bank" if name == "imported" else "generated")).sum())
            else:
                actual = int(own[name].sum())
            expect(f"{cells[0]} {name}", int(stated), actual)
    per_discipline = text.split("| discipline | items |", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    counts = dict(items.group_by("discipline").len().iter_rows())
    for row in per_discipline:
        name, stated = (c.strip() for c in row.strip("|").split("|"))
        expect(f"{name} items", int(stated), counts.get(name, 0))
    return wrong


@pytest.fixture(scope="module")
def followed(fresh_database, tmp_path_factory):
    """Each README command, with the example's folder replaced by the test's bank and releases/ by a scratch root."""
    work = tmp_path_factory.mktemp("own_bank")
    bank, root = work / "mybank", work / "releases"
    write_bank(bank)
    env = {**__import__("os").environ, "BENCHMARK_PLATFORM_DATABASE_URL": fresh_database("bp_own_bank")}
    env.pop("BENCHMARK_PLATFORM_DAGSTER_DATABASE_URL", None)
    outputs = []
    commands = readme_commands()
    for command in commands:
        command = command.replace("examples/my_bank", str(bank)).replace("releases/", f"{root}/")
        args = command.split()
        if args[0] == "benchmark-platform":
            args = [sys.executable, "-m", "benchmark_platform.cli.main", *args[1:]]
            if args[3] == "run":
                args += ["--releases-dir", str(root)]
            if args[3:5] == ["release", "rebuild"]:
                args += ["--root", str(root)]
        elif args[0] == "python":
            args[0] = sys.executable
        done = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        outputs.append(done.stdout)
    return commands, outputs, root / "my_bank" / "v0.1"


def test_the_readme_steps_build_a_release_with_reasons_and_a_leaderboard(followed):
    commands, outputs, release = followed
    assert len(commands) == 6 and commands[3].startswith("benchmark-platform run --spec examples/my_bank/spec.yaml")
    assert "all hashes match" in outputs[4] and "rebuilt byte-identical" in outputs[5]
    outcomes = pl.read_parquet(release / "data" / "item_outcomes.parquet")
    reason = dict(outcomes.select(pl.col("item_id").str.replace("my_bank-", ""), "reason").iter_rows())
    assert reason["g9"] == "dropped by the audit: critical failure: A1_lexical_hygiene (vague terms: famous)"
    assert reason["h3"].startswith("dropped by the audit: human rating: the key is wrong (answer_correct 0 < 0.5")
    assert not reason["g1"].startswith("dropped")  # rated right: no veto
    not_selected = [r for r in reason.values() if r.startswith("not selected: K_d=")]
    assert not_selected and all(
        re.fullmatch(r"not selected: K_d=\d+ reached \(\d+ of \d+ audit survivors chosen\)", r) for r in not_selected
    )
    items = pl.read_parquet(release / "data" / "items.parquet")
    assert set(items["discipline"]) == {"geography", "history", "science"}  # the 5-item category too
    assert items.filter(pl.col("discipline") == "science")["difficulty"].to_list()[0] == "hard"
    assert "Rhône" in pl.read_parquet(release / "data" / "options.parquet")["text"].to_list()  # cp1252, decoded
    board = pl.read_parquet(release / "data" / "leaderboard.parquet")
    assert set(board["model"]) == {"strong", "middling", "weak", "random-baseline"}
    assert board.sort("rank")["model"][0] == "strong"
    provenance = pl.read_parquet(release / "data" / "item_provenance.parquet")
    assert json.loads(provenance["metadata"][0]) == {"author": "tester"}


def test_every_count_the_datasheet_states_agrees_with_the_release_tables(followed, tmp_path):
    _, _, release = followed
    assert datasheet_disagreements(release) == []
    # the check bites: one count changed in a copy of the datasheet is reported
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    text = (copy / "datasheet.md").read_text("utf-8")
    (copy / "datasheet.md").write_text(
        re.sub(r"-> (\d+) dropped", lambda m: f"-> {int(m[1]) + 1} dropped", text), "utf-8"
    )
    assert datasheet_disagreements(copy) == ["total dropped: the datasheet says 3, the tables 2"]

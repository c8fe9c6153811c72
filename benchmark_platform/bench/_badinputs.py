"""The bad-input corpus of the faults bench (issue 22): files a user may hand the CLI by mistake, each run through
the real `benchmark-platform` entry point. A case passes when the command exits non-zero with exactly one `error:`
line on stderr and no traceback, and nothing stored changed (checked by the caller on a gold sheet imported first).
"""

from __future__ import annotations

import contextlib
import io
import json
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HEADER = "uuid,question_text,options,correct_answer,answer_correct,not_ambiguous\n"
GOOD_ROW = 'q1,What is the capital of Burgundy?,"[""Dijon"", ""Lyon"", ""Paris"", ""Nice""]",A,1,0\n'


def gold_row(options: str = '"[""a"", ""b"", ""c""]"', key: str = "A", rating: str = "1", ref: str = "q1") -> str:
    return f"{ref},A question?,{options},{key},{rating},1\n"


@dataclass(frozen=True)
class Case:
    name: str
    argv: list[str]


@dataclass(frozen=True)
class Outcome:
    case: str
    code: int
    stderr: str

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith("error:")]

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stderr or "Stack Trace:" in self.stderr

    @property
    def clear(self) -> bool:
        return self.code != 0 and len(self.error_lines) == 1 and not self.traceback


def run_case(case: Case, main: Callable[[list[str]], int]) -> Outcome:
    """The CLI's `main` in this process, stderr captured; an exception escaping it is a traceback."""
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main(case.argv)
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
        except BaseException:
            err.write(traceback.format_exc())
            code = 1
    return Outcome(case.name, code, err.getvalue())


def _write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def gold_cases(root: Path) -> list[Case]:
    d = root / "gold"
    sheet = lambda name, data: _write(d / f"{name}.csv", data)  # noqa: E731
    rows = {
        "empty_file": b"",
        "blank_file": b"  \n\n",
        "header_only": HEADER,
        "undecodable_bytes": HEADER.encode() + b"q1,\x81\x8d\x8f\x90\x9d,[1],A,1,1\n",
        "rating_nan": HEADER + gold_row(rating="nan"),
        "rating_inf": HEADER + gold_row(rating="inf"),
        "rating_minus_inf": HEADER + gold_row(rating="-inf"),
        "rating_7": HEADER + gold_row(rating="7"),
        "rating_minus_3": HEADER + gold_row(rating="-3"),
        "rating_text": HEADER + gold_row(rating="good"),
        "rating_1e400": HEADER + gold_row(rating="1e400"),
        "missing_id": HEADER + gold_row(ref=""),
        "missing_question": HEADER + 'q1,,"[""a""]",A,1,1\n',
        "options_dict": HEADER + gold_row(options='"{""a"": 1}"'),
        "options_empty_list": HEADER + gold_row(options='"[]"'),
        "options_garbage": HEADER + gold_row(options='"[[[ not a list"'),
        "options_100k_brackets": HEADER + gold_row(options="[" * 50_000 + "]" * 50_000),
        "options_40_deep": HEADER + gold_row(options="[" * 40 + "1" + "]" * 40),
        "options_blank": HEADER + gold_row(options=""),
        "answer_letter_z": HEADER + gold_row(key="Z"),
        "answer_blank": HEADER + gold_row(key=""),
        "answer_beyond_options": HEADER + gold_row(key="D"),
        "nul_byte": HEADER + gold_row() + "q2,Q\x00,[1],A,1,1\n",
        "field_over_csv_limit": HEADER + gold_row(options='"[""' + "x" * 200_000 + '""]"'),
        "binary_png": b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4,
        "unterminated_quote": HEADER + 'q1,"never closed,[1],A,1,1\n',
        "no_header_match": "a,b,c\n1,2,3\n",
    }
    cases = [Case(f"gold_{name}", ["audit", "import-gold", str(sheet(name, data))]) for name, data in rows.items()]
    good = sheet("good_extra", HEADER + GOOD_ROW)
    too_many = sheet("three_rows", HEADER + gold_row(ref="a") + gold_row(ref="b") + gold_row(ref="c"))
    cases += [
        Case("gold_over_byte_limit", ["audit", "import-gold", str(good), "--max-bytes", "10"]),
        Case("gold_over_row_limit", ["audit", "import-gold", str(too_many), "--max-rows", "2"]),
        Case("gold_zero_limit", ["audit", "import-gold", str(good), "--max-depth", "0"]),
        Case("gold_missing_file", ["audit", "import-gold", str(d / "no_such.csv")]),
        Case("gold_directory", ["audit", "import-gold", str(d)]),
        Case("gold_good_then_bad_atomic", ["audit", "import-gold", str(good), str(d / "rating_nan.csv")]),
        Case("gold_same_name_twice", ["audit", "import-gold", str(good), str(good)]),
        Case("kappa_empty_sheet", ["audit", "kappa", str(d / "empty_file.csv")]),
        Case("kappa_nested_options", ["audit", "kappa", str(d / "options_100k_brackets.csv")]),
        Case("kappa_rating_inf", ["audit", "kappa", str(d / "rating_inf.csv")]),
    ]
    return cases


def spec_cases(root: Path, wine_spec_text: str) -> list[Case]:
    d = root / "specs"
    spec = lambda name, data: ["run", "--spec", str(_write(d / name / "spec.yaml", data))]  # noqa: E731
    outside = _write(root / "outside" / "taxonomy.yaml", "- {name: Wine}\n")
    _write(d / "include_latin1" / "part.yaml", "name: caf\xe9\n".encode("latin-1"))
    return [
        Case("spec_not_utf8", spec("latin1", "name: vin\ndescription: caf\xe9\n".encode("latin-1"))),
        Case("spec_include_etc_hostname", spec("etc", "name: x\ntaxonomy: !include /etc/hostname\n")),
        Case("spec_include_parent", spec("parent", "name: x\ntaxonomy: !include ../../outside/taxonomy.yaml\n")),
        Case("spec_include_absolute_outside", spec("absolute", f"name: x\ntaxonomy: !include {outside}\n")),
        Case("spec_include_missing", spec("missing", "name: x\ntaxonomy: !include nowhere.yaml\n")),
        Case("spec_include_not_utf8", spec("include_latin1", "name: x\nextra: !include part.yaml\n")),
        Case("spec_invalid_yaml", spec("yaml", "name: [unclosed\n")),
        Case("spec_a_list", spec("list", "- a\n- b\n")),
        Case("spec_empty", spec("empty", "")),
        Case("spec_unknown_field", spec("unknown", wine_spec_text + "\nflavour: oaky\n")),
        Case("spec_wrong_type", spec("wrongtype", wine_spec_text.replace("seed: ", "seed: not-a-number #", 1))),
        Case("spec_100k_brackets", spec("deep", "name: " + "[" * 100_000 + "]" * 100_000 + "\n")),
        Case("spec_no_such_file", ["run", "--spec", str(d / "absent" / "spec.yaml")]),
        Case("spec_no_such_bundled", ["run", "--spec", "no_such_bundled_spec"]),
    ]


def release_cases(root: Path) -> list[Case]:
    """Damaged copies of a minimal release folder (the checks never need a database)."""
    d = root / "releases" / "wine"
    manifest = {"benchmark": "wine", "version": "v9.0", "files": {"data/items.parquet": {"sha256": "0" * 64}}}
    text = json.dumps(manifest)

    def release(version: str, manifest_bytes: bytes | str, items: bytes | None = None) -> str:
        folder = d / version
        _write(folder / "manifest.json", manifest_bytes)
        if items is not None:
            _write(folder / "data" / "items.parquet", items)
        return str(folder)

    good_items_missing = release("v1.0", text)
    cases = [
        Case("release_truncated_manifest", ["release", "verify", release("v1.1", text[: len(text) // 2])]),
        Case("release_manifest_empty", ["release", "verify", release("v1.2", b"")]),
        Case("release_manifest_a_list", ["release", "verify", release("v1.3", "[]")]),
        Case("release_manifest_no_files", ["release", "verify", release("v1.4", '{"benchmark": "wine"}')]),
        Case("release_manifest_not_utf8", ["release", "verify", release("v1.5", b'{"benchmark": "\xff\xfe"}')]),
        Case("release_manifest_files_a_list", ["release", "verify", release("v1.6", '{"files": []}')]),
        Case("release_no_release_here", ["release", "verify", str(root / "nowhere")]),
        Case("release_diff_missing", ["release", "diff", good_items_missing, str(d / "v7.7")]),
        Case(
            "release_diff_corrupt_parquet",
            ["release", "diff", release("v2.0", text, b"PAR1 garbage"), release("v2.1", text, b"nope")],
        ),
        Case("release_list_damaged", ["release", "list", "--root", str(root / "releases")]),
        Case("release_rebuild_absent", ["release", "rebuild", "v8.8", "--root", str(root / "releases")]),
        Case("release_verify_tampered_file", ["release", "verify", release("v3.0", text, b"not the recorded bytes")]),
    ]
    return cases


def corpus(root: Path, wine_spec_text: str) -> list[Case]:
    return gold_cases(root) + spec_cases(root, wine_spec_text) + release_cases(root)

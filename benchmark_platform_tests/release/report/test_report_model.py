"""The report's pure parts: the safe Markdown renderer, the data it is built from (deterministic, complete, degrading
when a table is absent) and `release view` serving it over real HTTP on loopback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import polars as pl
from report_synthetic import CANARY, DISCIPLINES, MISSING, MODELS, synthetic_summary, write_report

from benchmark_platform.release.datasheet import ReleaseSummary
from benchmark_platform.release.report import REPORT_FILES, report_files
from benchmark_platform.release.report.markdown import render
from benchmark_platform.release.report.model import ITEM_FIELDS, report_data

CLI = Path(sys.executable).with_name("benchmark-platform")


def _data(files: dict[str, bytes]) -> dict:
    text = files["report/data.js"].decode()
    return json.loads(text[text.index("window.REPORT_DATA = ") + 21 :].rstrip().removesuffix(";"))


def test_markdown_escapes_html_and_keeps_only_web_links():
    html = render(
        "# Title <b>\n\n| a | b |\n|---|---|\n| <script>alert(1)</script> | `x<y` |\n\n"
        "- **bold** and _em_ [ok](https://example.org/a) [bad](javascript:alert(1))\n"
        "  continued line\n  - nested `code`\n"
    )
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<h1>Title &lt;b&gt;</h1>" in html
    assert "<code>x&lt;y</code>" in html and "<code>code</code>" in html
    assert '<a href="https://example.org/a" rel="noopener">ok</a>' in html
    assert "javascript:" not in html.split("[bad]")[0] and 'href="javascript' not in html
    assert "<strong>bold</strong>" in html and "<em>em</em>" in html and "continued line" in html
    assert "<ul><li>" in html and "<ul><li>nested" in html


def test_report_is_deterministic_and_carries_the_canary(tmp_path):
    a, b = report_files(synthetic_summary(300), "# D\n"), report_files(synthetic_summary(300), "# D\n")
    assert sorted(a) == sorted(REPORT_FILES) and a == b
    for name, data in a.items():
        assert CANARY.encode() in data, name
    assert b"fetch(" not in a["report/app.js"] and b"http" not in a["report/index.html"]  # no network, no CDN
    write_report(synthetic_summary(300), tmp_path)
    assert (tmp_path / "report" / "index.html").read_bytes() == a["report/index.html"]


def test_data_covers_every_page_and_marks_the_missing_cell():
    data = _data(report_files(synthetic_summary(500), "# D\n"))
    heat = data["heatmap"]
    assert heat["disciplines"] == DISCIPLINES and len(heat["models"]) == MODELS
    missing = [
        (m, d)
        for i, m in enumerate(heat["models"])
        for j, d in enumerate(heat["disciplines"])
        if not heat["cells"][i][j]
    ]
    assert missing == [MISSING]
    board = data["leaderboard"]
    assert {"answered", "missing", "unparsed", "tier"} <= set(board["columns"])
    assert data["stability"]["pairs"]["adjacent_pairs"] == MODELS - 1
    assert data["audit"]["suspect"]["columns"] == ["item_id", "reason"]
    assert len(data["items"]) == 500 and data["lookups"]["item_fields"] == list(ITEM_FIELDS)
    item = dict(zip(ITEM_FIELDS, data["items"][0], strict=True))
    assert item["id"] == "item00000" and len(item["options"]) == 10 and "suspect" in item["status"]
    fact = data["facts"][item["options"][item["answer"]][1][0]]
    assert data["lookups"]["documents"][fact[5]] == "https://example.org/records/0"
    assert data["datasheet_html"] == "<h1>D</h1>\n"


def test_data_degrades_without_the_optional_tables():
    """A release without the columns and analyses of later stages (answered/missing, suspect items, tiers) and
    without any evaluation still gives a report (the page says what is absent)."""
    full = synthetic_summary(50, suspect=False, counts=False)
    data = _data(report_files(full, ""))
    assert "answered" not in data["leaderboard"]["columns"] and data["audit"]["suspect"] is None
    bare = ReleaseSummary("bare", "v0", "", "CC0-1.0", "c", [("only", "only")], {"items": full.items.head(3)}, 0)
    data = report_data(bare, "")
    assert data["leaderboard"] == {"columns": [], "rows": []} and data["heatmap"]["models"] == []
    assert data["stability"]["pairs"] is None and len(data["items"]) == 3


def test_sealed_rows_never_reach_the_report():
    """The report is built from the open tables only: an item id that is not among them appears nowhere."""
    summary = synthetic_summary(40)
    sealed = {"item00003", "item00007"}
    tables = {
        name: frame.filter(~pl.col("item_id").is_in(sealed)) if "item_id" in frame.columns else frame
        for name, frame in summary.tables.items()
    }
    open_summary = ReleaseSummary(
        *[getattr(summary, f) for f in ("spec_name", "version", "description", "licence", "canary", "disciplines")],
        tables,
        2,
    )
    data_js = report_files(open_summary, "")["report/data.js"]
    assert all(i.encode() not in data_js for i in sealed) and b"item00004" in data_js


def test_release_view_serves_the_report_on_loopback(tmp_path):
    write_report(synthetic_summary(20), tmp_path)
    process = subprocess.Popen(
        [str(CLI), "release", "view", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        line = process.stdout.readline()
        url = line.split(" at ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/report/index.html")
        with urllib.request.urlopen(url) as response:
            assert b'<script src="data.js"></script>' in response.read()
        with urllib.request.urlopen(url.replace("index.html", "data.js")) as response:
            assert CANARY.encode() in response.read()
    finally:
        process.send_signal(signal.SIGINT)  # what Ctrl-C sends
        assert process.wait() == 0


def test_release_view_refuses_a_folder_without_a_report(tmp_path):
    done = subprocess.run([str(CLI), "release", "view", str(tmp_path)], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stderr.startswith("error: ") and "report/index.html" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1

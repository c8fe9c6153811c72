"""The release's report: `report/index.html` and the files beside it, a static page that opens from the file system or
any static host (no server, no network, no fetch: the data is a script, `data.js`, that sets a global).

The HTML, JavaScript and CSS are the files next to this module, copied with the canary in a leading comment; only
`data.js` depends on the release (model.report_data). Pure: the same tables give the same bytes."""

from __future__ import annotations

import json
from importlib import resources

from benchmark_platform.release.datasheet import ReleaseSummary
from benchmark_platform.release.report.markdown import render
from benchmark_platform.release.report.model import report_data

TEMPLATES = ("index.html", "app.js", "style.css")
REPORT_FILES = tuple(f"report/{name}" for name in (*TEMPLATES, "data.js"))


def _comment(name: str, canary: str) -> str:
    text = f"canary: {canary}".replace("*/", "* /").replace("-->", "- ->")
    return f"<!-- {text} -->\n" if name.endswith(".html") else f"/* {text} */\n"


def data_js(summary: ReleaseSummary, datasheet_md: str) -> str:
    data = report_data(summary, render(datasheet_md))
    body = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return f"window.REPORT_DATA = {body};\n"


def report_files(summary: ReleaseSummary, datasheet_md: str) -> dict[str, bytes]:
    """report/<file> -> bytes for every file of REPORT_FILES."""
    folder = resources.files(__package__)
    files = {
        f"report/{name}": (_comment(name, summary.canary) + folder.joinpath(name).read_text(encoding="utf-8")).encode()
        for name in TEMPLATES
    }
    files["report/data.js"] = (_comment("data.js", summary.canary) + data_js(summary, datasheet_md)).encode()
    return files

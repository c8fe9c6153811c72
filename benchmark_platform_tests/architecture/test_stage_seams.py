"""The seams of issue 17: the Dagster wiring holds no SQL, centrality only scores, and the Dagster layer never
reaches up to the CLI. Read from the source with `ast`, so a regression names its file and line."""

from __future__ import annotations

import ast
from pathlib import Path

from benchmark_platform.paths import PROJECT_ROOT

PACKAGE = PROJECT_ROOT / "benchmark_platform"
DB_CALLS = {"query", "scalar", "execute", "executemany", "copy_expert", "transaction"}
SQL_WORDS = ("SELECT ", "INSERT ", "DELETE ", "UPDATE ")
OWNED_ELSEWHERE = {"review"}  # defs/review/ is being moved onto review/persist.py separately


def _modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def test_dagster_wiring_runs_no_sql():
    problems = []
    for path in _modules(PACKAGE / "defs"):
        if path.relative_to(PACKAGE / "defs").parts[0] in OWNED_ELSEWHERE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DB_CALLS:
                problems.append(f"{path.relative_to(PROJECT_ROOT)}:{node.lineno}: .{node.func.attr}(...)")
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if node.value.lstrip().upper().startswith(SQL_WORDS):
                    problems.append(f"{path.relative_to(PROJECT_ROOT)}:{node.lineno}: SQL text")
    assert problems == [], "SQL belongs in the stage's persistence module:\n" + "\n".join(problems)


def test_centrality_only_scores_and_selection_uses_its_public_modules():
    public = {"config", "models", "persist", "run", "scoring"}
    problems = []
    for path in _modules(PACKAGE / "centrality"):
        problems += [
            f"{path.relative_to(PROJECT_ROOT)}:{line}: imports {module}"
            for line, module in _imports(path)
            if module.startswith("benchmark_platform.selection")
        ]
    for path in _modules(PACKAGE / "selection"):
        for line, module in _imports(path):
            parts = module.split(".")
            # the package itself is its exports (test_import_graph.py holds them to `__all__`)
            if parts[:2] == ["benchmark_platform", "centrality"] and len(parts) > 2 and parts[2] not in public:
                problems.append(f"{path.relative_to(PROJECT_ROOT)}:{line}: imports {module}")
    assert problems == [], "\n".join(problems)


def test_the_dagster_layer_never_imports_the_cli_or_another_stages_wiring():
    problems = []
    for path in _modules(PACKAGE / "defs"):
        stage = path.relative_to(PACKAGE / "defs").parts[0]
        for line, module in _imports(path):
            parts = module.split(".")
            if parts[:2] == ["benchmark_platform", "cli"]:
                problems.append(f"{path.relative_to(PROJECT_ROOT)}:{line}: imports {module}")
            # a stage's wiring may use the shared wiring (common, llm, automation, and inputs: the observable source
            # assets and the versions every stage's code version names), not another stage's assets
            if (
                path.name == "assets.py"
                and parts[:2] == ["benchmark_platform", "defs"]
                and len(parts) > 3
                and parts[2] not in {stage, "common", "llm", "automation", "inputs"}
            ):
                problems.append(f"{path.relative_to(PROJECT_ROOT)}:{line}: imports {module}")
    assert problems == [], "\n".join(problems)

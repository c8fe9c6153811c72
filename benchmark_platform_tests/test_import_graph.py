"""The package's import graph (read with the standard library's `ast`): no cycle between packages, no Dagster in a
stage core, and the spec a leaf that loads nothing third-party besides pydantic and yaml.

Every import counts, also one inside a function (a lazy import still ties the two packages together: it only moves
the failure from import time to call time) and one under `if TYPE_CHECKING:` (mypy follows it).
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from benchmark_platform._exports import export_origins
from benchmark_platform.paths import PACKAGE_DIR

ROOT = "benchmark_platform"
# Dagster wiring may import dagster; everything else is a core that runs and is tested without it.
DAGSTER_LAYER = ("defs", "definitions", "definitions_kina", "cli", "bench")
# A config leaf (and the spec composing them) imports the standard library, these and other leaves only.
LEAF_THIRD_PARTY = {"pydantic", "yaml"}
# leaves of the platform that are no stage's config (safeyaml: the one YAML reader, over `inputs`' limits)
SPEC_HELPERS = {f"{ROOT}.keys", f"{ROOT}.paths", f"{ROOT}.safeyaml", f"{ROOT}.inputs"}
HELPER_LEAVES = SPEC_HELPERS | {
    f"{ROOT}._exports",  # the lazy exports every package `__init__` uses
    f"{ROOT}.centrality.config",  # centrality's config leaf (selection's config embeds it)
    f"{ROOT}.review.models",  # the review policy and records review/config.py embeds
    f"{ROOT}.review.rubrics",
}
LEAF_DISTRIBUTIONS = {
    "pydantic",
    "pydantic_core",
    "typing_extensions",
    "annotated-types",
    "typing-inspection",
    "PyYAML",
}
# Package cycles that are being removed on another branch, each an unordered pair.
ALLOWED_CYCLES: list[set[str]] = []


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int

    def __str__(self) -> str:
        return f"{self.importer}:{self.line} imports {self.imported}"


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE_DIR.rglob("*.py"):
        parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
        if "models" in parts and "embed" in parts:  # shipped model files, not code
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


MODULES = _modules()


def _origins(package: str) -> dict[str, str]:
    """A package's lazy exports: name -> the module it comes from (empty for a module or an eager `__init__`)."""
    path = MODULES.get(package)
    return export_origins(path) if path is not None and path.name == "__init__.py" else {}


def _imports(name: str, path: Path) -> Iterator[Import]:
    """Every module `name` imports, at any depth of its code; a platform name resolved to the module it names, a lazy
    export to the module it comes from. A lazy `__init__`'s own `if TYPE_CHECKING:` block runs nothing: each import of
    one of its names counts as an import of that name's module instead."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lazy = path.name == "__init__.py" and _origins(name)
    reexports = [n for n in tree.body if lazy and isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"]
    skipped = {id(node) for block in reexports for node in ast.walk(block)}
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                origin = _origins(base).get(alias.name, submodule)
                yield Import(name, origin if origin in MODULES else base, node.lineno)


@cache
def imports() -> list[Import]:
    """Every import of every platform module (parsed when a test asks, not at collection: ~2 s per process)."""
    return list(dict.fromkeys(imp for name, path in sorted(MODULES.items()) for imp in _imports(name, path)))


def _platform(imp: Import) -> str | None:
    """The platform module an import loads (None for the standard library and third-party packages)."""
    if imp.imported == ROOT or imp.imported.startswith(ROOT + "."):
        name = imp.imported
        while name not in MODULES:  # `import benchmark_platform.a.b.attr`-like spellings
            name = name.rpartition(".")[0]
        return name
    return None


def _parents(module: str) -> list[str]:
    """The packages whose __init__ runs before `module` does."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(2, len(parts))]


def _spec_leaves() -> set[str]:
    """The spec package, every stage's config.py, the helper leaves, and the packages that hold them."""
    named = {m for m in MODULES if m.startswith(f"{ROOT}.spec") or m.endswith(".config")} | HELPER_LEAVES
    return named | {parent for module in named for parent in _parents(module)}


LEAVES = _spec_leaves()


def _node(module: str) -> str:
    """A node of the package graph: the top-level package, or the leaf module itself (a config leaf belongs to no
    package's cycle: it imports leaves only, so a stage may use the spec that composes its own config)."""
    if module in LEAVES:
        return module
    return module.split(".")[1] if "." in module else module


def _package_edges() -> dict[tuple[str, str], list[Import]]:
    edges: dict[tuple[str, str], list[Import]] = {}
    for imp in imports():
        target = _platform(imp)
        if target is None or target == ROOT:
            continue
        ancestors = set(_parents(imp.importer)) | {imp.importer}
        for module in [*(p for p in _parents(target) if p not in ancestors), target]:
            a, b = _node(imp.importer), _node(module)
            if a != b:
                edges.setdefault((a, b), []).append(imp)
    return edges


def _cycles(edges: dict[tuple[str, str], list[Import]]) -> list[set[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def test_no_import_cycle_between_packages():
    edges = _package_edges()
    problems = []
    for component in _cycles(edges):
        if component in ALLOWED_CYCLES:
            continue
        ties = [str(imp) for (a, b), imps in sorted(edges.items()) if a in component and b in component for imp in imps]
        problems.append(f"cycle between {sorted(component)}: " + "; ".join(ties[:8]))
    assert not problems, "\n".join(problems)


def test_the_allowed_cycles_still_exist():
    """An allowance outlives its cycle only by mistake: drop it as soon as the cycle is gone."""
    cycles = _cycles(_package_edges())
    assert all(allowed in cycles for allowed in ALLOWED_CYCLES), f"cycles now: {cycles}"


def test_no_stage_core_imports_dagster():
    offenders = [
        str(imp)
        for imp in imports()
        if imp.imported.split(".")[0].startswith("dagster") and imp.importer.split(".")[1] not in DAGSTER_LAYER
    ]
    assert not offenders, "\n".join(offenders)


def test_config_leaves_import_only_pydantic_yaml_the_standard_library_and_leaves():
    offenders = []
    for imp in imports():
        if imp.importer not in LEAVES:
            continue
        top = imp.imported.split(".")[0]
        if top == "__future__" or top in sys.stdlib_module_names or top in LEAF_THIRD_PARTY:
            continue
        if top == ROOT and _platform(imp) in LEAVES:
            continue
        offenders.append(str(imp))
    assert not offenders, "\n".join(offenders)


def test_the_spec_imports_only_config_leaves():
    """spec/ composes the stages' config modules (and two helper leaves) and imports nothing else of the platform."""
    stray = [
        str(imp)
        for imp in imports()
        if imp.importer.startswith(f"{ROOT}.spec")
        and (target := _platform(imp))
        and not (target.startswith(f"{ROOT}.spec") or target.endswith(".config") or target in SPEC_HELPERS)
    ]
    assert not stray, "\n".join(stray)


def test_importing_the_spec_loads_no_third_party_package_besides_pydantic_and_yaml():
    code = (
        "import sys, importlib.metadata as md\n"
        "before = set(sys.modules)\n"
        "import benchmark_platform.spec\n"
        "names = md.packages_distributions()\n"
        "tops = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print(json.dumps(sorted({d for t in tops for d in names.get(t, [])} - {'benchmark_platform'})))\n"
    )
    done = subprocess.run([sys.executable, "-c", "import json\n" + code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stdout.splitlines()[-1]))  # distributions, as importlib.metadata names them
    assert loaded <= LEAF_DISTRIBUTIONS, (
        f"third-party packages besides pydantic and yaml: {loaded - LEAF_DISTRIBUTIONS}"
    )
    assert {"pydantic", "PyYAML"} <= loaded


# Issue 37, one anatomy: every stage package and the shared ones keep their internals to themselves (their lazy
# `__init__` exports the rest) and have no module cycle inside. The benchmarks, like the tests, may measure internals.
ANATOMY_STAGES = (
    "analysis",
    "anchors",
    "audit",
    "automation",
    "centrality",
    "embed",
    "evaluation",
    "facts",
    "generation",
    "ingest",
    "itembank",
    "llm",
    "release",
    "review",
    "selection",
    "spec",
    "store",
)
ANATOMY_EXEMPT_IMPORTERS = ("bench",)


def _exported(package: str) -> set[str]:
    """The names a package's `__init__` lists in `__all__`."""
    tree = ast.parse(MODULES[package].read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return {ast.literal_eval(e) for e in node.value.elts}  # type: ignore[attr-defined]
    return set()


def _top(module: str) -> str:
    return module.split(".")[1] if "." in module else module


def test_no_stage_imports_another_stages_unexported_names():
    """Across packages, a module imports the package (`from benchmark_platform.anchors import x`, x in its `__all__`)
    or a config leaf, never another module."""
    offenders = []
    for name, path in sorted(MODULES.items()):
        if _top(name) in ANATOMY_EXEMPT_IMPORTERS or name == ROOT:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            module = node.module
            if not module.startswith(ROOT + ".") or _top(module) == _top(name) or _top(module) not in ANATOMY_STAGES:
                continue
            stage = f"{ROOT}.{_top(module)}"
            if module != stage:
                if module not in LEAVES:
                    offenders.append(f"{name}:{node.lineno} imports {module} (use {stage}'s exports)")
                continue
            offenders += [
                f"{name}:{node.lineno} imports {stage}.{a.name}, not in its __all__"
                for a in node.names
                if a.name not in _exported(stage)
            ]
    assert not offenders, "\n".join(offenders)


def test_every_export_is_lazy_and_loads():
    """A package's `__all__` is what its `if TYPE_CHECKING:` block imports (the spec, a leaf, imports its own eagerly);
    no export is named like a submodule (importing that submodule would replace the name with the module), and each
    one loads."""
    problems = []
    for top in ANATOMY_STAGES:
        package = f"{ROOT}.{top}"
        exported, lazy = _exported(package), set(_origins(package))
        if top != "spec" and exported != lazy:
            problems.append(f"{package}: __all__ and the TYPE_CHECKING imports differ by {sorted(exported ^ lazy)}")
        problems += [f"{package}.{n} is also a submodule" for n in exported if f"{package}.{n}" in MODULES]
        module = importlib.import_module(package)
        problems += [f"{package}.{n} does not load" for n in sorted(exported) if getattr(module, n, None) is None]
    assert not problems, "\n".join(problems)


def test_no_module_cycle_inside_a_covered_stage():
    """Inside one stage package, modules import each other one way (a lazy import counts: it only hides the cycle)."""
    edges: dict[tuple[str, str], list[Import]] = {}
    for imp in imports():
        target = _platform(imp)
        if target is None or _top(imp.importer) not in ANATOMY_STAGES or _top(target) != _top(imp.importer):
            continue
        if target != imp.importer and target != f"{ROOT}.{_top(target)}":  # the package's own __init__ re-exports
            edges.setdefault((imp.importer, target), []).append(imp)
    cycles = _cycles(edges)
    assert not cycles, "\n".join(f"cycle between {sorted(c)}" for c in cycles)

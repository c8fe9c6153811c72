"""Lazy package exports (PEP 562), the one mechanism every stage's `__init__.py` uses.

A package lists the names other packages may import in `__all__` and imports them under `if TYPE_CHECKING:` (so mypy
and editors see them); at run time `lazy_exports` reads that block and imports a name's module on first use. So
importing a config leaf (`benchmark_platform.centrality.config`, which the spec composes) runs its package's
`__init__` without loading the stage's numpy, psycopg or model machinery.

    if TYPE_CHECKING:
        from benchmark_platform.centrality.run import score_facts
    else:
        __getattr__, __dir__ = lazy_exports(__name__)
    __all__ = ["score_facts"]

A leaf: the standard library only.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path


@cache
def export_origins(init_file: Path) -> dict[str, str]:
    """Each name a package `__init__` imports under `if TYPE_CHECKING:` -> the module it comes from."""
    origins = {}
    for node in ast.parse(init_file.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
                    origins.update({alias.asname or alias.name: statement.module for alias in statement.names})
    return origins


def lazy_exports(package: str) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The package's module-level `__getattr__` and `__dir__`: an exported name is imported from its module on first
    use and kept in the package; any other name is the usual AttributeError."""
    module = sys.modules[package]

    def __getattr__(name: str) -> object:
        origin = export_origins(Path(str(module.__file__))).get(name) if name in module.__all__ else None
        if origin is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(origin), name)
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(module), *module.__all__})

    return __getattr__, __dir__

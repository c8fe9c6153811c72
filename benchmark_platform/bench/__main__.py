"""Run one benchmark by name: `python -m benchmark_platform.bench NAME [args...]`."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import benchmark_platform.bench as bench_package


def available() -> list[str]:
    return sorted(info.name for info in pkgutil.iter_modules(bench_package.__path__) if not info.name.startswith("_"))


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in available():
        print(
            f"usage: python -m benchmark_platform.bench NAME [args]; NAME in: {', '.join(available())}", file=sys.stderr
        )
        return 2
    sys.argv = [f"benchmark_platform.bench.{argv[0]}", *argv[1:]]
    try:
        module = importlib.import_module(f"{bench_package.__name__}.{argv[0]}")
        return int(module.main() or 0)
    except ModuleNotFoundError as exc:  # a bench needing an extra that is not installed: one line, not a traceback
        print(
            f"error: bench {argv[0]} needs the module {exc.name!r}, not installed (see pyproject's extras)",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Entry point of `benchmark-platform`: discovers subcommand modules in this package."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import benchmark_platform.cli as cli_package


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchmark-platform", description=__doc__)
    subparsers = parser.add_subparsers(dest="command", required=True)
    for info in sorted(pkgutil.iter_modules(cli_package.__path__), key=lambda i: i.name):
        if info.name == "main":
            continue
        module = importlib.import_module(f"{cli_package.__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a clear one-line error for expected failures; tracebacks are for bugs
        from benchmark_platform.spec import SpecError
        from benchmark_platform.store import MigrationError
        from benchmark_platform.store.settings import DatabaseNotConfigured

        if isinstance(exc, (SpecError, MigrationError, DatabaseNotConfigured)):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())

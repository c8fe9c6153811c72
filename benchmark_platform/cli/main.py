"""Entry point of `benchmark-platform`: discovers subcommand modules in this package.

One error boundary: an expected failure (bad input file, bad encoding, corrupted snapshot, lost database, failed
release check) prints one `error:` line naming what is wrong and exits 2; `--debug` (anywhere on the command line)
shows the traceback instead. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import re
import sys
from collections.abc import Iterator
from typing import TextIO, cast

import benchmark_platform.cli as cli_package

DEBUG_FLAG = "--debug"

# Expected failures by class (module-qualified names, matched along the MRO, so nothing is imported to check them).
_INPUT_ERRORS = {
    "builtins.ValueError",  # bad input (our validators, UnicodeDecodeError, JSONDecodeError)
    "builtins.OSError",  # missing / unreadable file
    "benchmark_platform.store.migrations.MigrationError",
    "benchmark_platform.store.settings.DatabaseNotConfigured",
    "benchmark_platform.ingest.snapshot.SnapshotError",
    "benchmark_platform.ingest.fetch.FetchError",
    "benchmark_platform.ingest.fetch.NetworkForbidden",
    "benchmark_platform.llm.gateway.CostCapReached",
    "benchmark_platform.analysis.run.NoAnswersError",  # e.g. every discipline went to manual review
    "dagster._core.errors.DagsterAssetCheckFailedError",  # a blocking check stopped the build: its names say why
}
_DATABASE_LOST = {
    "psycopg2.OperationalError",
    "psycopg2.InterfaceError",
    "dagster_postgres.utils.DagsterPostgresException",
    "sqlalchemy.exc.OperationalError",
}
LOST_DATABASE_HINT = (
    "check that it answers (`benchmark-platform db status`, or start it with `benchmark-platform db up`), then rerun: "
    "the next run fails the interrupted one and frees its slots"
)


_UNSET_VARIABLE = re.compile(r'environment variable "([A-Za-z_][A-Za-z0-9_]*)" which is not set')
_NO_ANSWER = ("timeout expired", "statement timeout")  # libpq's connect_timeout, the server's statement_timeout
NO_ANSWER_HINT = (
    "it did not answer within the timeout (store/settings.py; a URL's `connect_timeout=` or "
    "`options=-c statement_timeout=` sets it); check the server (`benchmark-platform db status`), then rerun"
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchmark-platform", description=__doc__)
    parser.add_argument(DEBUG_FLAG, action="store_true", help="show the traceback of a failure")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for info in sorted(pkgutil.iter_modules(cli_package.__path__), key=lambda i: i.name):
        if info.name == "main":
            continue
        module = importlib.import_module(f"{cli_package.__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(subparsers)
    return parser


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception, then what it wraps: Dagster's step errors (user_exception), causes and contexts."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [getattr(current, "user_exception", None), current.__cause__, current.__context__]


def _names(exc: BaseException) -> set[str]:
    return {f"{cls.__module__}.{cls.__qualname__}" for cls in type(exc).__mro__}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def expected_error(exc: BaseException) -> str | None:
    """The one-line message of an expected failure anywhere in the chain; None for a bug."""
    chain = list(_chain(exc))
    for current in chain:  # a lost database explains every later symptom, so it wins
        if _names(current) & _DATABASE_LOST:
            if any(text in str(current) for text in _NO_ANSWER):
                return f"the database does not answer ({_first_line(current)}): {NO_ANSWER_HINT}"
            return f"lost the database ({_first_line(current)}): {LOST_DATABASE_HINT}"
    for current in chain:
        names = _names(current)
        unset = _UNSET_VARIABLE.search(str(current))
        if "dagster._core.errors.DagsterInvalidConfigError" in names and unset:  # a resource's EnvVar (a secret)
            return (
                f"the environment variable {unset.group(1)} is not set; this build reads it (through Dagster's EnvVar, "
                "never logged or stored): set it in the environment and rerun"
            )
        if "benchmark_platform.spec.loader.SpecError" in names or names & _INPUT_ERRORS:
            if isinstance(current, OSError) and current.filename and str(current.filename) not in str(current):
                return f"{current.filename}: {current.strerror or _first_line(current)}"
            return " ".join(str(current).split()) or type(current).__name__
        if isinstance(current, RecursionError):
            return "input nested too deeply to read (Python's recursion limit); flatten it or check the file"
    return None


class _WithoutEventLogEchoes:
    """stderr without Dagster's echo of a failed event-log write: when the database is lost, Dagster writes each
    failed write (statement and parameters, ~8 lines) to stderr itself and then raises, and that raise reaches the
    error boundary below, which names the loss in one line. Everything else passes through."""

    ECHO = "Exception while writing logger call to event log"

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return len(text) if text.startswith(self.ECHO) else self.stream.write(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


def _not_a_connection_retry(record: logging.LogRecord) -> bool:
    """Dagster's Postgres storage warns on the root logger at each retry of a lost connection (three lines each,
    six times); the error boundary names the loss once, and a retry that succeeds needs no warning."""
    return not str(record.msg).startswith("Retrying failed database connection")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = DEBUG_FLAG in argv
    args = build_parser().parse_args([DEBUG_FLAG] + [a for a in argv if a != DEBUG_FLAG] if debug else argv)
    stderr, raise_exceptions = sys.stderr, logging.raiseExceptions
    if not debug:  # a lost database's symptoms, which the error boundary below names in one line
        sys.stderr = cast(TextIO, _WithoutEventLogEchoes(stderr))
        logging.getLogger().addFilter(_not_a_connection_retry)
        # Dagster's event-log handler fails while it records the failing step: no handler traceback per failure
        logging.raiseExceptions = False
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a clear one-line error for expected failures; tracebacks are for bugs
        message = expected_error(exc)
        if message is None or debug:
            raise
        print(f"error: {message}", file=stderr)
        return 2
    finally:  # as before the command (tests call main in-process)
        sys.stderr, logging.raiseExceptions = stderr, raise_exceptions
        logging.getLogger().removeFilter(_not_a_connection_retry)


if __name__ == "__main__":
    sys.exit(main())

"""Limits and checks shared by every file import (gold sheets, anchors, item banks): a leaf module (standard library
only). An import reads and validates the whole file before anything is written; these checks make a bad file fail
early with one message that names the file, row and what to do, instead of a deletion, a RecursionError or 1 GB RSS.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path


class InputError(ValueError):
    """A bad input file; the message names the file (and row) and what to do."""


@dataclass(frozen=True)
class InputLimits:
    """Defaults fit every bundled and shared file with a wide margin; a flag raises them for a bigger import."""

    max_bytes: int = 20 * 2**20  # the largest shared gold sheet is ~0.5 MB
    max_rows: int = 50_000
    max_depth: int = 32  # brackets inside one field (an options list is 2-3 deep)

    def __post_init__(self) -> None:
        if min(self.max_bytes, self.max_rows, self.max_depth) < 1:
            raise InputError(f"input limits must be positive: {self}")


def read_input(path: Path, limits: InputLimits, flag: str = "--max-bytes") -> bytes:
    """The file's bytes, refused when missing, empty (an empty file never replaces an earlier import) or too big."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path}: a folder, not a file")
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    size = path.stat().st_size
    if size == 0:
        raise InputError(f"{path}: empty file; nothing was imported (to remove an import, delete it explicitly)")
    if size > limits.max_bytes:
        raise InputError(f"{path}: {size:,} bytes is over the limit of {limits.max_bytes:,}; raise it with {flag}")
    data = path.read_bytes()
    if not data.strip(b" \t\r\n\xef\xbb\xbf"):
        raise InputError(f"{path}: only blank space; nothing was imported")
    return data


def check_text(path: Path, text: str) -> str:
    """Decoded text of an import, refused when it holds a NUL character (a binary file, and PostgreSQL text cannot
    store it)."""
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise InputError(f"{path}:{line}: a NUL character: this is not a text file")
    return text


def check_rows(where: str, rows: int, limits: InputLimits, flag: str = "--max-rows") -> None:
    if rows > limits.max_rows:
        raise InputError(f"{where}: more than {limits.max_rows:,} rows; raise the limit with {flag}")


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting ([ { ( outside quoted strings) of a JSON or Python-literal text, without parsing
    it (a parser would recurse once per level)."""
    depth = deepest = 0
    quote = ""
    escaped = False
    for char in text:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "[{(":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]})":
            depth = max(depth - 1, 0)
    return deepest


def check_nesting(where: str, text: str, limits: InputLimits, flag: str = "--max-depth") -> None:
    depth = nesting_depth(text)
    if depth > limits.max_depth:
        raise InputError(f"{where}: nested {depth:,} levels deep, over the limit of {limits.max_depth}; fix the field")


def finite_number(where: str, value: str, low: float, high: float) -> float:
    """`value` as a float in [low, high]; nan, inf and anything outside are refused."""
    try:
        number = float(value)
    except ValueError:
        raise InputError(f"{where}: {value!r} is not a number") from None
    if not math.isfinite(number) or not low <= number <= high:
        raise InputError(f"{where}: {value!r} is not a rating between {low:g} and {high:g}")
    return number


DEFAULT_LIMITS = InputLimits()

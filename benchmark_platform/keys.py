"""Identifiers shared by the spec and the stages (a leaf: standard library only)."""

from __future__ import annotations

import re


def slug(name: str) -> str:
    """A partition-key-safe identifier: Dagster keys may not contain commas or brackets."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")

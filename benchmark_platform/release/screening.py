"""Artefacts no released item may carry (issue 20): a raw multi-value separator ('Arkansas Mountain|Ozark Mountain')
in its stem or options, or a keyed answer that is an identifier (permit number, regulation section, registry code,
bare date, street address: the salience patterns of the facts stage)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from benchmark_platform.facts.config import default_identifier_patterns

RAW_SEPARATOR = re.compile(r"\S\|\S|\s\|\s|\|$|^\|")


def artefacts(
    question: str, options: Sequence[str], answer_index: int, patterns: Mapping[str, str] | None = None
) -> list[str]:
    """Why the item may not ship; empty when it may."""
    problems = [
        f"raw separator in {where}"
        for where, text in (("stem", question), *(("option", o) for o in options))
        if RAW_SEPARATOR.search(text)
    ]
    key = options[answer_index] if 0 <= answer_index < len(options) else ""
    for kind, pattern in (patterns or default_identifier_patterns()).items():
        if re.search(pattern, key):
            problems.append(f"answer is an identifier: {kind}")
    return problems

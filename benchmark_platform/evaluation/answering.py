"""Single-letter answering with OenoBench's five-stop fallback (OenoBench §5; its evaluation plan §7.1).

The five stops, applied in order, each catching what the previous one let through:
1. a system prompt asking for exactly one option letter and nothing else;
2. a short `max_tokens` (5) capping the visible output;
3. stop sequences ("\\n\\n", ".", " ", ":") halting at the first non-letter character;
4. a gentle `logit_bias` on the letter tokens where the provider supports it;
5. a post-hoc parse (first standalone option letter wins); if nothing parses, one retry with a
   stricter prompt, and if that fails too the answer is recorded as unparsed (wrong).
Prompts live in `prompts/` next to this module.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from benchmark_platform.evaluation.items import EvalItem


@cache
def _prompt(name: str) -> str:
    return resources.files(__package__).joinpath("prompts", name).read_text(encoding="utf-8").strip()


class AnswerProtocol(BaseModel):
    """The request shape of one single-letter answer (stops 1-4) and its retry (stop 5)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_tokens: int = Field(5, ge=1)
    stop: tuple[str, ...] = ("\n\n", ".", " ", ":")
    letter_logit_bias: float = 5.0
    retry_once: bool = True

    def system_prompt(self, letters: str, *, retry: bool = False) -> str:
        template = _prompt("single_letter_retry.txt" if retry else "single_letter_system.txt")
        return template.format(letters=_letter_list(letters))


def _letter_list(letters: str) -> str:
    return ", ".join(letters[:-1]) + f" or {letters[-1]}" if len(letters) > 1 else letters


def render_question(item: EvalItem) -> str:
    lines = [item.question.strip(), ""]
    lines += [f"{letter}. {option.strip()}" for letter, option in zip(item.letters, item.options, strict=True)]
    return "\n".join(lines)


@cache
def _letter_pattern(letters: str) -> re.Pattern[str]:
    return re.compile(rf"\b([{re.escape(letters)}])\b")


def parse_letter(text: str | None, letters: str) -> str | None:
    """Stop 5's parse: the first standalone option letter in the upper-cased reply, else None."""
    if not text:
        return None
    found = _letter_pattern(letters).search(text.strip().upper())
    return found.group(1) if found else None

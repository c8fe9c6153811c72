"""Optional paraphrase of validated facts through the LLM gateway (OenoBench 3.3: facts are paraphrases, never
verbatim copies). The model only rephrases: an output is kept only if it keeps every number and every linked entity
(by any of its gazetteer names), stays within the word limits and copies no long run of the source. Otherwise the
fact keeps its validated sentence, and nothing of the rejected output is stored.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from difflib import SequenceMatcher
from pathlib import Path

from benchmark_platform.facts.config import FactsConfig
from benchmark_platform.facts.gazetteer import Gazetteer, fold
from benchmark_platform.facts.models import Candidate

PROMPT = (Path(__file__).parent / "prompts" / "paraphrase.txt").read_text(encoding="utf-8")
MAX_COPIED_SHARE = 0.65  # the fact-echo bound of OenoBench's agent A3 (longest common substring / source length)

# The gateway as the facts stage sees it: prompts in, one completion per prompt out (None: the call failed).
Paraphraser = Callable[[Sequence[str]], Sequence[str | None]]
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def prompt(fact: str) -> str:
    return PROMPT.format(fact=fact)


def paraphrase(
    candidates: Sequence[Candidate], paraphraser: Paraphraser, config: FactsConfig, gazetteer: Gazetteer
) -> tuple[list[Candidate], Counter[str]]:
    """Candidates with their text paraphrased where the model's output passes every check; the counts say why
    the others kept their sentence ('accepted' counts the paraphrased ones)."""
    outputs = paraphraser([prompt(c.text) for c in candidates])
    if len(outputs) != len(candidates):
        raise ValueError(f"paraphraser returned {len(outputs)} outputs for {len(candidates)} prompts")
    names = _names_by_entity(gazetteer)
    result, outcome = [], Counter[str]()
    for candidate, output in zip(candidates, outputs, strict=True):
        problem = _problem(candidate, output, config, names)
        outcome[problem or "accepted"] += 1
        if problem is None and output is not None:
            text = " ".join(output.split())
            result.append(
                replace(candidate, text=text, attributes={**candidate.attributes, "paraphrase_of": candidate.text})
            )
        else:
            result.append(candidate)
    return result, outcome


def _problem(candidate: Candidate, output: str | None, config: FactsConfig, names: dict[str, set[str]]) -> str | None:
    if output is None or not output.strip():
        return "no output"
    text = " ".join(output.split())
    words = len(text.split())
    if not config.min_words <= words <= config.max_words or "\n" in output.strip():
        return "not one sentence within the word limits"
    if Counter(_NUMBER.findall(text)) != Counter(_NUMBER.findall(candidate.text)):
        return "numbers changed"
    folded = fold(text).lower()
    for mention in candidate.mentions:
        spellings = names.get(mention.entity_id, set()) | {fold(mention.surface).lower()}
        if not any(s in folded for s in spellings):
            return "entity dropped"
    match = SequenceMatcher(None, candidate.text.lower(), text.lower(), autojunk=False).find_longest_match()
    if match.size / max(len(candidate.text), 1) >= MAX_COPIED_SHARE:
        return "verbatim copy of the source"
    return None


def _names_by_entity(gazetteer: Gazetteer) -> dict[str, set[str]]:
    names: dict[str, set[str]] = {}
    for key, entity in gazetteer.by_name.items():
        names.setdefault(entity.entity_id, set()).add(key)
    return names

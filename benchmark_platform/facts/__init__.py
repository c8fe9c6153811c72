"""The facts stage core (OenoBench 3.3, B.1): documents -> atomic, entity-linked, source-anchored facts.

- prose.py: the five filters on spaCy over prose documents (split, resolve, classify, validate, on-topic), with
  clauses.py (conjunction split, reference resolution), rules.py (classification, validation, on-topic) and
  linking.py / gazetteer.py (entity linking with the spec's gazetteers and alias classes);
- structured.py: structured records -> facts through the spec's per-source templates;
- dedup.py: near-duplicate removal (cosine >= 0.92, exact search); paraphrase.py: the optional LLM paraphrase;
- build.py: the stage end to end and the quality report; persist.py: its tables (sql/0003_facts.sql);
- config.py: the spec's `facts` section.
"""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.facts.build import FactSet
    from benchmark_platform.facts.models import one_article
    from benchmark_platform.facts.persist import candidate_digests
    from benchmark_platform.facts.run import build_facts, extract_source
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "FactSet",
    "build_facts",
    "candidate_digests",
    "extract_source",
    "one_article",
]

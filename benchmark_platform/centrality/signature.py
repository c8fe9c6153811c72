"""The item signature psi(q) and raw alignment A~_d(q): one LLM call per item, or deterministic features.

`llm_signatures` makes one call per item through an injected `complete` (the LLM gateway's cached batch call), then
re-checks only the uncertainty set U_d (|A~ - 1/2| < band, at most rho * N_d items) and averages the two
alignments. An answer that is not a valid signature raises `SignatureError` so nothing is persisted from it.
`gateway_completion` is such a `complete` over the LLM gateway: each batch of prompts is one `complete_many`.
`fallback_signatures` needs no model: psi from the nearest prototype entries, metadata and keyphrases, and A~ as the
best TF-IDF cosine to the prototype; every such signature says `fallback=True`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from pydantic import BaseModel, ConfigDict, Field

from benchmark_platform.anchors import AnchorSet
from benchmark_platform.centrality.config import CentralityParams
from benchmark_platform.centrality.features import TextSpace
from benchmark_platform.centrality.models import Signature
from benchmark_platform.llm import ChatRequest, ExtractionError, Gateway, extract

PROMPT_PATH = Path(__file__).resolve().parent / "prompts" / "signature.md"
RECHECK_NOTE = "This is a second, independent check of an item whose first alignment was uncertain; judge afresh."

Complete = Callable[[Sequence[str]], Sequence[str | None]]
"""Prompts in, response texts out (None for a call that failed), in the same order."""


class SignatureError(ValueError):
    """An LLM answer that is not a valid signature; `item_id` names the item."""

    def __init__(self, item_id: str, reason: str) -> None:
        self.item_id = item_id
        super().__init__(f"item {item_id!r}: no valid signature ({reason})")


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    method_family: str = Field(min_length=1)
    core_principle: str = Field(min_length=1)
    answer_type: str = Field(min_length=1)
    constraints: list[str] = Field(default_factory=list)
    alignment: float = Field(ge=0, le=1)


def signature_prompt(anchors: AnchorSet, text: str, *, recheck: bool) -> str:
    p = anchors.prototype
    return PROMPT_PATH.read_text(encoding="utf-8").format(
        discipline=anchors.discipline,
        methods="; ".join(p.methods) or "-",
        problems="; ".join(p.problems) or "-",
        theorems="; ".join(p.theorems) or "-",
        concepts="; ".join(p.concepts) or "-",
        applications="; ".join(p.applications) or "-",
        item=text,
        recheck=RECHECK_NOTE if recheck else "",
    )


def _parse(item_id: str, response: str | None) -> _Answer:
    if response is None:
        raise SignatureError(item_id, "the call failed")
    try:
        return extract(response, _Answer)[0]
    except ExtractionError as exc:
        raise SignatureError(item_id, str(exc)) from exc


def gateway_completion(
    gateway: Gateway, model: str, loop: asyncio.AbstractEventLoop, seed: int | None = None
) -> Complete:
    """A `Complete` for scoring run in a worker thread while `loop` (the open gateway's event loop) keeps serving.

    Each call sends all its prompts as one `complete_many` (cached, limited and retried per provider), asking for
    JSON where the model config allows. A call that failed answers None; an answer that is not a valid signature
    keeps its text, so `SignatureError` can say what was wrong with it.
    """

    def complete(prompts: Sequence[str]) -> list[str | None]:
        requests = [ChatRequest(model=model, messages=[{"role": "user", "content": p}], seed=seed) for p in prompts]
        results = asyncio.run_coroutine_threadsafe(gateway.complete_many(requests, schema=_Answer), loop).result()
        return [r.text if r.status in ("ok", "invalid") else None for r in results]

    return complete


def uncertainty_set(raw: np.ndarray, params: CentralityParams) -> np.ndarray:
    """Indices of U_d: the items nearest A~ = 1/2 within the band, at most rho * N of them."""
    distance = np.abs(raw - 0.5)
    inside = np.flatnonzero(distance < params.uncertainty_band)
    cap = int(np.floor(params.recheck_share * len(raw)))
    return np.sort(inside[np.argsort(distance[inside], kind="stable")][:cap])


def llm_signatures(
    ids: Sequence[str], texts: Sequence[str], anchors: AnchorSet, complete: Complete, params: CentralityParams
) -> list[Signature]:
    """One call per item, re-checks on U_d; B_LLM = N_d + |U_d| <= (1 + rho) N_d calls."""
    first = [
        _parse(i, r)
        for i, r in zip(ids, complete([signature_prompt(anchors, t, recheck=False) for t in texts]), strict=True)
    ]
    raw = np.array([a.alignment for a in first])
    recheck = uncertainty_set(raw, params)
    if len(recheck):
        second = complete([signature_prompt(anchors, texts[i], recheck=True) for i in recheck])
        for i, response in zip(recheck, second, strict=True):
            raw[i] = (raw[i] + _parse(ids[i], response).alignment) / 2
    flagged = set(recheck.tolist())
    return [
        Signature(
            method_family=a.method_family.strip().lower(),
            core_principle=a.core_principle.strip().lower(),
            answer_type=a.answer_type.strip().lower(),
            constraints=tuple(c.strip().lower() for c in a.constraints if c.strip()),
            raw_alignment=float(raw[i]),
            fallback=False,
            rechecked=i in flagged,
        )
        for i, a in enumerate(first)
    ]


_NUMERIC = re.compile(r"\b(how (many|much|long|far)|calculate|compute|estimate|what percentage|value of)\b", re.I)
_ENTITY = re.compile(r"\b(which|who|where|name the)\b", re.I)
_DATE = re.compile(r"\b(when|what year|on what date|in what year)\b", re.I)
_DEFINITION = re.compile(r"\b(what is|what are|define|definition|meaning of)\b", re.I)
_QUANTITY = re.compile(r"\b\d+(?:[.,]\d+)?\s*(?:%|[a-zA-Z°µ/]{1,6})?")
_NEGATION = re.compile(r"\b(not|except|only|never|least|unless)\b", re.I)


def _answer_type(text: str, metadata: Mapping[str, str]) -> str:
    if metadata.get("answer_type"):
        return metadata["answer_type"].lower()
    for name, pattern in (("numeric", _NUMERIC), ("date", _DATE), ("entity", _ENTITY), ("definition", _DEFINITION)):
        if pattern.search(text):
            return name
    return "proposition"


def fallback_signatures(
    texts: Sequence[str],
    metadata: Sequence[Mapping[str, str]],
    anchors: AnchorSet,
    space: TextSpace,
    x: sp.csr_matrix | None = None,
) -> list[Signature]:
    """Deterministic psi and A~ from the prototype, metadata and keyphrases (no model); `x` = space.tfidf(texts)."""
    x = space.tfidf(texts) if x is None else x
    p = anchors.prototype
    methods = list(p.methods)
    principles = list(p.theorems) + list(p.concepts)
    reference = [t for entries in p.components().values() for t in entries] + [a.text for a in anchors.anchor_items]
    sim_methods = (x @ space.tfidf(methods).T).toarray() if methods else np.zeros((len(texts), 0))
    sim_principles = (x @ space.tfidf(principles).T).toarray() if principles else np.zeros((len(texts), 0))
    sim_reference = (x @ space.tfidf(reference).T).toarray() if reference else np.zeros((len(texts), 1))
    no_principle = np.flatnonzero(sim_principles.max(axis=1) <= 0) if sim_principles.shape[1] else np.arange(len(texts))
    keyphrases = dict(zip(no_principle.tolist(), space.keyphrases(x[no_principle], 3), strict=True))
    out = []
    for i, text in enumerate(texts):
        meta = metadata[i]
        if sim_methods.shape[1] and sim_methods[i].max() > 0:
            method = methods[int(sim_methods[i].argmax())]
        else:
            method = meta.get("method") or meta.get("category") or "unspecified"
        if sim_principles.shape[1] and sim_principles[i].max() > 0:
            principle = principles[int(sim_principles[i].argmax())]
        else:
            principle = " ".join(keyphrases[i]) or "unspecified"
        constraints = [m.group(0).strip().lower() for m in _QUANTITY.finditer(text)][:3]
        constraints += sorted({m.group(0).lower() for m in _NEGATION.finditer(text)})
        out.append(
            Signature(
                method_family=method.lower(),
                core_principle=principle.lower(),
                answer_type=_answer_type(text, meta),
                constraints=tuple(constraints),
                raw_alignment=float(np.clip(sim_reference[i].max(), 0.0, 1.0)),
                fallback=True,
            )
        )
    return out

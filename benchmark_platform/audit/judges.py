"""LLM audit agents: a panel of judge models (the spec's `audit.judges`) called through the gateway.

Always run: B1 TriJudgeAnswer, B2 ClosedBookSolvability, C4 DifficultyAudit. Escalation-gated (OenoBench Tables 3-4):
B4 Ambiguity when the B1 dissent rate is elevated, B5 VerifierSkip on disputed B1 verdicts, C3 SourceSwap on B1/B2
disagreement. KINA 4.1: K4 three-judge consensus on four feature axes (admit on 2 of 3), and K5 the two-agent
refinement loop (diagnosis, then revision, then re-audit) behind `audit.kina.refinement`.

A judge's output that is not valid JSON under the agent's schema is no vote; an item with too few valid votes gets no
finding (nothing from invalid output is persisted) and is counted in the corpus payload. An agent's version includes
its prompt's hash, so editing a prompt re-audits every item.
"""

from __future__ import annotations

import hashlib
import operator
from collections import Counter
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from benchmark_platform.audit.agents import ITEM_AGENTS, LETTERS, AuditItem, Finding, Severity
from benchmark_platform.audit.pool import AgentResult, AuditContext
from benchmark_platform.llm import ChatRequest, Gateway
from benchmark_platform.llm.config import ModelConfig

T = TypeVar("T")

PROMPTS = Path(__file__).parent / "prompts"
Letter = Field(pattern=r"^[A-J]$")


@cache
def prompt(name: str) -> str:
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8")


def prompt_version(*names: str) -> str:
    return "1." + hashlib.sha256("".join(prompt(n) for n in names).encode()).hexdigest()[:8]


class Vote(BaseModel):
    answer: str = Letter


class Defensible(BaseModel):
    defensible: list[str] = Field(min_length=1)


class Tier(BaseModel):
    tier: int = Field(ge=1, le=4)


class Consensus(BaseModel):
    knowledge_coverage: bool
    disciplinary_uniqueness: bool
    socio_economic_impact: bool
    practical_value: bool
    failure_pattern: str = ""
    admit: bool


class Diagnosis(BaseModel):
    counter_evidence: list[str]
    defective: bool


class Revision(BaseModel):
    question: str = Field(min_length=1)
    options: list[str] = Field(min_length=2)
    answer_index: int = Field(ge=0)


def render(item: AuditItem, name: str, facts: tuple[str, ...] | None = None, **extra: str) -> str:
    options = "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(item.options))
    key = LETTERS[item.answer_index] if 0 <= item.answer_index < len(item.options) else "?"
    fact_text = "\n".join(f"- {f}" for f in (item.fact_texts if facts is None else facts)) or "(none)"
    return prompt(name).format(
        question=item.question,
        options=options,
        facts=fact_text,
        key=key,
        **{"flagships": "(none)", "diagnosis": "", **extra},
    )


@dataclass
class Panel:
    gateway: Gateway
    judges: list[ModelConfig]
    seed: int
    invalid: Counter[str]

    async def ask(
        self,
        prompts: list[str],
        schema: type[BaseModel],
        agent: str,
        judges: list[ModelConfig] | None = None,
        sample_index: int = 0,
    ) -> list[dict[str, Any]]:
        """Per prompt: judge name -> parsed answer, for the judges whose output was valid."""
        judges = judges or self.judges
        requests = [
            ChatRequest(
                model=j.name, messages=[{"role": "user", "content": p}], seed=self.seed, sample_index=sample_index
            )
            for p in prompts
            for j in judges
        ]
        results = await self.gateway.complete_many(requests, schema)
        out: list[dict[str, Any]] = [{} for _ in prompts]
        for k, result in enumerate(results):
            if result.ok:
                out[k // len(judges)][judges[k % len(judges)].name] = result.parsed
            else:
                self.invalid[agent] += 1
        return out


@dataclass(frozen=True)
class JudgeAgent:
    name: str
    version: str
    judge: Callable[[list[AuditItem], AuditContext, Panel], Awaitable[AgentResult]]
    scope: Callable[[list[AuditItem], AuditContext], list[AuditItem] | str] | None = None  # str: not invoked, why

    def finding(self, item: AuditItem, severity: Severity, payload: dict[str, Any]) -> Finding:
        return Finding(item.item_id, self.name, self.version, severity, payload, item.input_hash)


def _key(item: AuditItem) -> str:
    return LETTERS[item.answer_index] if 0 <= item.answer_index < len(item.options) else "?"


def _answer_verdict(agent: JudgeAgent, item: AuditItem, votes: dict[str, Vote]) -> Finding | None:
    if len(votes) < 2:
        return None
    agree = sum(v.answer == _key(item) for v in votes.values())
    severity: Severity = "fail" if 2 * agree < len(votes) else "warn" if agree < len(votes) else "pass"
    return agent.finding(item, severity, {"votes": {j: v.answer for j, v in votes.items()}, "key": _key(item)})


def _majority(answers: Collection[T], holds: Callable[[T], bool]) -> bool:
    """Strictly more than half of the judges' answers satisfy `holds`."""
    return 2 * sum(holds(a) for a in answers) > len(answers)


async def _tri_judge_answer(items: list[AuditItem], ctx: AuditContext, panel: Panel) -> AgentResult:
    """B1: the panel reads question + source fact and votes on the marked-correct option."""
    votes = await panel.ask([render(i, "b1_answer") for i in items], Vote, B1_TRI_JUDGE_ANSWER.name)
    return AgentResult(
        [f for i, v in zip(items, votes, strict=True) if (f := _answer_verdict(B1_TRI_JUDGE_ANSWER, i, v))]
    )


async def _closed_book(items: list[AuditItem], ctx: AuditContext, panel: Panel) -> AgentResult:
    """B2: the same panel with the fact withheld; a majority naming the key means closed-book solvable (warn)."""
    votes = await panel.ask([render(i, "b2_closed_book") for i in items], Vote, B2_CLOSED_BOOK.name)
    findings = []
    for item, v in zip(items, votes, strict=True):
        if len(v) < 2:
            continue
        solvable = _majority([x.answer for x in v.values()], partial(operator.eq, _key(item)))
        findings.append(
            B2_CLOSED_BOOK.finding(
                item,
                "warn" if solvable else "pass",
                {"votes": {j: x.answer for j, x in v.items()}, "solvable": solvable},
            )
        )
    return AgentResult(findings)


async def _difficulty(items: list[AuditItem], ctx: AuditContext, panel: Panel) -> AgentResult:
    """C4: one judge re-rates the tier; |judged - assigned| >= 2 fails and relabels the item."""
    name = ctx.config.difficulty_judge or panel.judges[0].name
    judge = [j for j in panel.judges if j.name == name] or panel.judges[:1]
    rated = [i for i in items if i.tier is not None]
    answers = await panel.ask([render(i, "c4_difficulty") for i in rated], Tier, C4_DIFFICULTY.name, judges=judge)
    findings = []
    for item, a in zip(rated, answers, strict=True):
        if not a:
            continue
        tier = next(iter(a.values())).tier
        delta = abs(tier - (item.tier or tier))
        findings.append(
            C4_DIFFICULTY.finding(
                item,
                "fail" if delta >= ctx.config.difficulty_fail_delta else "pass",
                {"assigned": item.difficulty, "judged_tier": tier, "delta": delta, "relabel_to": f"L{tier}"},
            )
        )
    return AgentResult(findings)


def _b1(ctx: AuditContext) -> dict[str, Finding]:
    b1 = ctx.results.get(B1_TRI_JUDGE_ANSWER.name)
    return {f.item_id: f for f in (b1.findings if b1 else [])}


def _dissent_elevated(items: list[AuditItem], ctx: AuditContext) -> list[AuditItem] | str:
    verdicts = _b1(ctx)
    if not verdicts:
        return "no B1 verdicts"
    rate = sum(f.severity != "pass" for f in verdicts.values()) / len(verdicts)
    if rate <= ctx.config.b1_dissent_escalate:
        return f"B1 dissent rate {rate:.3f} <= {ctx.config.b1_dissent_escalate}"
    return [i for i in items if i.item_id in verdicts]


async def _ambiguity(items: list[AuditItem], ctx: AuditContext, panel: Panel) -> AgentResult:
    """B4: the panel re-reads the item and lists every defensible option; a majority seeing more than one fails."""
    answers = await panel.ask([render(i, "b4_ambiguity") for i in items], Defensible, B4_AMBIGUITY.name)
    findings = []
    for item, a in zip(items, answers, strict=True):
        if len(a) < 2:
            continue
        ambiguous = _majority(a.values(), lambda x: len(set(x.defensible)) > 1)
        findings.append(
            B4_AMBIGUITY.finding(
                item,
                "fail" if ambiguous else "pass",
                {"defensible": {j: sorted(set(x.defensible)) for j, x in a.items()}},
            )
        )
    return AgentResult(findings)


def _disputed(items: list[AuditItem], ctx: AuditContext) -> list[AuditItem] | str:
    disputed = {i for i, f in _b1(ctx).items() if f.severity == "warn"}
    return [i for i in items if i.item_id in disputed] or "no disputed B1 verdicts"


async def _verifier_skip(items: list[AuditItem], ctx: AuditContext, panel: Panel) -> AgentResult:
    """B5: self-consistency probe: the B1 question re-prompted to fresh samples of the panel."""
    prompts = [render(i, "b1_answer") for i in items]
    rounds = [await panel.ask(prompts, Vote, B5_VERIFIER_SKIP.name, sample_index=s) for s in (1, 2)]
    findings = []
    for k, item in enumerate(items):
        votes = [v.answer for r in rounds for v in r[k].values()]
        if len(votes) < 2:
            continue
        agree = sum(v == _key(item) for v in votes)
        severity: Severity = "fail" if 2 * agree < len(votes) else "warn" if agree < len(votes) else "pass"
        findings.append(B5_VERIFIER_SKIP.finding(item, severity, {"resampled_votes": votes, "key": _key(item)}))
    return AgentResult(findings)


def _b1_b2_disagree(items: list[AuditItem], ctx: AuditContext) -> list[AuditItem] | str:
    b2 = ctx.results.get(B2_CLOSED_BOOK.name)
    solvable = {f.item_id for f in (b2.findings if b2 else []) if f.severity == "warn"}
    rejected = {i for i, f in _b1(ctx).items() if f.severity == "fail"}
    return [i for i in items if i.item_id in solvable & rejected] or "no B1/B2 disagreement"


async def _source_swap(items: list[AuditItem], ctx: AuditContext, panel: Panel) -> AgentResult:
    """C3: the panel answers from alternate source facts (other items' facts that mention the key); an answer that
    does not survive the swap fails."""
    pool = ctx.pool or items
    findings, asks = [], []
    for item in items:
        key_text = item.options[item.answer_index].lower()
        alternates = tuple(
            sorted(
                {
                    f
                    for other in pool
                    if other.item_id != item.item_id
                    for f in other.fact_texts
                    if key_text in f.lower()
                }
                - set(item.fact_texts)
            )
        )[:3]
        if alternates:
            asks.append((item, alternates))
        else:
            findings.append(C3_SOURCE_SWAP.finding(item, "warn", {"note": "no alternate source mentions the key"}))
    answers = await panel.ask([render(i, "c3_source_swap", facts=a) for i, a in asks], Vote, C3_SOURCE_SWAP.name)
    for (item, alternates), votes in zip(asks, answers, strict=True):
        if (f := _answer_verdict(C3_SOURCE_SWAP, item, votes)) is not None:
            findings.append(
                Finding(
                    f.item_id,
                    f.agent,
                    f.agent_version,
                    f.severity,
                    {**f.payload, "alternate_facts": list(alternates)},
                    f.input_hash,
                )
            )
    return AgentResult(findings)


def _flagship_summary(item: AuditItem, ctx: AuditContext) -> str:
    kina = ctx.config.kina
    answers = [a for a in ctx.answers if a.item_id == item.item_id and kina and a.model in kina.flagships]
    return ", ".join(f"{a.model}: {'right' if a.correct else 'wrong'}" for a in answers) or "(none)"


async def _consensus(items: list[AuditItem], ctx: AuditContext, panel: Panel) -> AgentResult:
    """K4: three judges score four feature axes and vote; the item is admitted on >= 2 yes votes."""
    assert ctx.config.kina is not None
    need = ctx.config.kina.consensus_admit
    answers = await panel.ask(
        [render(i, "k4_consensus", flagships=_flagship_summary(i, ctx)) for i in items], Consensus, K4_CONSENSUS.name
    )
    findings = []
    for item, a in zip(items, answers, strict=True):
        if len(a) < need:
            continue
        yes = sum(x.admit for x in a.values())
        findings.append(
            K4_CONSENSUS.finding(
                item,
                "pass" if yes >= need else "fail",
                {"yes": yes, "judges": {j: x.model_dump() for j, x in a.items()}},
            )
        )
    return AgentResult(findings)


def _kina(items: list[AuditItem], ctx: AuditContext) -> list[AuditItem] | str:
    return items if ctx.config.kina is not None else "not a KINA-style spec (audit.kina unset)"


def _returned(items: list[AuditItem], ctx: AuditContext) -> list[AuditItem] | str:
    if ctx.config.kina is None or not ctx.config.kina.refinement:
        return "refinement loop switched off (audit.kina.refinement)"
    k4 = ctx.results.get(K4_CONSENSUS.name)
    returned = {f.item_id for f in (k4.findings if k4 else []) if f.severity == "fail"}
    return [i for i in items if i.item_id in returned] or "no item returned by the consensus"


async def _refine(items: list[AuditItem], ctx: AuditContext, panel: Panel) -> AgentResult:
    """K5: the diagnosis agent looks for counter-evidence, the refinement agent revises, and the revision is re-audited
    (item-level agents and the consensus). The revision is a proposal in the payload: a human re-scores it (KINA 4.1)."""
    assert ctx.config.kina is not None
    name = ctx.config.kina.refinement_model or panel.judges[0].name
    agent_model = [j for j in panel.judges if j.name == name] or panel.judges[:1]
    diagnoses = await panel.ask(
        [render(i, "k5_diagnose") for i in items], Diagnosis, K5_REFINEMENT.name, judges=agent_model
    )
    todo = [(i, next(iter(d.values()))) for i, d in zip(items, diagnoses, strict=True) if d]
    revisions = await panel.ask(
        [render(i, "k5_refine", diagnosis="; ".join(d.counter_evidence)) for i, d in todo],
        Revision,
        K5_REFINEMENT.name,
        judges=agent_model,
    )
    revised = []
    for (item, diagnosis), r in zip(todo, revisions, strict=True):
        if r and (rev := next(iter(r.values()))).answer_index < len(rev.options):
            revised.append(
                (
                    item,
                    diagnosis,
                    AuditItem(
                        item.item_id + ":rev",
                        rev.question,
                        tuple(rev.options),
                        rev.answer_index,
                        item.fact_texts,
                        len(item.options),
                        item.difficulty,
                        item.strategy,
                        item.generator,
                        item.group,
                    ),
                )
            )
    rechecked = (await _consensus([r for *_, r in revised], ctx, panel)).findings
    consensus = {f.item_id: f.severity for f in rechecked}
    findings = []
    for item, diagnosis, rev in revised:
        static = {a.name: f.severity for a in ITEM_AGENTS if (f := a.run(rev, ctx.config)) is not None}
        cleared = consensus.get(rev.item_id) == "pass" and "fail" not in static.values()
        findings.append(
            K5_REFINEMENT.finding(
                item,
                "warn",
                {
                    "counter_evidence": diagnosis.counter_evidence,
                    "revision": {
                        "question": rev.question,
                        "options": list(rev.options),
                        "answer_index": rev.answer_index,
                    },
                    "reaudit": {**static, K4_CONSENSUS.name: consensus.get(rev.item_id)},
                    "cleared": cleared,
                    "needs_human_rescore": True,
                },
            )
        )
    return AgentResult(findings)


B1_TRI_JUDGE_ANSWER = JudgeAgent("B1_tri_judge_answer", prompt_version("b1_answer"), _tri_judge_answer)
B2_CLOSED_BOOK = JudgeAgent("B2_closed_book_solvability", prompt_version("b2_closed_book"), _closed_book)
C4_DIFFICULTY = JudgeAgent("C4_difficulty_audit", prompt_version("c4_difficulty"), _difficulty)
B4_AMBIGUITY = JudgeAgent("B4_ambiguity", prompt_version("b4_ambiguity"), _ambiguity, _dissent_elevated)
B5_VERIFIER_SKIP = JudgeAgent("B5_verifier_skip", prompt_version("b1_answer"), _verifier_skip, _disputed)
C3_SOURCE_SWAP = JudgeAgent("C3_source_swap", prompt_version("c3_source_swap"), _source_swap, _b1_b2_disagree)
K4_CONSENSUS = JudgeAgent("K4_judge_consensus", prompt_version("k4_consensus"), _consensus, _kina)
K5_REFINEMENT = JudgeAgent(
    "K5_refinement", prompt_version("k5_diagnose", "k5_refine", "k4_consensus"), _refine, _returned
)

JUDGE_AGENTS: tuple[JudgeAgent, ...] = (
    B1_TRI_JUDGE_ANSWER,
    B2_CLOSED_BOOK,
    C4_DIFFICULTY,
    B4_AMBIGUITY,
    B5_VERIFIER_SKIP,
    C3_SOURCE_SWAP,
    K4_CONSENSUS,
    K5_REFINEMENT,
)

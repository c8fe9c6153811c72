"""Filters 1 and 2 of OenoBench B.1 on a parsed sentence: conjunction split and reference resolution.

A sentence is cut at a coordinating 'and'/'but' (or a 'while' clause) when both sides have a finite verb; a clause
that shares its subject with the first ("Barolo is made in Piedmont and ages for 38 months") borrows it. Pronouns
and demonstratives are replaced by their referent from context (the sentence's or the previous sentence's subject,
the person last named, the document's topic entity); a clause whose it/this/that stays unresolved is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from benchmark_platform.facts.models import Mention

if TYPE_CHECKING:  # spaCy loads only where a document is parsed (facts/prose.py)
    from spacy.tokens import Span, Token

FINITE_TAGS = frozenset({"VBD", "VBZ", "VBP", "MD"})
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
_NEUTER = frozenset({"it", "its"})
_PLURAL = frozenset({"they", "them", "their", "theirs"})
_PERSONAL = frozenset({"he", "him", "his", "she", "her", "hers"})
_DEMONSTRATIVE = frozenset({"this", "that", "these", "those"})
REFERRING_WORDS = _NEUTER | _PLURAL | _PERSONAL | _DEMONSTRATIVE  # words reference resolution looks at


@dataclass(frozen=True)
class Antecedent:
    text: str
    mentions: tuple[Mention, ...] = ()
    plural: bool = False
    head_lemma: str = ""


@dataclass
class Context:
    """What earlier sentences of the paragraph (and the document title) make available as referents."""

    topic: Antecedent | None = None
    subject: Antecedent | None = None
    person: Antecedent | None = None


@dataclass
class Clause:
    head: Token  # the clause's verb (the sentence root for the first clause)
    tokens: list[Token]  # the clause's own tokens, in order (connectives removed)
    subject_prefix: list[Token] = field(default_factory=list)  # subject borrowed from the clause it was cut from
    split: bool = False

    @property
    def start_char(self) -> int:
        return self.tokens[0].idx

    @property
    def end_char(self) -> int:
        last = self.tokens[-1]
        return last.idx + len(last.text)

    @property
    def has_subject(self) -> bool:
        return bool(self.subject_prefix) or subject_of(self.head) is not None


def subject_of(token: Token) -> Token | None:
    return next((c for c in token.children if c.dep_ in SUBJECT_DEPS), None)


def is_finite(token: Token) -> bool:
    return token.pos_ in ("VERB", "AUX") and (
        token.tag_ in FINITE_TAGS or any(c.dep_ in ("aux", "auxpass") and c.tag_ in FINITE_TAGS for c in token.children)
    )


def _connectives(head: Token, child: Token, conjunctions: frozenset[str]) -> list[Token] | None:
    """The tokens joining `child`'s clause to `head`'s if it is a splittable independent clause, else None."""
    if not (is_finite(head) and is_finite(child)):
        return None
    if child.dep_ == "conj":
        ccs = [t for t in head.children if t.dep_ == "cc" and t.i < child.left_edge.i] + [
            t for t in child.children if t.dep_ == "cc" and t.i < child.i
        ]
        cc = max(ccs, key=lambda t: t.i, default=None)
        if cc is None or cc.lower_ not in conjunctions:
            return None
        joint = [cc]
    elif child.dep_ == "advcl" and subject_of(child) is not None:
        mark = next((t for t in child.children if t.dep_ == "mark"), None)
        if mark is None or mark.lower_ not in conjunctions or mark.i != child.left_edge.i:
            return None
        joint = [mark]
    else:
        return None
    doc = head.doc
    before = joint[0].i - 1  # a comma or semicolon right before the connective goes with it
    if before >= 0 and doc[before].is_punct:
        joint.append(doc[before])
    return joint


def split_clauses(
    sentence: Span, conjunctions: frozenset[str], mentions: list[tuple[int, int, Mention]]
) -> list[Clause]:
    """The sentence's clauses, in order; a sentence without a splittable conjunction is one clause."""
    root = sentence.root
    heads: list[tuple[Token, Token | None]] = [(root, None)]  # (clause head, head it was cut from)
    removed: set[int] = set()
    queue = [root]
    while queue:
        head = queue.pop()
        for child in head.children:
            joint = _connectives(head, child, conjunctions)
            if joint is not None:
                heads.append((child, head))
                removed.update(t.i for t in joint)
                queue.append(child)
    if len(heads) == 1:
        tokens = [t for t in sentence if not t.is_space]
        return [Clause(head=root, tokens=tokens)] if tokens else []
    cut = {h.i for h, _ in heads}
    owner = {t.i: _clause_head(t, cut) for t in sentence}
    clauses: list[Clause] = []
    by_head: dict[int, Clause] = {}
    for head, parent in sorted(heads, key=lambda pair: pair[0].i):
        tokens = [t for t in sentence if owner[t.i] == head.i and t.i not in removed and not t.is_space]
        # a comma before the next clause, or the sentence's full stop when another clause comes in between
        while (
            tokens
            and tokens[-1].is_punct
            and (tokens[-1].text in ",;:" or len(tokens) > 1 and tokens[-1].i != tokens[-2].i + 1)
        ):
            tokens.pop()
        if not tokens:
            continue
        clause = Clause(head=head, tokens=tokens, split=parent is not None)
        if parent is not None and subject_of(head) is None:
            subject = subject_of(parent)
            if subject is not None:
                start, end = noun_phrase(subject, mentions)
                clause.subject_prefix = list(sentence.doc[start:end])
            elif parent.i in by_head:
                clause.subject_prefix = by_head[parent.i].subject_prefix
        by_head[head.i] = clause
        clauses.append(clause)
    return clauses


def _clause_head(token: Token, cut: set[int]) -> int:
    """The nearest clause head at or above the token."""
    node = token
    while node.i not in cut and node.head.i != node.i:
        node = node.head
    return node.i


def noun_phrase(token: Token, mentions: list[tuple[int, int, Mention]]) -> tuple[int, int]:
    """Token range [start, end) of the noun phrase a subject token heads: its pre-modifiers and head, widened to
    cover an entity name that runs past the head ('Brunello di Montalcino')."""
    start, end = token.left_edge.i, token.i + 1
    for m_start, m_end, _ in mentions:
        if m_start <= token.i < m_end:
            start, end = min(start, m_start), max(end, m_end)
    return start, end


_SPEAKERS = frozenset({"i", "me", "my", "we", "us", "our", "you", "your"})


def antecedent_from(subject: Token, mentions: list[tuple[int, int, Mention]]) -> Antecedent | None:
    """The subject's noun phrase as a referent; none for a pronoun, or a phrase about the writer or reader."""
    if subject.pos_ not in ("NOUN", "PROPN"):
        return None
    start, end = noun_phrase(subject, mentions)
    doc = subject.doc
    if any(t.lower_ in _SPEAKERS for t in doc[start:end]):
        return None
    return Antecedent(
        text=doc[start:end].text,
        mentions=tuple(m for s, e, m in mentions if s < end and e > start),
        plural=subject.tag_ in ("NNS", "NNPS"),
        head_lemma=_lemma(subject),
    )


def _lemma(token: Token) -> str:
    word = token.lower_
    return word[:-1] if token.tag_ in ("NNS", "NNPS") and word.endswith("s") else word


@dataclass
class Resolved:
    text: str
    mentions: tuple[Mention, ...]  # the referents' entities
    replaced: int


def _expletive(token: Token) -> bool:
    """'It' that stands for a clause: 'It is believed that ...', 'It is hard to ...'."""
    if token.dep_ == "expl":
        return True
    head = token.head
    if any(c.dep_ == "ccomp" and c.left_edge.lower_ in ("that", "whether", "if") for c in head.children):
        return True
    return any(c.dep_ == "acomp" and any(g.dep_ == "xcomp" for g in c.children) for c in head.children)


def resolve(
    clause: Clause, own_subject: Antecedent | None, context: Context, people: list[tuple[int, Antecedent]]
) -> Resolved | str:
    """The clause's text with pronouns/demonstratives replaced, or the reason it cannot be resolved. `people`
    are the sentence's person mentions (token index, referent): 'his' may point back to one of them."""
    tokens = [*clause.subject_prefix, *clause.tokens]
    replacements: dict[int, str] = {}
    skip: set[int] = set()
    mentions: list[Mention] = []
    for position, token in enumerate(tokens):
        word = token.lower_
        if token.i in skip:
            continue
        referent: Antecedent | None = None
        suffix = ""
        if word in _NEUTER and token.pos_ == "PRON":
            if _expletive(token):
                return "expletive 'it' without a referent"
            candidates: tuple[Antecedent | None, ...] = (own_subject, context.subject, context.topic)
            referent = next((c for c in candidates if c is not None and not c.plural), None)
            if referent is None:
                return f"unresolved '{word}'"
            suffix = "'s" if word == "its" else ""
        elif word in _PLURAL and token.pos_ == "PRON":
            candidates = (own_subject, context.subject)
            referent = next((c for c in candidates if c is not None and c.plural), None)
            if referent is None:
                return f"unresolved '{word}'"
            suffix = "'" if word in ("their", "theirs") else ""
        elif word in _PERSONAL and token.pos_ == "PRON":
            earlier = [person for start, person in people if start < token.i]
            referent = earlier[-1] if earlier else context.person
            if referent is None:
                return f"unresolved '{word}'"
            suffix = "'s" if token.tag_ == "PRP$" or word in ("his", "hers") else ""
        elif word in _DEMONSTRATIVE and token.tag_ == "DT":
            if token.dep_ != "det":
                return f"unresolved demonstrative '{word}'"
            noun = token.head
            candidates = (context.subject, context.topic)
            referent = next((c for c in candidates if c is not None and c.head_lemma == _lemma(noun)), None)
            if referent is None or noun.i < token.i:
                return f"unresolved demonstrative '{word}'"
            skip.update(range(token.i + 1, noun.i + 1))
        if referent is None:
            continue
        text = referent.text + suffix
        if position == 0:
            text = text[:1].upper() + text[1:]
        elif text.split(" ", 1)[0] in ("The", "A", "An"):
            text = text[:1].lower() + text[1:]
        replacements[token.i] = text
        mentions.extend(referent.mentions)
    pieces = []
    for position, token in enumerate(tokens):
        if token.i in skip:
            continue
        space = " " if position == len(clause.subject_prefix) - 1 else token.whitespace_
        pieces.append(replacements.get(token.i, token.text) + space)
    if len(pieces) > 1 and tokens[-1].is_punct:  # the full stop after a removed connective clause
        pieces[-2] = pieces[-2].rstrip()
    text = "".join(pieces).strip().rstrip(",;:").strip()
    if text and text[-1] not in ".!?":
        text = text.rstrip(".") + "."
    text = text[:1].upper() + text[1:]
    return Resolved(text=text, mentions=tuple(mentions), replaced=len(replacements))

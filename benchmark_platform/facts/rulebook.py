"""French appellation rulebooks (INAO cahiers des charges) -> attribute facts in English.

The rulebooks follow one legal outline (I. Nom ... V. Encépagement, VI. Conduite du vignoble, VII. Récolte et
maturité, VIII. Rendements, IX. Transformation, élaboration, élevage ...), so each attribute is read by a French
pattern inside its chapter: varieties (principal / accessory / permitted, by their INAO colour codes), planting
density, buds per vine, average maximum load, yield and yield cap, minimum sugar and natural alcohol, maximum alcohol
after enrichment, residual sugar and sulphur dioxide limits, ageing and release dates, colours and styles, the
département of the area, producers' cellar capacity and claim deadline. Tables (one row per line, cells joined by
" | ", see ingest/adapters/legal_text.py) are read column by column under their header.

Every fact is anchored at the span of its French value in the document text (a value the text does not state
cannot become a fact); its English sentence, unit and terms come from the spec's glossary (RulebookConfig), and
the appellation name stays as written. A value the glossary cannot put into English is rejected, not guessed.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from benchmark_platform.facts.config import FactsConfig, RulebookAttribute, RulebookConfig
from benchmark_platform.facts.gazetteer import Entity, Gazetteer
from benchmark_platform.facts.models import Candidate, Mention, Rejection, SourceDocument

# --- the document's outline --------------------------------------------------------------------------------------

_CHAPTER = re.compile(r"^\s*\**\s*([IVX]+)\s*[.\-―–]+\s*(?:―\s*)?(.*)$")
_NAME = re.compile(
    r"prétendre (?:à l'appellation d'origine contrôlée|aux appellations d'origine contrôlées)\s*[«\"“]?\s*"
    r"([^,\"«»“”]+?)\s*[»\"”]?\s*,",
    re.IGNORECASE,
)
_HEADING_NAME = re.compile(r"APPELLATION D'ORIGINE\s+CONTRÔLÉE\s*[«\"“]?\s*([^\"«»“”\n|]+?)\s*[»\"”]?\s*$", re.I | re.M)
_SMALL_WORDS = frozenset({"de", "du", "des", "en", "la", "le", "les", "et", "sur", "sous", "aux", "au", "à"})


def appellation_name(text: str) -> str | None:
    """The appellation's name as the rulebook writes it in its first article, else from its heading."""
    found = _NAME.search(text[:6000])
    if found:
        return " ".join(found.group(1).split())
    found = _HEADING_NAME.search(text[:3000])
    return smart_title(found.group(1)) if found else None


def smart_title(name: str) -> str:
    """'CÔTES DE BORDEAUX-SAINT-MACAIRE' -> 'Côtes de Bordeaux-Saint-Macaire'; varieties as grape books write them:
    'muscat à petits grains' -> 'Muscat à Petits Grains', "pineau d'aunis" -> "Pineau d'Aunis"."""

    def word(w: str, first: bool) -> str:
        low = w.lower()
        if not first and low in _SMALL_WORDS:
            return low
        elided = re.match(r"^([dl]['’])(.+)$", low)
        if elided:
            return (elided.group(1).upper() if first else elided.group(1)) + word(elided.group(2), True)
        return "-".join(p[:1].upper() + p[1:] for p in low.split("-"))

    return " ".join(word(w, i == 0) for i, w in enumerate(name.split()))


@dataclass(frozen=True)
class Line:
    start: int
    text: str
    chapter: str  # roman numeral of the enclosing chapter ('V', 'VI', ...), '' before the first
    # the wines of a sub-heading the line lies under ('a) Vins susceptibles de bénéficier de la mention " vin
    # jaune "'), in French; '' outside such a section
    section: str = ""


# a sub-heading naming the wines its provisions are for, and any numbered or lettered heading (which ends it)
_SECTION = re.compile(
    r"^(?:[a-z]\)|\d+°?)\s*(?:Vins|Pour les vins) susceptibles de bénéficier de la mention\s*[«\"“]?\s*"
    r"(vin jaune|vin de paille|sélection de grains nobles|blanquette de Limoux|méthode ancestrale)\b",
    re.IGNORECASE,
)
_HEADING = re.compile(r"^(?:[a-z]\)|\d+°|\d+ [A-Z])")


def lines(text: str) -> list[Line]:
    """The text's lines with the Chapitre Ier chapter each lies in (Chapitre II's obligations keep their own
    numbering: their chapter is 'II:<n>') and the wines of the sub-heading they lie under."""
    out, chapter, part, at, section = [], "", 1, 0, ""
    for raw in text.split("\n"):
        stripped = raw.strip()
        if re.match(r"^\**\s*Chapitre\s+II\b", stripped, re.IGNORECASE):
            part = 2
        found = _CHAPTER.match(stripped)
        if found and len(stripped) < 160:
            chapter = found.group(1) if part == 1 else f"{part}:{found.group(1)}"
            section = ""
        elif (named := _SECTION.match(stripped)) is not None:
            section = named.group(1)
        elif _HEADING.match(stripped):
            section = ""
        out.append(Line(at, raw, chapter, section))
        at += len(raw) + 1
    return out


# --- values ------------------------------------------------------------------------------------------------------

_NUMBER = r"(\d{1,3}(?:[ \u00a0\u202f]\d{3})+|\d+(?:,\s?\d+)?)"


_WORDS = {
    "un": 1,
    "une": 1,
    "deux": 2,
    "trois": 3,
    "cinq": 5,
    "six": 6,
    "huit": 8,
    "neuf": 9,
    "dix": 10,
    "douze": 12,
    "quinze": 15,
    "dix-huit": 18,
    "vingt-quatre": 24,
    "trente-six": 36,
}
# durations are written one way: 'one month', '15 days' (never '1 month(s)'); the glossary gives the plural unit
_DURATION_UNITS = {"months": "month", "days": "day", "working days": "working day", "years": "year"}


def number(raw: str) -> str:
    """French number -> English: '5 500' -> '5,500', '13, 5' -> '13.5', 'dix' -> '10'."""
    if raw.lower() in _WORDS:
        return str(_WORDS[raw.lower()])
    compact = re.sub(r"[ \u00a0\u202f]", "", raw)
    if "," in compact:
        whole, frac = compact.split(",", 1)
        frac = frac.rstrip("0")  # '12,50 %' is 12.5%
        return f"{int(whole):,}.{frac}" if frac else f"{int(whole):,}"
    return f"{int(compact):,}"


def with_unit(value: str, unit: str) -> str:
    if unit.startswith("%"):
        return f"{value}{unit}"
    if value == "1" and unit in _DURATION_UNITS:
        return f"one {_DURATION_UNITS[unit]}"
    return f"{value} {unit}"


class Untranslated(ValueError):
    """A French phrase the glossary has no English for."""


class Glossary:
    def __init__(self, entries: dict[str, str]) -> None:
        self.entries = {k.lower(): v for k, v in entries.items()}

    def __call__(self, french: str) -> str:
        key = " ".join(french.lower().replace("\u2019", "'").split())
        if key not in self.entries:
            raise Untranslated(french)
        return self.entries[key]


_MONTHS = "janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre"
_DATE = re.compile(
    rf"(\d{{1,2}})(?:er)?\s+({_MONTHS})\s+((?:de l'année|de la \w+ année|qui suit|suivant|de la récolte)[^.;:<]*?"
    rf"r[ée]colte)",
    re.IGNORECASE,
)


def date(match: re.Match[str], glossary: Glossary, at_the_latest: bool = False) -> str | None:
    """'1er novembre de l'année qui suit celle de la récolte' -> '1 November of the year after the harvest'.

    A deadline 'au plus tard le 31 décembre' is the same deadline as 'avant le 1er janvier': it is written in the
    one form 'before' takes, the day after (None when that day is not certain: the end of February)."""
    relative = glossary(re.sub(r"\bla\s?la\b", "la", match.group(3)))
    day, month = int(match.group(1)), glossary(match.group(2))
    if at_the_latest:
        shifted = _day_after(day, month, relative)
        if shifted is None:
            return None
        day, month, relative = shifted
    return f"{day} {month} {relative}"


_MONTH_DAYS = {
    "January": 31,
    "March": 31,
    "April": 30,
    "May": 31,
    "June": 30,
    "July": 31,
    "August": 31,
    "September": 30,
    "October": 31,
    "November": 30,
    "December": 31,
}
_MONTH_ORDER = list(_MONTH_DAYS)[:1] + ["February"] + list(_MONTH_DAYS)[1:]
_NEXT_YEAR = {"of the harvest year": "of the year after the harvest"}


def _day_after(day: int, month: str, relative: str) -> tuple[int, str, str] | None:
    length = _MONTH_DAYS.get(month)
    if length is None or day > length:
        return None
    if day < length:
        return day + 1, month, relative
    if month != "December":
        return 1, _MONTH_ORDER[_MONTH_ORDER.index(month) + 1], relative
    return (1, "January", _NEXT_YEAR[relative]) if relative in _NEXT_YEAR else None


# wine colours and types a sentence or table row can qualify a value with ('Les vins rouges ...', 'Vins blancs')
_QUALIFIER = re.compile(
    r"\bvins?\s+(?:blancs?|rouges?|rosés?|gris|mousseux|tranquilles?|doux naturels?|liquoreux|moelleux|"
    r"de paille|jaunes?|primeurs?|nouveaux?)(?:\s*(?:,|et|ou)\s*(?:blancs?|rouges?|rosés?|gris))*\b",
    re.IGNORECASE,
)
# a value stated for part of the wines right after it: '194 grammes par litre de moût pour le merlot'
_FOR = re.compile(
    r"\s*,?\s*pour (?:les |le |la |l')(vins? [^,;.]+?|autres cépages|[a-zà-ÿ' -]+?)(?=\s*(?:,|;|\.|et \d|et à |et de |$))",
    re.I,
)
_COLOUR_WORD = re.compile(r"\b(?:blancs?|rouges?|rosés?|gris)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Found:
    """One attribute value in the text: its span (the evidence), the English value and a qualifier."""

    attribute: str
    start: int
    end: int
    value: str
    qualifier: str = ""  # e.g. 'red wines', '' when the value holds for every wine of the appellation


def _qualifier(line: str, at: int, glossary: Glossary, after: int | None = None) -> str:
    """The wines a value in `line` (at offset `at`, its unit ending at `after`) is stated for: 'pour le merlot' /
    'pour les vins rouges' right after it, else the last wine colour/type named before it in its sentence; none when
    that names every colour (blancs, rouges et rosés) or nothing."""
    if after is not None and (following := _FOR.match(line, after)):
        named_for = following.group(1).strip()
        if named_for.lower().startswith("vin"):
            return _wines(named_for, glossary)
        if named_for.lower() == "autres cépages":
            return glossary(named_for)
        if named_for.islower() and "cépage" not in named_for and len(named_for.split()) <= 3:  # 'le merlot'
            return f"from {smart_title(named_for)}"
    sentence_start = max(line.rfind(". ", 0, at), line.rfind("; ", 0, at), 0)
    named = [m for m in _QUALIFIER.finditer(line, sentence_start, at)]
    return _wines(named[-1].group(0), glossary) if named else ""


def _wines(french: str, glossary: Glossary) -> str:
    return "" if len(_COLOUR_WORD.findall(french)) >= 3 else glossary(french)


# --- the attributes ------------------------------------------------------------------------------------------------

Reader = Callable[[Line, Glossary], Iterator[Found]]


def _simple(attribute: str, chapters: tuple[str, ...], pattern: str, dated: bool = False) -> Reader:
    """A value stated by one French phrase. Group 'v' (or 'v2' in a second alternative) is the number and 'u' ('u2')
    its unit, which together are the evidence; a dated attribute's 'v' is where its date starts."""
    compiled = re.compile(pattern, re.IGNORECASE)

    def read(line: Line, glossary: Glossary) -> Iterator[Found]:
        if line.chapter not in chapters:
            return
        for m in compiled.finditer(line.text):
            v, u = ("v", "u") if m.group("v") is not None else ("v2", "u2")
            start = m.start(v)
            if dated:
                found = _DATE.match(line.text, start)
                dated_value = None if found is None else date(found, glossary, "au plus tard" in m.group(0).lower())
                if found is None or dated_value is None:
                    continue
                value, end = dated_value, found.end()
            else:
                value, end = with_unit(number(m.group(v)), glossary(m.group(u))), m.end(u)
            qualifier = _qualifier(line.text, start, glossary, end)
            yield Found(attribute, line.start + start, line.start + end, value, qualifier)

    return read


_VARIETY = re.compile(r"([a-zà-ÿœ][a-zà-ÿœ'’ -]*?[a-zà-ÿœ])\s+(N|B|G|Rs|Rg)\b")


def _varieties(line: Line, glossary: Glossary) -> Iterator[Found]:
    """'cépages principaux : cabernet franc N, merlot N ...': every variety by its INAO colour code."""
    if line.chapter != "V":
        return
    low = line.text.lower()
    label = re.search(r"cépages?\s+(principaux|principal|accessoires?|suivants?)|cépage\s+\w+\s*:", low)
    if label is None or ":" not in low[label.start() :]:
        return
    role = label.group(1) or ""
    attribute = (
        "principal_variety" if role.startswith("principa") else "accessory_variety" if role.startswith("acc") else ""
    )
    colon = low.index(":", label.start())
    listing = re.sub(r"\([^)]*\)", lambda m: " " * len(m.group(0)), line.text[colon + 1 :])  # '(ou malbec)'
    for m in _VARIETY.finditer(listing):
        name = m.group(1).strip(" '’-")
        if re.match(r"dite?\s", name, flags=re.IGNORECASE):  # 'araignan B dit picardan B': a synonym, not a variety
            continue
        name = re.sub(r"^(?:et|ou|les?|la|cépages?)\s+", "", name, flags=re.IGNORECASE)
        if not name or len(name) < 3 or name.lower() in ("et", "ou"):
            continue
        start = line.start + colon + 1 + m.start(1) + m.group(1).index(name)
        display = smart_title(name)
        yield Found("variety", start, start + len(name), display)
        if attribute:  # the role's evidence is the listing from its label to the variety
            yield Found(attribute, line.start + label.start(), start + len(name), display)


# a variety or a listing stated in one sentence ('Les vins sont issus du cépage viognier B.', '... du seul cépage
# savagnin B', '... des cépages marsanne B et roussanne B'), not a heading over a table ('des cépages suivants :')
_ISSUED_FROM = re.compile(
    r"(?<!peuvent être )issus (?:exclusivement )?(?:(?P<one>du seul cépage|du cépage)|des cépages)\s+(?!suivants)"
    r"(?P<list>[^.:;|]+)",
    re.IGNORECASE,
)


def _sentence_varieties(line: Line, glossary: Glossary) -> Iterator[Found]:
    """Varieties a sentence of chapter V names after 'issus du cépage' / 'issus des cépages'; one variety named
    with 'du (seul) cépage' is the appellation's (or that colour's) only variety: Condrieu is Viognier alone."""
    if line.chapter != "V" or " | " in line.text:
        return
    for m in _ISSUED_FROM.finditer(line.text):
        listing = re.sub(r"\([^)]*\)", lambda p: " " * len(p.group(0)), m.group("list"))
        named = [v for v in _VARIETY.finditer(listing) if not re.match(r"dite?\s", v.group(1), re.I)]
        for v in named:
            name = re.sub(r"^(?:et|ou)\s+", "", v.group(1).strip(" '’-"), flags=re.IGNORECASE)
            start = line.start + m.start("list") + v.start(1) + v.group(1).index(name)
            yield Found("variety", start, start + len(name), smart_title(name))
            if m.group("one") and len(named) == 1:
                qualifier = _qualifier(line.text, m.start(), glossary)
                yield Found("sole_variety", line.start + m.start(), start + len(name), smart_title(name), qualifier)


# labelling mentions the rulebook provides for (chapter II 'mentions complémentaires', chapter XII 'étiquetage'):
# the French term is the mention itself; the glossary adds what a reader needs ('sec' -> 'sec (dry)')
_MENTION = re.compile(
    r"(?:mentions?|termes?|dénominations? géographiques?|unité géographique plus grande)\s*(?:suivantes?\s*)?"
    r"[«\"“]\s*(?P<q>[^»\"”]{2,40}?)\s*[»\"”](?:\s*(?:et|ou)\s*[«\"“]\s*(?P<q2>[^»\"”]{2,40}?)\s*[»\"”])?"
    r"|(?:mentions?|termes?) (?P<bare>sélection de grains nobles|vin de paille|vin jaune|blanquette de Limoux|"
    r"méthode ancestrale|vin doux naturel|primeur|nouveau)\b"
    r"|dénomination géographique (?P<val>Val de Loire)\b",
    re.IGNORECASE,
)


# mentions that tell no appellation from another: the one every AOC carries, and the sweetness terms and vintage that
# EU labelling rules allow any wine (a rulebook that names 'sec' does not make 'sec' wrong for another appellation)
_EVERY_AOC = frozenset(
    {"appellation contrôlée", "appellation d'origine contrôlée", "sec", "demi-sec", "moelleux", "doux", "mousseux"}
)


def _mentions(line: Line, glossary: Glossary) -> Iterator[Found]:
    if line.chapter not in ("II", "XII", "XIII"):
        return
    for m in _MENTION.finditer(line.text):
        for group in ("q", "q2", "bare", "val"):
            if m.group(group) is None:
                continue
            french = " ".join(m.group(group).split())
            if french.lower() in _EVERY_AOC:
                continue
            value = glossary(french)
            yield Found("mention", line.start + m.start(group), line.start + m.end(group), value)


# élevage a rule measures in months: on the lees in bottle from tirage (sparkling wines), in cask under a veil of
# yeast (vin jaune)
_MONTHS_WORD = r"(?P<v>\d+|deux|six|neuf|douze|quinze|dix-huit|vingt-quatre|trente-six)"
_ELEVAGE = (
    (
        re.compile(
            rf"(?:élevage|conservation en bouteilles sur lies)\D{{0,25}}?(?:de )?{_MONTHS_WORD} mois minimum"
            r"(?: de conservation en bouteilles sur lies)?\s*(?:à compter de|après) la date (?:du |de )?tirage",
            re.I,
        ),
        "at least {n} in bottle on the lees from tirage",
    ),
    (
        re.compile(rf"durée minimale de {_MONTHS_WORD} mois de conservation en bouteilles sur lies", re.I),
        "at least {n} in bottle on the lees from tirage",
    ),
    (
        re.compile(rf"dégorgement ne peut être effectué avant une période de {_MONTHS_WORD} mois", re.I),
        "at least {n} on the lees before disgorgement",
    ),
    (
        re.compile(rf"dont {_MONTHS_WORD} mois minimum en f[ûu]ts?, sous voile et sans ouillage", re.I),
        "at least {n} in cask under a veil of yeast (sous voile), without topping up",
    ),
)
_FOR_MENTION = re.compile(r"mention (blanquette de Limoux|méthode ancestrale|vin jaune|vin de paille)", re.I)
_MILLESIME = re.compile(r"millésim", re.I)


def _elevage(line: Line, glossary: Glossary) -> Iterator[Found]:
    if line.chapter not in ("IX", "VII"):
        return
    for pattern, english in _ELEVAGE:
        for m in pattern.finditer(line.text):
            months = with_unit(number(m.group("v")), glossary("mois"))
            sentence_start = max(line.text.rfind(". ", 0, m.start()), 0)
            before = line.text[sentence_start : m.start()]
            named = _FOR_MENTION.search(line.text)
            if _MILLESIME.search(before):
                qualifier = "vintage wines"
            elif named:
                qualifier = glossary(named.group(1))
            else:
                qualifier = _qualifier(line.text, m.start(), glossary)
            yield Found("elevage", line.start + m.start("v"), line.start + m.end(), english.format(n=months), qualifier)


_CLAVELIN = re.compile(r"bouteille dite\s*[«\"“]\s*(Clavelin)\s*[»\"”][^.]*?(\d+) centilitres", re.I)


# sparkling wines sold in the bottle of their second fermentation, save the smallest and largest sizes
_PRISE_DE_MOUSSE = re.compile(
    r"commercialisés dans la bouteille à l'intérieur de laquelle a été réalisée la prise de mousse, à l'exception des "
    r"vins vendus dans des bouteilles d'un volume inférieur à (?P<small>\d+, ?\d+|\d+) centilitres ou supérieur à "
    r"(?P<large>\d+) centilitres",
    re.I,
)


_QUOTED_MENTION = re.compile(r"mention\s*[«\"“]?\s*(vin jaune|vin de paille)\b", re.I)


def _bottle(line: Line, glossary: Glossary) -> Iterator[Found]:
    """The bottle a rulebook reserves for the appellation or requires of its wines (chapter IX, conditionnement)."""
    if line.chapter != "IX":
        return
    for m in _CLAVELIN.finditer(line.text):
        value = f"the clavelin, a bottle of about {m.group(2)} cl reserved for the appellation"
        # 'réservée ... aux seuls vins ... bénéficiant de la mention " vin jaune "': vin jaune's bottle, not the AOC's
        named = _QUOTED_MENTION.search(line.text, m.end())
        qualifier = glossary(named.group(1)) if named else _qualifier(line.text, 0, glossary)
        yield Found("bottle", line.start + m.start(1), line.start + m.end(2), value, qualifier)
    for m in _PRISE_DE_MOUSSE.finditer(line.text):
        small, large = number(m.group("small")), number(m.group("large"))
        value = (
            f"the bottle of its second fermentation (prise de mousse), save bottles under {small} cl or over {large} cl"
        )
        yield Found(
            "bottle", line.start + m.start(), line.start + m.end(), value, _qualifier(line.text, m.start(), glossary)
        )


# (not 'la vendange manuelle est obligatoire pour ...': a rule for one way of making the wine, not the appellation's)
_HAND = re.compile(
    r"récoltés manuellement(?P<tries> par tries(?: successives)?)?"
    r"|L'utilisation de la machine à vendanger[^.]*? est interdite",  # no machine: picked by hand
    re.I,
)
BY_HAND, NO_HARVEST_RULE = "requires the grapes to be picked by hand", "sets no rule on how the grapes are picked"


def _harvest(line: Line, glossary: Glossary) -> Iterator[Found]:
    """Chapter VII: grapes picked by hand (and in successive passes, 'tries successives', for sweet wines)."""
    if line.chapter != "VII":
        return
    for m in _HAND.finditer(line.text):
        named = _FOR_MENTION.search(line.text[: m.start()])
        qualifier = glossary(named.group(1)) if named else _qualifier(line.text, m.start(), glossary)
        if not qualifier and re.search(
            r"vins\s*[«\"“]\s*liquoreux", line.text[: m.start()], re.I
        ):  # 'Les vins "liquoreux"'
            qualifier = glossary("vins liquoreux")
        yield Found("harvest_method", line.start + m.start(), line.start + m.end(), BY_HAND, qualifier)
        # 'by hand' holds for grapes picked in successive passes too: the passes are a fact of their own, so no
        # option ever offers one as the other's wrong answer
        if m.group("tries") is not None:
            yield Found(
                "harvest_passes",
                line.start + m.start("tries"),
                line.start + m.end("tries"),
                "in successive passes (tries successives)",
                qualifier,
            )


_COLOURS = re.compile(r"\b(rouges?|blancs?|rosés?)\b", re.IGNORECASE)
_STYLES = re.compile(
    r"\b(tranquilles?|mousseux|pétillants?|doux naturels?|liquoreux|moelleux|vin jaune|vins? de paille|primeurs?|"
    r"effervescents?)\b",
    re.IGNORECASE,
)


def _colours_and_styles(line: Line, glossary: Glossary) -> Iterator[Found]:
    """Chapter III ('Couleur et types de produit'): the colours and styles the appellation is reserved for."""
    if line.chapter != "III" or "vin" not in line.text.lower():
        return
    for attribute, pattern in (("colour", _COLOURS), ("style", _STYLES)):
        for m in pattern.finditer(line.text):
            yield Found(attribute, line.start + m.start(), line.start + m.end(), glossary(m.group(1)))


_DEPARTMENT = re.compile(
    r"départements?\s+(?:de la |de l'|du |des |de )((?:[A-ZÉÈ][\w'’-]+)(?:[- ](?:et-|de-|du-|sur-)?[A-ZÉÈ][\w'’-]+)*)"
)


def _departments(line: Line, glossary: Glossary) -> Iterator[Found]:
    """Chapter IV's geographical area: the départements its communes lie in."""
    if line.chapter != "IV":
        return
    for m in _DEPARTMENT.finditer(line.text):
        yield Found("department", line.start + m.start(1), line.start + m.end(1), m.group(1))


_READERS: dict[str, Reader] = {
    "variety": _varieties,
    "sole_variety": _sentence_varieties,
    "mention": _mentions,
    "elevage": _elevage,
    "bottle": _bottle,
    "harvest_method": _harvest,
    "colour": _colours_and_styles,
    "department": _departments,
    "min_density": _simple(
        "min_density",
        ("VI", "V"),
        rf"densité minimale (?:à la plantation |de plantation )?(?:de |est fixée à |égale à )?(?P<v>{_NUMBER})\s*(?P<u>pieds (?:par|à l')\s?hectare)",
    ),
    "max_buds": _simple(
        "max_buds",
        ("VI",),
        # buds per vine, not per spur or cane ('coursons à 2 yeux francs')
        r"(?:(?:pied|souche)(?:(?!courson|cots?\b|aste|long)[^.]){0,60}?(?:maximum de |au maximum |plus de )(?P<v>\d+)\s*"
        r"(?P<u>yeux francs)(?! par)"
        r"|(?:maximum de |au maximum |plus de )(?P<v2>\d+)\s*(?P<u2>yeux francs par (?:pied|souche)))",
    ),
    "max_load": _simple(
        "max_load",
        ("VI",),
        rf"charge maximale moyenne à la parcelle (?:est )?fixée à (?P<v>{_NUMBER})\s*(?P<u>kilogrammes (?:de raisin )?par hectare)",
    ),
    "base_yield": _simple(
        "base_yield",
        ("VIII",),
        rf"(?<!butoir )(?<!maximum de production )(?:Le |le )rendement (?:visé|mentionné).{{0,80}}?(?:est )?fixé(?:, [^:]{{0,60}},)? à (?P<v>{_NUMBER})\s*(?P<u>hectolitres par hectare)",
    ),
    "yield_cap": _simple(
        "yield_cap",
        ("VIII",),
        rf"rendement butoir .{{0,80}}?(?:est )?fixé(?:, [^:]{{0,60}},)? à (?P<v>{_NUMBER})\s*(?P<u>hectolitres par hectare)",
    ),
    "min_sugar": _simple(
        "min_sugar",
        ("VII",),
        rf"richesse en sucres? (?:des raisins )?inférieure à (?P<v>{_NUMBER})\s*(?P<u>grammes par litre de moût)"
        # the next value of the same sentence: '... pour le merlot et 180 grammes par litre de moût pour les autres'
        rf"|(?<!\d) et (?P<v2>{_NUMBER})\s*(?P<u2>grammes par litre de moût)(?= pour)",
    ),
    "min_natural_alcohol": _simple(
        "min_natural_alcohol",
        ("VII",),
        rf"titre alcoométrique volumique naturel minimum (?:de |égal à )(?P<v>{_NUMBER})\s*(?P<u>%(?: vol\.?)?)",
    ),
    "max_alcohol_after_enrichment": _simple(
        "max_alcohol_after_enrichment",
        ("IX", "VII"),
        rf"après enrichissement, (?:le )?titre alcoométrique volumique total (?:de |maximum de )(?P<v>{_NUMBER})\s*(?P<u>%(?: vol\.?)?)",
    ),
    "max_residual_sugar": _simple(
        "max_residual_sugar",
        ("IX",),
        rf"sucres fermentescibles \(glucose (?:\+|et) fructose\) inférieure ou égale à (?P<v>{_NUMBER})\s*(?P<u>grammes? par litre)",
    ),
    "max_total_so2": _simple(
        "max_total_so2",
        ("IX",),
        rf"anhydride sulfureux total inférieure ou égale à (?P<v>{_NUMBER})\s*(?P<u>milligrammes par litre)",
    ),
    "max_concentration": _simple(
        "max_concentration",
        ("IX",),
        rf"taux de concentration maximum de (?P<v>{_NUMBER})\s*(?P<u>%)",
    ),
    "ageing_until": _simple(
        "ageing_until",
        ("IX",),
        r"(?:élevés?|élevage) (?:au moins |au minimum |minimum )?jusqu'au (?P<v>\d)",
        dated=True,
    ),
    "release_from": _simple(
        "release_from",
        ("IX",),
        r"mis en marché à destination du consommateur (?:qu')?à partir du (?P<v>\d)",
        dated=True,
    ),
    "cellar_capacity": _simple(
        "cellar_capacity",
        ("IX",),
        rf"capacité de cuverie de vinification[^.]{{0,40}}? (?:à|de) (?P<v>{_NUMBER})\s*(?P<u>fois)",
    ),
    "export_notice": _simple(
        "export_notice",
        ("2:I", "2:II"),
        r"expédition hors du territoire national[^.]*?au moins (?P<v>\d+|cinq|huit|dix|quinze) "
        r"(?P<u>jours ouvrés) avant l'expédition",
    ),
    "bottling_notice": _simple(
        "bottling_notice",
        ("2:I", "2:II"),
        r"souhaitant conditionner[^.]*?(?:au moins|dans un délai de) (?P<v>\d+|trois|cinq|huit|dix|quinze) "
        r"(?P<u>jours ouvrés) (?:avant|précédant) (?:le premier )?(?:le )?conditionnement",
    ),
    "declassification_notice": _simple(
        "declassification_notice",
        ("2:I", "2:II"),
        r"déclassement[^.]{0,260}?(?:dans un délai (?:maximum )?(?:de |d')|au plus tard )"
        r"(?P<v>\d+|une?|trois|cinq|huit|dix|quinze)\s*(?P<u>mois|jours ouvrés|jours)(?: maximum)? après",
    ),
    "claim_deadline": _simple(
        "claim_deadline",
        ("2:I",),
        r"déclaration de revendication [^.]*?(?:avant|au plus tard) le (?P<v>\d)",
        dated=True,
    ),
}
# attribute ids the spec may configure, and the reader that finds each (one reader may find several attributes)
ATTRIBUTES: dict[str, str] = {
    "variety": "variety",
    "principal_variety": "variety",
    "accessory_variety": "variety",
    "sole_variety": "sole_variety",
    "colour": "colour",
    "style": "colour",
    "harvest_passes": "harvest_method",
    "banned_equipment": "banned_equipment",  # a whole section, not a line: _equipment
    "oak_chips": "oak_chips",  # a whole section: _oak_chips
    "label_rule": "label_rule",  # a whole section: _label_rules
    "commune": "commune",  # a whole section: _communes
    "irrigation": "irrigation",  # a whole section: _irrigation
    "pruning": "pruning",  # a whole section: _pruning
    **{name: name for name in _READERS if name not in ("variety", "colour", "sole_variety")},
}


def _no_harvest_rule(all_lines: list[Line]) -> Iterator[Found]:
    """Chapter VII's 'b) Dispositions particulières de récolte.' followed by 'Pas de disposition particulière.': the
    rulebook says how the grapes are picked is free (the fact that rules 'by hand' out for it)."""
    for line, following in zip(all_lines, all_lines[1:], strict=False):
        if (
            line.chapter == "VII"
            and "dispositions particulières de récolte" in line.text.lower()
            and re.match(r"\s*Pas de dispositions? particulières?", following.text, re.I)
        ):
            yield Found("harvest_method", following.start, following.start + len(following.text), NO_HARVEST_RULE)


def _section(lines: Iterable[Line], chapter: str) -> list[Line]:
    """The lines of a section of `chapter` after its heading, up to the next heading or chapter."""
    section: list[Line] = []
    for b in lines:
        if b.chapter != chapter or _HEADING.match(b.text.strip()):
            break
        section.append(b)
    return section


# cellar equipment a rulebook bans (chapter IX 'f) Matériel interdit'), or its statement that it bans none
_EQUIPMENT_HEADING = re.compile(
    r"^\s*[a-z]\)\s*-?\s*Matériels? interdits?\s*[.:]?\s*(?P<none>pas de disposition particulière)?", re.I
)
_EQUIPMENT = (
    (re.compile(r"pressoirs? continus?", re.I), "bans continuous presses (pressoirs continus)"),
    (
        re.compile(r"foulo-?bennes?|bennes? foulopompes?|bennes à vendange autovidantes munies de pompe", re.I),
        "bans the foulo-benne (a self-emptying harvest trailer with a centrifugal pump)",
    ),
    (re.compile(r"vinificateurs continus", re.I), "bans continuous fermenters (vinificateurs continus)"),
    (re.compile(r"érafloirs centrifuges", re.I), "bans centrifugal destemmers"),
    (re.compile(r"cuves à recyclage de marcs", re.I), "bans pomace-recycling vats"),
    (re.compile(r"égouttoirs à vis de moins de 750 millimètres", re.I), "bans screw drainers under 750 mm across"),
    (re.compile(r"cuves en ciment brut", re.I), "bans raw (unlined) cement vats"),
    (
        re.compile(r"pompes centrifuges pour le transfert de la vendange", re.I),
        "bans centrifugal pumps for the harvest",
    ),
)
# a ban of some presses only (by screw size, for some wines, on renewal): no value states it, and the rulebook's other
# bans alone would prove a false 'does not ban continuous presses'
_PARTIAL_BAN = re.compile(r"diamètre|renouvellement|pour les vins|chaînes", re.I)
NO_EQUIPMENT_RULE = "bans no particular cellar equipment"


def _equipment(all_lines: list[Line]) -> tuple[list[Found], list[tuple[int, int, str, str]]]:
    """Chapter IX's 'Matériel interdit': one fact per banned kind of equipment, or the rulebook's 'pas de disposition
    particulière' (the fact that proves it bans none). A section with a partial or unknown ban gives no fact: its
    rulebook must not be offered as one that does not ban a kind it bans in part."""
    found: list[Found] = []
    problems: list[tuple[int, int, str, str]] = []
    for i, line in enumerate(all_lines):
        heading = _EQUIPMENT_HEADING.match(line.text) if line.chapter == "IX" else None
        if heading is None:
            continue
        section = _section((b for b in all_lines[i + 1 :] if b.text.strip()), "IX")
        if heading.group("none") or (section and re.match(r"\s*Pas de disposition", section[0].text, re.I)):
            at = line if heading.group("none") else section[0]
            found.append(Found("banned_equipment", at.start, at.start + len(at.text), NO_EQUIPMENT_RULE))
            continue
        bans = [b for b in section if re.search(r"interdit|^\s*-\s*des ", b.text, re.I)]
        named = [(b, m, english) for b in bans for pattern, english in _EQUIPMENT for m in pattern.finditer(b.text)]
        unnamed = [  # a ban sentence naming no known equipment ('Est interdite l'utilisation :' only leads a list)
            b
            for b in bans
            if "interdit" in b.text.lower() and not b.text.rstrip().endswith(":") and not any(n[0] is b for n in named)
        ]
        if not named or unnamed or any(_PARTIAL_BAN.search(b.text) for b in section):
            problems.append((line.start, line.start + len(line.text), "a partial or unknown equipment ban", line.text))
            continue
        for b, m, english in named:
            found.append(Found("banned_equipment", b.start + m.start(), b.start + m.end(), english))
    return found, problems


# oak chips (morceaux de bois): the rulebook's 'Pratiques œnologiques' section is its full list of cellar practices
# beyond the general wine law (which allows chips), so a section that does not ban them is the fact that it does not
_PRACTICES_HEADING = re.compile(r"^\s*[a-z]\)\s*-?\s*Pratiques (?:œ|oe)nologiques", re.I)
_NEXT_HEADING_IN_LINE = re.compile(r"\s[a-z]\)\s+[A-ZÀ-Ý]")
_OAK_CHIPS = re.compile(r"morceaux de bois(?: de chêne)?[^.;]*?(?:est|sont) interdite?s?", re.I)
OAK_CHIPS_BANNED, NO_OAK_CHIPS_BAN = "bans oak chips (morceaux de bois)", "sets no ban on oak chips"


def _oak_chips(all_lines: list[Line]) -> Iterator[Found]:
    """Chapter IX's oenological practices: oak chips banned for every wine of the appellation, or not banned. A ban for
    the wines of one mention only (Limoux) gives no fact: neither value would be true of the whole appellation."""
    for i, line in enumerate(all_lines):
        if line.chapter != "IX" or _PRACTICES_HEADING.match(line.text) is None:
            continue
        cut = _NEXT_HEADING_IN_LINE.search(line.text, 5)  # a section written on one line ('d) ... e) Capacité ...')
        section = [dataclasses.replace(line, text=line.text[: cut.start()] if cut else line.text)]
        section += _section(all_lines[i + 1 :], "IX") if cut is None else []
        bans = [(b, m) for b in section for m in _OAK_CHIPS.finditer(b.text)]
        if any("mention" in b.text[: m.start()].lower() for b, m in bans):
            return
        if bans:
            b, m = bans[0]
            yield Found("oak_chips", b.start + m.start(), b.start + m.end(), OAK_CHIPS_BANNED)
        elif "morceaux de bois" not in " ".join(b.text for b in section).lower():
            yield Found("oak_chips", line.start, line.start + len(section[0].text), NO_OAK_CHIPS_BAN)
        return


# irrigation (chapter VI '3° Irrigation'): a ban, or irrigation the rural code may let the prefect authorise (in a
# persistent drought, article D. 645-5). 'Pas de disposition particulière' is neither: the rural code's own ban from
# 1 May to the harvest then applies, so it proves no answer either way and gives no fact.
_IRRIGATION_HEADING = re.compile(r"^\s*(?:<[^>]+>\s*)*\d\s*°\s*Irrigation\s*:?\s*(?:<p>)?(?P<rest>.*)$", re.I)
IRRIGATION_BANNED = "bans irrigation (l'irrigation est interdite)"
IRRIGATION_AUTHORISED = "lets irrigation be authorised in a persistent drought, as the rural code allows"
_IRRIGATION = (
    (re.compile(r"^\s*L'irrigation est interdite\s*\.\s*$", re.I), IRRIGATION_BANNED),
    (
        re.compile(
            r"^\s*L'irrigation (?:pendant la période de végétation de la vigne )?(?:peut|ne peut) être autorisée"
            r".*?(?:code rural|sécheresse persistante)",
            re.I,
        ),
        IRRIGATION_AUTHORISED,
    ),
)


def _irrigation(all_lines: list[Line]) -> tuple[list[Found], list[tuple[int, int, str, str]]]:
    """Chapter VI's irrigation rule: its one sentence read whole, or no fact (rejected with the reason)."""
    for i, line in enumerate(all_lines):
        heading = _IRRIGATION_HEADING.match(line.text) if line.chapter == "VI" else None
        if heading is None:
            continue
        rest = [b for b in all_lines[i + 1 :] if b.text.strip()][:1]
        at = line if heading.group("rest").strip() else (rest[0] if rest else line)
        sentence = heading.group("rest") if at is line else at.text
        sentence = re.sub(r"<[^>]+>", "", sentence).strip()
        if re.match(r"Pas de dispositions? particulières?", sentence, re.I):
            reason = "no irrigation rule of its own (the rural code's ban from 1 May applies)"
            return [], [(at.start, at.start + len(at.text), reason, sentence)]
        for pattern, value in _IRRIGATION:
            if pattern.search(sentence):
                return [Found("irrigation", at.start, at.start + len(at.text), value)], []
        return [], [(at.start, at.start + len(at.text), "an irrigation rule the reader does not read", sentence)]
    return [], []


# training and pruning systems (chapter VI 'b) Règles de taille'): the systems the section names are all it allows,
# so one fact per rulebook, its whole list ('... only'), and another list is proven wrong by it. A section the reader
# cannot read whole gives no fact: a system it does not know (taille à astes, à cots, à queue du Mâconnais,
# demi-baguettes, cordon bilatéral), a system allowed for some varieties or while a cordon is established only, a
# table, or short pruning with no system named.
_PRUNING_HEADING = re.compile(r"^\s*[a-z]\)\s*-?\s*R[èe]gles de taille", re.I)
_SYSTEMS = (
    (re.compile(r"\bgobelet\b", re.I), "bush vines (gobelet)"),
    (re.compile(r"\béventail\b", re.I), "fan training (éventail)"),
    (re.compile(r"cordons?\s*de\s+Royat", re.I), "spur-pruned cordon (cordon de Royat)"),
    (re.compile(r"\bGuyot\b", re.I), "cane pruning (taille Guyot)"),
    (re.compile(r"taille mixte", re.I), "mixed cane-and-spur pruning (taille mixte)"),
)
_UNKNOWN_SYSTEM = re.compile(
    r"\bastes?\b|\bcots?\b|demi-baguettes?|queue du Mâconnais|Chablis|Vallée de la Marne|cordon bilatéral|"
    r"cordons? bas\b|médocaine|bordelaise|\bmixte\b(?<!taille mixte)|<table|établissement|interdite?s?\b|"
    r"taille longue(?! dite taille Guyot| Guyot)|(?<!du )(?<!des )\bcordons?\b(?!\s*de\s+Royat)",
    re.I,
)
_FOR_VARIETIES = re.compile(r"\bcépages?\b|\b[a-zà-ÿ]+ (?:N|B|G)\b")


def _pruning(all_lines: list[Line]) -> tuple[list[Found], list[tuple[int, int, str, str]]]:
    """Chapter VI's pruning rules: the sorted list of the training systems the section allows, or no fact."""
    for i, line in enumerate(all_lines):
        if line.chapter != "VI" or _PRUNING_HEADING.match(line.text) is None:
            continue
        section = [b for b in _section(all_lines[i + 1 :], "VI") if b.text.strip()]
        problem = (line.start, line.start + len(line.text))
        named = [(b, order, m) for b in section for order, (p, _) in enumerate(_SYSTEMS) for m in p.finditer(b.text)]
        if not named:
            return [], [(*problem, "pruning rules that name no training system", line.text)]
        for b in section:
            unknown = _UNKNOWN_SYSTEM.search(b.text)
            if unknown is not None:
                return [], [(*problem, f"a pruning rule the reader does not read whole ({unknown.group(0)})", b.text)]
            if _FOR_VARIETIES.search(b.text) and any(n[0] is b for n in named):
                return [], [(*problem, "a training system allowed for some varieties only", b.text)]
        systems = [_SYSTEMS[order][1] for order in sorted({order for _, order, _ in named})]
        value = (", ".join(systems[:-1]) + " and " + systems[-1] if len(systems) > 1 else systems[0]) + " only"
        first = min(named, key=lambda n: n[0].start + n[2].start())
        end = max(b.start + len(b.text) for b, _, _ in named)
        return [Found("pruning", first[0].start + first[2].start(), end, value)], []
    return [], []


# presentation and labelling rules (chapter XII, XIII when a transitional chapter comes first): each rule the
# section sets, or its statement that it sets none. A section with a line no pattern reads gives no fact at all: its
# rulebook must not be offered as one without a rule it sets in words the patterns do not know.
_LABEL_HEADING = re.compile(r"R[èe]gles de pr[ée]sentation", re.I)
_LABEL_RULES = (
    (
        re.compile(
            r"nom de l'appellation[^.]{0,120}?caractères? dont les dimensions[^.]*?inférieures à la moitié", re.I
        ),
        "requires the appellation's name on the label in characters at least half the size of any other",
    ),
    (
        re.compile(r"(?:indication|mentions?) facultatives?[^.]*?pas supérieures au double", re.I),
        "limits optional indications on the label to twice the size of the appellation's name",
    ),
    (
        re.compile(
            r"(?:dénomination géographique|unité géographique plus grande)[^.]*?(?:\.[^.]*?)?aux deux tiers", re.I
        ),
        "limits a larger geographical name on the label (Val de Loire, Vin de Bordeaux) to two-thirds of the size of "
        "the appellation's name",
    ),
    (
        re.compile(
            r"mention de l'année de récolte est obligatoire|obligatoirement avec l'indication du millésime", re.I
        ),
        "requires the vintage (millésime) on the label",
    ),
    (
        re.compile(r"nom de l'appellation[^.]*?inscrit sur le bouchon", re.I),
        "requires the appellation's name on the cork",
    ),
    (re.compile(r"indication d'un nom de cépage est interdite", re.I), "bans the name of a grape variety on the label"),
    (
        re.compile(r"termes vin doux naturel sont obligatoirement inscrits", re.I),
        "requires the words vin doux naturel on the label",
    ),
)
# lines that set no rule of their own: the general provision every rulebook has, the chapter's sub-headings, the
# sweetness terms EU law gives every wine, and the optional larger geographical unit (a mention, see _mentions)
_LABEL_IGNORED = re.compile(
    r"aux termes du présent|caractères très apparents|^\s*\d\s*[°.]\s*-?\s*Dispositions (?:générales|particulières)\s*[:.]?\s*$"
    r"|\b(?:sec|demi-sec|moelleux|doux)\s*[»\"”]?\s*(?:est|sont|figure|complètent|doit|devront)|teneur en sucre"
    r"|peut préciser l'unité géographique plus grande|sucres fermentescibles"
    r"|(?:mentions?|termes?)\s*[«\"“]?\s*(?:sec|demi-sec|moelleux|doux)\b",
    re.I,
)
_NO_PROVISION = re.compile(r"pas de dispositions? particulières?", re.I)
NO_LABEL_RULE = "sets no particular presentation or labelling rule"
_LABEL_FOR = re.compile(r"mention\s*[«\"“]?\s*(vin de paille|vin jaune|nouveau|primeur|blanquette de Limoux)\b", re.I)


def _label_rules(all_lines: list[Line], glossary: Glossary) -> tuple[list[Found], list[tuple[int, int, str, str]]]:
    found: list[Found] = []
    for i, line in enumerate(all_lines):
        if line.chapter not in ("XII", "XIII") or _LABEL_HEADING.search(line.text) is None:
            continue
        section: list[Line] = []
        for b in all_lines[i + 1 :]:
            if b.chapter != line.chapter or re.match(r"^\W*Chapitre\b", b.text.strip(), re.I):
                break
            if re.sub(r"<[^>]*>", "", b.text).strip():  # (Champagne's text keeps empty HTML blocks)
                section.append(b)
        rules: list[Found] = []
        none: Line | None = None
        for b in section:
            named = [(m, english) for pattern, english in _LABEL_RULES for m in pattern.finditer(b.text)]
            for m, english in named:
                wines = _LABEL_FOR.search(b.text)
                mention = (wines.group(1).lower() if wines else "").replace("nouveau", "primeur")
                qualifier = glossary("vins primeurs" if mention == "primeur" else mention) if mention else ""
                rules.append(Found("label_rule", b.start + m.start(), b.start + m.end(), english, qualifier))
            if named:
                continue
            if _NO_PROVISION.search(b.text):
                none = none or b
            elif _LABEL_IGNORED.search(b.text) is None:
                return [], [
                    (line.start, line.start + len(line.text), "a labelling rule no pattern reads", b.text[:200])
                ]
        if rules:
            found += rules
        elif none is not None:
            found.append(Found("label_rule", none.start, none.start + len(none.text), NO_LABEL_RULE))
        return found, []
    return found, []


# the communes of the geographical area (chapter IV, '1° Aire géographique': where the grapes are harvested). Each
# commune is a fact, and the list is the whole area: a commune missing from it is proven outside the area by the
# list's own facts. So a section read only in part, or one naming parts of communes ('la partie de la commune de
# Pugnac ...'), gives no fact at all; nor does a list longer than MAX_COMMUNES (Champagne's hundreds of villages are
# gazetteer material, not what an examiner asks).
_AREA_HEADING = re.compile(r"^\s*(?:1\s*°|a\))\s*-?\s*Aire géographique\b", re.I)
_AREA_INTRO = re.compile(
    r"sur le territoire (?:des communes suivantes|de la commune (?:suivante|de (?P<one>[A-ZÀ-Ý][^,.:;]+?)))"
    r"(?:\s+(?:dans le|du|des|de la|de l'|de)\s*départements?[^:.]*?)?(?:\s*:\s*(?P<list>.*)|\.?\s*$)",
    re.I,
)
_DEPARTMENT_LEAD = re.compile(
    r"^\s*[―—–-]?\s*(?:dans le |Dans le )?département (?:de la |de l'|du |des |de |d')[^:]+(?::\s*(?P<list>.*))?$", re.I
)
_COMMUNE = re.compile(r"^[A-ZÀ-Ý][\w'’ -]{1,40}$")
_AREA_NOTE = re.compile(r"Institut national de l'origine et de la qualité", re.I)
MAX_COMMUNES = 30


def _commune_names(listing: str, start: int) -> Iterator[tuple[int, int, str]] | None:
    """(start, end, name) of each commune of a comma list ('Arsac, Cantenac, Labarde, " Margaux " et Soussans.')."""
    out = []
    for m in re.finditer(r"[^,;]+", listing):
        for part in re.split(r"\s+et\s+(?=[A-ZÀ-Ý\"«“])", m.group(0)):
            at = listing.find(part, m.start())
            name = re.sub(r"\([^)]*\)", "", part).strip(' "«»“”.;:\u00a0')
            if not name:
                continue
            if not _COMMUNE.match(name) or "partie" in name.lower():
                return None
            inner = listing.find(name, at)
            out.append((start + inner, start + inner + len(name), name))
    return iter(out)


def _communes(all_lines: list[Line]) -> tuple[list[Found], list[tuple[int, int, str, str]]]:
    for i, line in enumerate(all_lines):
        if line.chapter != "IV" or _AREA_HEADING.match(line.text.strip()) is None:
            continue
        found: list[Found] = []
        for b in all_lines[i + 1 :]:
            text = b.text.strip()
            if not text:
                continue
            if b.chapter != "IV" or _HEADING.match(text):
                break
            if "partie" in text.lower() or "exception" in text.lower():
                return [], [(line.start, line.start + len(line.text), "an area of parts of communes", text[:200])]
            intro, lead = _AREA_INTRO.search(text), _DEPARTMENT_LEAD.match(text)
            if intro and intro.group("one"):
                name = intro.group("one").strip()
                at = b.start + intro.start("one")
                names = iter([(at, at + len(name), name)]) if _COMMUNE.match(name) else None
            elif intro or lead:
                matched = intro or lead
                assert matched is not None
                listing = matched.group("list") or ""
                names = _commune_names(listing, b.start + matched.start("list")) if listing.strip() else iter([])
            elif _AREA_NOTE.search(text):
                continue
            else:
                names = _commune_names(b.text, b.start)
            if names is None:
                return [], [(b.start, b.start + len(b.text), "a commune list not read", text[:200])]
            found += [Found("commune", s, e, name) for s, e, name in names]
        if not found or len(found) > MAX_COMMUNES:
            return [], []
        return found, []
    return [], []


# --- tables ------------------------------------------------------------------------------------------------------

# header words -> the attribute its column states (a table's header line names the columns, rows name the wines)
_COLUMN_ATTRIBUTES = (
    (re.compile(r"richesse minimale en sucres?", re.I), "min_sugar", "grammes par litre de moût"),
    (re.compile(r"titre alcoométrique\s+volumique naturel minimum", re.I), "min_natural_alcohol", "%"),
    (re.compile(r"titre alcoométrique\s+volumique\s+total maximum", re.I), "max_alcohol_after_enrichment", "%"),
    (re.compile(r"^rendements?\b(?! butoir)", re.I), "base_yield", "hectolitres par hectare"),
    (re.compile(r"rendement butoir", re.I), "yield_cap", "hectolitres par hectare"),
)
_CELL_NUMBER = re.compile(rf"^\s*{_NUMBER}\s*(?:%\s*(?:vol\.?)?|g/l|hl/ha)?\s*$")


def _tables(all_lines: list[Line], glossary: Glossary) -> Iterator[Found]:
    """Rows of a table under a header that names attribute columns: one value per (row, column)."""
    columns: dict[int, tuple[str, str]] | None = None
    columns_cells: list[tuple[int, str]] = []
    for line in all_lines:
        if " | " not in line.text and not line.text.startswith("| "):
            columns = None
            continue
        # cells with their offsets; a row whose first cell is empty starts with '| '
        cells = [(m.start(), m.group(0)) for m in re.finditer(r"[^|]+|(?<=\|)(?=\|)|^(?=\|)", line.text)]
        header = {
            i: (attribute, unit)
            for i, (_, cell) in enumerate(cells)
            for pattern, attribute, unit in _COLUMN_ATTRIBUTES
            if pattern.search(cell.strip())
        }
        if header:
            columns, columns_cells = header, cells
            continue
        if columns is None or line.chapter not in ("VII", "VIII", "IX"):
            continue
        row_name = cells[0][1].strip()
        named = _QUALIFIER.fullmatch(row_name) or _QUALIFIER.match(row_name)
        if named is None or len(cells) != len(columns_cells):
            continue
        qualifier = _wines(named.group(0), glossary)
        for i, (at, cell) in enumerate(cells):
            if i in columns and (m := _CELL_NUMBER.match(cell)):
                start = line.start + at + m.start(1)
                attribute, unit = columns[i]
                value = with_unit(number(m.group(1)), glossary(unit))
                yield Found(attribute, start, start + len(m.group(1)), value, qualifier)


# --- facts -----------------------------------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.;:!?])\s+(?=[A-ZÀ-Ý«\"(―-])")


def sentences(text: str) -> int:
    """Sentences the readers scan: each provision of a line, and each table row (the throughput unit)."""
    return sum(len(_SENTENCE_END.split(line)) for line in text.split("\n") if line.strip())


def find(document: SourceDocument, glossary: Glossary) -> tuple[list[Found], list[tuple[int, int, str, str]]]:
    """Every attribute value of one rulebook and what could not be put into English ((start, end, reason, text))."""
    all_lines = lines(document.text)
    found: list[Found] = []
    problems: list[tuple[int, int, str, str]] = []
    readers = list(dict.fromkeys(_READERS.values()))
    for line in all_lines:
        for reader in readers:
            try:
                read = list(reader(line, glossary))
                if line.section:  # a value stated under 'wines that may carry the mention vin jaune' is theirs
                    section = glossary(line.section)
                    read = [f if f.qualifier else dataclasses.replace(f, qualifier=section) for f in read]
                found.extend(read)
            except Untranslated as missing:
                problems.append((line.start, line.start + len(line.text), "not in the glossary", str(missing)))
    found.extend(_no_harvest_rule(all_lines))
    found.extend(_oak_chips(all_lines))
    for section_reader in (_communes, lambda lines: _label_rules(lines, glossary), _irrigation, _pruning, _equipment):
        section_found, section_problems = section_reader(all_lines)
        found.extend(section_found)
        problems.extend(section_problems)
    try:
        found.extend(_tables(all_lines, glossary))
    except Untranslated as missing:
        problems.append((0, 1, "not in the glossary", str(missing)))
    return found, problems


# attributes a rulebook states once for the same wines: two values with no qualifier telling them apart ('les vins
# "moelleux"' and 'les vins "liquoreux"', which the qualifier patterns do not read) would make either answer wrong
_ONE_VALUE = frozenset({"release_from"})


def _one_value_each(found: list[Found], reject: Callable[[int, int, str, str], None]) -> list[Found]:
    values: dict[tuple[str, str], set[str]] = {}
    for f in found:
        if f.attribute in _ONE_VALUE:
            values.setdefault((f.attribute, f.qualifier), set()).add(f.value.lower())
    kept = []
    for f in found:
        if len(values.get((f.attribute, f.qualifier), ())) > 1:
            reject(f.start, f.end, "two values for the same wines", f.value)
        else:
            kept.append(f)
    return kept


def extract_rulebook(
    document: SourceDocument, config: FactsConfig, gazetteer: Gazetteer
) -> tuple[list[Candidate], list[Rejection]]:
    """The rulebook's facts: one per (attribute, value, qualifier), in English, anchored at the French evidence."""
    rulebook = config.rulebook
    if rulebook is None or document.source_id not in rulebook.sources:
        return [], []
    by_id = {a.id: a for a in rulebook.attributes}
    if unknown := sorted(set(by_id) - set(ATTRIBUTES)):
        raise ValueError(f"facts.rulebook.attributes: no reader for {unknown}; known: {sorted(ATTRIBUTES)}")
    name = appellation_name(document.text)
    rejections: list[Rejection] = []

    def reject(start: int, end: int, reason: str, text: str, detail: str = "", discipline: str | None = None) -> None:
        rejections.append(
            Rejection(
                document.source_id, document.document_id, start, end, "template", reason, text, detail, discipline
            )
        )

    if name is None:
        reject(0, 1, "no appellation name in the rulebook", document.title)
        return [], rejections
    glossary = Glossary(rulebook.glossary)
    found, problems = find(document, glossary)
    for start, end, reason, text in problems:
        reject(start, end, reason, text)
    found = _one_value_each(found, reject)
    entity = gazetteer.entity_for(name, rulebook.entity_type)
    candidates: dict[tuple[str, str, str], Candidate] = {}
    for f in found:
        attribute = by_id.get(f.attribute)
        if attribute is None:
            continue
        key = (f.attribute, f.value.lower(), f.qualifier)
        if key in candidates:  # the same rule stated twice (e.g. in the text and in the control table)
            continue
        candidates[key] = _candidate(document, attribute, name, entity, f, gazetteer, rulebook)
    return list(candidates.values()), rejections


def _candidate(
    document: SourceDocument,
    attribute: RulebookAttribute,
    name: str,
    entity: Entity,
    found: Found,
    gazetteer: Gazetteer,
    rulebook: RulebookConfig,
) -> Candidate:
    subject = f"{name} {found.qualifier}" if found.qualifier else name
    text = attribute.sentence.format(appellation=subject, value=found.value)
    mentions = [Mention(entity.entity_id, entity.entity_type, name)]
    known = gazetteer.lookup(found.value)
    if known is not None and known != entity:
        mentions.append(Mention(known.entity_id, known.entity_type, found.value))
    return Candidate(
        source_id=document.source_id,
        document_id=document.document_id,
        span_start=found.start,
        span_end=found.end,
        discipline=attribute.discipline,
        text=text[:1].upper() + text[1:],
        source_text=document.text[found.start : found.end],
        confidence=1.0,
        method=f"rulebook:{attribute.id}",
        mentions=tuple(mentions),
        attributes={
            "subject": subject,
            "field": attribute.id,
            "value": found.value,
            "entity_type": rulebook.entity_type,
            "entity_id": entity.entity_id,
            "appellation": name,
            "qualifier": found.qualifier,
            "attribute": attribute.label,
        },
    )

"""Template items over rulebook facts: value, subject and comparison asks, distractors true elsewhere, false here."""

from __future__ import annotations

import dataclasses
import random

from benchmark_platform.audit.grounding import Grounding, ProofFact, verify
from benchmark_platform.generation.build import _one_per_field_in_turn
from benchmark_platform.generation.config import QuestionTemplate
from benchmark_platform.generation.model import Entity, Fact
from benchmark_platform.generation.pseudo_mcq import falsify, numbered
from benchmark_platform.generation.templates import FieldIndex, matching_templates, near, numeric, template_item


def _fact(subject: str, field: str, value: str) -> Fact:
    return Fact(
        fact_id=f"{subject}-{field}-{value}",
        text=f"The {field} of {subject} is {value}.",
        subject=subject,
        field=field,
        value=value,
        entity_type="appellation",
        entities=(Entity(f"appellation:{subject.lower()}", "appellation", subject),),
    )


YIELDS = {"Pomerol": "49 hl/ha", "Buzet": "55 hl/ha", "Volnay": "40 hl/ha", "Cassis": "45 hl/ha", "Fitou": "45 hl/ha"}
VARIETIES = {
    "Pomerol": ["Merlot", "Cot"],
    "Buzet": ["Merlot", "Abouriou"],
    "Condrieu": ["Viognier"],
    "Fitou": ["Syrah"],
}


def _template(ask: str, field: str = "base_yield") -> QuestionTemplate:
    return QuestionTemplate(
        id=f"t_{ask}", discipline="viticulture", field=field, ask=ask, question="Q {subject} {value}?", explanation="E"
    )


def test_numbers_with_units_are_read():
    assert numeric("5,500 vines per hectare") == 5500.0
    assert numeric("13.5%") == 13.5
    assert numeric("1 November of the year after the harvest") == 1.0
    assert numeric("red") is None


def test_highest_and_lowest_compare_single_numeric_values():
    facts = [_fact(s, "base_yield", v) for s, v in YIELDS.items()]
    index = FieldIndex(facts)
    buzet = next(f for f in facts if f.subject == "Buzet")
    item = template_item("wine", 1, _template("highest"), buzet, index, 4, 0, "v")
    assert item is not None and item.options[item.answer_index] == "Buzet"
    assert all(numeric(YIELDS[o]) < 55 for o in item.options if o != "Buzet")
    assert "Buzet: 55 hl/ha" in item.explanation
    volnay = next(f for f in facts if f.subject == "Volnay")
    lowest = template_item("wine", 1, _template("lowest"), volnay, index, 4, 2, "v")
    assert lowest is not None and lowest.options[2] == "Volnay"
    # the highest value has no entity above it: no 'lowest' item for it, and no 'highest' item for the lowest
    assert template_item("wine", 1, _template("lowest"), buzet, index, 4, 0, "v") is None
    assert template_item("wine", 1, _template("highest"), volnay, index, 4, 0, "v") is None


def test_value_distractors_are_true_elsewhere_and_false_here():
    facts = [_fact(s, "variety", v) for s, vs in VARIETIES.items() for v in vs]
    index = FieldIndex(facts)
    merlot_in_pomerol = next(f for f in facts if f.subject == "Pomerol" and f.value == "Merlot")
    item = template_item("wine", 3, _template("value", "variety"), merlot_in_pomerol, index, 4, 1, "v")
    assert item is not None and item.options[1] == "Merlot"
    distractors = [o for i, o in enumerate(item.options) if i != 1]
    assert "Cot" not in distractors  # also permitted in Pomerol: never a distractor
    elsewhere = {v for s, vs in VARIETIES.items() if s != "Pomerol" for v in vs}
    assert set(distractors) <= elsewhere
    assert not any("|" in o for o in item.options)


def test_pseudo_mcq_statements_about_one_appellation_take_its_fields_in_turn():
    pomerol = [
        _fact("Pomerol", "base_yield", "49 hl/ha"),
        _fact("Pomerol", "yield_cap", "60 hl/ha"),
        _fact("Pomerol", "variety", "Merlot"),
        _fact("Pomerol", "variety", "Cot"),
        _fact("Pomerol", "variety", "Petit Verdot"),
        _fact("Pomerol", "min_density", "5,500 vines per hectare"),
        _fact("Pomerol", "max_buds", "10 buds per vine"),
    ]
    group = _one_per_field_in_turn(pomerol[0], pomerol, 6)
    assert group is not None and len(group) == 6 and group[0] is pomerol[0]
    assert {f.subject for f in group} == {"Pomerol"}
    assert len({f.field for f in group}) == 5  # every field once before a second variety
    assert _one_per_field_in_turn(pomerol[0], pomerol[:3], 6) is None


def test_a_comparison_of_statistics_needs_values_far_apart_and_a_key_that_is_not_tiny():
    """Issue 34: 'which département declared the most' only between values 1.5x apart, never among tiny ones."""
    declared = {"Gironde": "4,500,000", "Aude": "2,000,000", "Gard": "1,900,000", "Var": "1,000,000"}
    declared |= {"Lozère": "3,000", "Meuse": "1,900", "Oise": "1,000", "Aisne": "100", "Tarn": "2,100"}
    facts = [_fact(s, "q_aop_rouge", v) for s, v in declared.items()]
    index = FieldIndex(facts)
    strict = _template("highest", "q_aop_rouge").model_copy(update={"min_ratio": 1.5, "min_share_of_largest": 0.05})
    gironde = next(f for f in facts if f.subject == "Gironde")
    item = template_item("wine", 1, strict, gironde, index, 4, 0, "v")
    assert item is not None and item.options[0] == "Gironde"
    assert all(int(declared[o].replace(",", "")) * 3 <= 4_500_000 * 2 for o in item.options[1:])
    # Aude is not 1.5x above Gard: Gard is never its distractor
    aude = next(f for f in facts if f.subject == "Aude")
    aude_item = template_item("wine", 1, strict, aude, index, 4, 0, "v")
    assert aude_item is not None and "Gard" not in aude_item.options
    # Lozère beats three others by far, but 3,000 hl beside 4.5 million is a contest between tiny values
    lozere = next(f for f in facts if f.subject == "Lozère")
    assert template_item("wine", 1, strict, lozere, index, 4, 0, "v") is None
    assert template_item("wine", 1, _template("highest", "q_aop_rouge"), lozere, index, 4, 0, "v") is not None


def test_a_template_restricted_to_values_asks_only_about_them():
    """Issue 34: 'which of these requires hand picking?' is asked of the rulebooks that require it; the rulebooks
    that set no harvest rule only prove the distractors wrong."""
    hand, free = "requires the grapes to be picked by hand", "sets no rule on how the grapes are picked"
    facts = [_fact(s, "harvest_method", hand) for s in ("Condrieu", "Bonnezeaux", "Savennières", "Palette")]
    facts += [_fact(s, "harvest_method", free) for s in ("Pomerol", "Buzet", "Fitou", "Margaux")]
    index = FieldIndex(facts)
    template = _template("subject", "harvest_method").model_copy(update={"values": [hand]})
    assert matching_templates([template], facts[0]) == [template]
    assert matching_templates([template], facts[4]) == []
    item = template_item("wine", 1, template, facts[0], index, 4, 0, "v")
    assert item is not None and item.options[0] == "Condrieu"
    assert set(item.options[1:]) <= {"Pomerol", "Buzet", "Fitou", "Margaux"}


def test_no_wrong_date_lies_within_a_week_of_the_answer():
    """'14 December' against '15 December of the harvest year' is one answer to a reader: never both options."""
    assert near("14 December of the harvest year", "15 December of the harvest year")
    assert near("31 December of the harvest year", "1 January of the year after the harvest")
    assert not near("15 November of the harvest year", "15 December of the harvest year")
    assert not near("15 December of the harvest year", "15 December of the year after the harvest")
    ageing = {
        "Pacherenc": "15 December of the harvest year",
        "Saint-Nicolas": "14 December of the harvest year",
        "Fitou": "15 April of the year after the harvest",
        "Cassis": "1 March of the year after the harvest",
        "Palette": "1 October of the year after the harvest",
        "Pomerol": "1 April of the second year after the harvest",
    }
    index = FieldIndex([_fact(s, "ageing_until", v) for s, v in ageing.items()])
    template = _template("value", "ageing_until")
    for subject in ("Pacherenc", "Saint-Nicolas"):
        item = template_item("wine", 7, template, _fact(subject, "ageing_until", ageing[subject]), index, 4, 0, "v")
        assert item is not None
        assert not [o for o in item.options if o != ageing[subject] and near(o, ageing[subject])]


def test_statement_numbers_are_written_in_words_never_with_plural_brackets():
    assert numbered("statement", [2]) == "statement 2"
    assert numbered("statement", [2, 4]) == "statements 2 and 4"
    assert numbered("statement", [1, 2, 4]) == "statements 1, 2 and 4"


def _rule(subject: str, field: str, value: str) -> Fact:
    fact = _fact(subject, field, value)
    return dataclasses.replace(fact, text=f"The {subject} rulebook {value}.")


RULES = {
    "Condrieu": {
        "oak_chips": ["bans oak chips"],
        "harvest_method": ["requires hand picking"],
        "banned_equipment": ["bans continuous presses"],
    },
    "Vouvray": {
        "oak_chips": ["sets no ban on oak chips"],
        "harvest_method": ["sets no harvest rule"],
        "banned_equipment": ["bans continuous presses", "bans cement vats"],
    },
    "Buzet": {
        "oak_chips": ["sets no ban on oak chips"],
        "harvest_method": ["sets no harvest rule"],
        "banned_equipment": ["bans no equipment"],
    },
    "Pomerol": {"oak_chips": ["sets no ban on oak chips"], "harvest_method": ["sets no harvest rule"]},
}


def _g1(item) -> list[str]:
    """G1's verdict on a template item, from the facts the item names (as the audit reads them)."""
    facts = {f.fact_id: f for f in RULE_FACTS}
    proofs = tuple(
        tuple(ProofFact(i, facts[i].text, facts[i].subject, facts[i].field, facts[i].value, "appellation") for i in o)
        for o in item.option_facts
    )
    claim = {**item.parameters["grounding"], **{k: item.parameters[k] for k in ("statements", "option_sets")}}
    severity, payload = verify(item.question, item.options, item.answer_index, Grounding("facts", claim, proofs))
    return [] if severity == "pass" else payload["reasons"]


RULE_FACTS = [_rule(s, f, v) for s, fields in RULES.items() for f, vs in fields.items() for v in vs]


def _statements_template(ask: str) -> QuestionTemplate:
    return QuestionTemplate(
        id=f"rules_{ask}",
        discipline="producers",
        field="banned_equipment",
        fields=["harvest_method", "oak_chips"],
        entity_type="appellation",
        ask=ask,
        question="Which statement about {subject} ...?",
        explanation="E",
    )


def test_statements_about_one_appellation_are_proven_true_or_false_by_its_own_rules():
    index = FieldIndex(RULE_FACTS)
    oak = next(f for f in RULE_FACTS if f.subject == "Condrieu" and f.field == "oak_chips")
    item = template_item("wine", 5, _statements_template("true_statement"), oak, index, 4, 2, "v")
    assert item is not None and item.options[2] == oak.text
    assert all(o.startswith("The Condrieu rulebook") for o in item.options)
    # never the key's own rule negated beside it ('sets no ban on oak chips'): the pair would give the key away
    assert not any("no ban on oak chips" in o for o in item.options)
    assert _g1(item) == []
    # 'which one is false': three of Condrieu's rules and one made false, each false one proven by its own rules
    equipment = next(f for f in RULE_FACTS if f.subject == "Vouvray" and f.value == "bans cement vats")
    false = template_item("wine", 5, _statements_template("false_statement"), equipment, index, 4, 0, "v")
    assert false is not None and false.parameters["statements"][0]["true"] is False
    assert sum(s["true"] for s in false.parameters["statements"]) == 3
    assert _g1(false) == []


def test_no_statement_is_false_by_silence():
    """Pomerol states no equipment rule: no statement about its equipment, either way."""
    index = FieldIndex(RULE_FACTS)
    for fact in (f for f in RULE_FACTS if f.subject == "Pomerol"):
        for ask in ("true_statement", "false_statement"):
            item = template_item("wine", 5, _statements_template(ask), fact, index, 4, 0, "v")
            assert item is None or not any("bans" in o and "oak" not in o for o in item.options)


def test_a_false_statement_never_restates_a_quantity_the_subject_has():
    # Champagne's rulebook: 12 months on the lees before disgorgement and 15 months from tirage. "12 months in bottle
    # on the lees from tirage" (another rulebook's value) says the first in other words: it is never the false one
    elevage = {
        "Champagne": [
            "at least 12 months on the lees before disgorgement",
            "at least 15 months on the lees from tirage",
        ],
        "Saint-Péray": ["at least 12 months in bottle on the lees from tirage"],
        "Limoux": ["at least 9 months in bottle on the lees from tirage"],
    }
    facts = [_fact(s, "elevage", v) for s, values in elevage.items() for v in values]
    index = FieldIndex(facts)
    wrongs = set()
    for seed in range(40):
        statement = falsify(facts[1], index, random.Random(seed))
        assert statement is not None and not statement.true
        wrongs.add(statement.text)
    assert wrongs == {"The elevage of Champagne is at least 9 months in bottle on the lees from tirage."}

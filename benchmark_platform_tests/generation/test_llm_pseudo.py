"""The 10-option pseudo-MCQ written by a generator: scripted models on loopback through the real gateway and asset
on PostgreSQL. A valid answer is stored with its fact links, generator, strategy and prompt version, its answer at the
planned (balanced) position; an answer the pseudo-MCQ validator rejects stores nothing. Plus the conversion alone."""

from __future__ import annotations

import json

import pytest

from benchmark_platform.generation.config import PseudoMcqConfig
from benchmark_platform.generation.llm_pseudo import PROMPT, PseudoMcqDraft, draft_item
from benchmark_platform.generation.model import Fact, OptionExplanation
from benchmark_platform.generation.pseudo_mcq import from_parameters, validate
from benchmark_platform.generation.strategies import prompt_version
from benchmark_platform.llm.double import Rule, Script
from benchmark_platform.spec import load_spec
from benchmark_platform_tests.generation.conftest import (
    generate_items,
    pseudo_groups,
    pseudo_reply,
    pseudo_rules,
    scripted_models,
)

pytestmark = pytest.mark.slow  # generates through the graph against a scripted server

GROUP = [Fact(f"f{i}", f"Entity {i} has the value v{i} in the register.") for i in range(6)]
CONFIG = PseudoMcqConfig()
ITEMS = 8


def convert(reply: str, position: int = 0):
    return draft_item(
        "wine", "scenario", "gen0", GROUP, PseudoMcqDraft.model_validate_json(reply), CONFIG, position, "L3", "analysis"
    )


@pytest.mark.parametrize("position", range(10))
def test_a_valid_draft_lands_its_answer_at_the_planned_position(position):
    item, reasons = convert(pseudo_reply(GROUP), position)
    assert reasons == [] and item is not None
    assert item.answer_index == position and item.options[position] == "Statements 1, 2 and 3"
    assert item.format == "pseudo_mcq10" and len(set(item.options)) == 10
    assert item.facts == {f.fact_id: "answer" for f in GROUP} and item.prompt_version == prompt_version(PROMPT)
    # the explanations moved with their options
    assert item.option_explanations[position].text.startswith("Correct")
    stored = from_parameters(list(item.options), item.answer_index, item.parameters, list(item.option_explanations))
    assert validate(stored, CONFIG) == []


@pytest.mark.parametrize(
    ("variant", "reason"),
    [
        ("proper_subset", "proper subset"),
        ("nine_options", "9 options"),
        ("two_correct", "2 options are exactly the true statements"),
    ],
)
def test_drafts_breaking_a_kina_rule_are_rejected_with_the_reason(variant, reason):
    item, reasons = convert(pseudo_reply(GROUP, variant))
    assert item is None and any(reason in r for r in reasons), reasons


def test_statements_must_be_traced_to_the_groups_facts():
    reply = json.loads(pseudo_reply(GROUP))
    reply["statements"][5]["fact_id"] = "f0"  # two statements on f0, none on f5
    reply["options"][0]["sources"] = ["elsewhere"]
    item, reasons = convert(json.dumps(reply))
    assert item is None
    assert any("f0 has 2 statements" in r for r in reasons) and any("f5 has 0" in r for r in reasons)
    assert any("outside the group" in r and "elsewhere" in r for r in reasons)


def pseudo_spec(models):
    """Scenario slots only, every one a pseudo-MCQ; the gate on (it answers A)."""
    spec = load_spec("wine")
    generation = spec.generation.model_copy(
        update={
            "generators": [m.name for m in models],
            "strategy_shares": {"scenario": 1.0},
            "items_per_discipline": ITEMS,
            "generator_cap": 0.25,
            "pseudo_mcq": spec.generation.pseudo_mcq.model_copy(update={"share_of_scenarios": 1.0}),
            "gate": spec.generation.gate.model_copy(
                update={"models": dict.fromkeys(("L1", "L2", "L3"), models[0].name)}
            ),
        }
    )
    return spec.model_copy(update={"models": models, "generation": generation})


def stored(db) -> list[dict]:
    return db.query("""
        SELECT i.item_id, i.format, i.options, i.answer_index, g.strategy, g.generator, g.prompt_version, g.parameters,
               (SELECT array_agg(f.fact_id ORDER BY f.fact_id) FROM item_facts f WHERE f.item_id = i.item_id) AS facts,
               coalesce((SELECT json_agg(json_build_array(e.explanation, e.sources) ORDER BY e.position)
                         FROM item_option_explanations e WHERE e.item_id = i.item_id), '[]') AS explanations
        FROM items i JOIN generation_metadata g USING (item_id) WHERE i.spec = 'wine' AND i.discipline = 'regions'""")


GATE = Rule(match="TASK: closed_book", reply='{"answer": "A"}')


def test_a_valid_llm_pseudo_mcq_is_stored_with_its_provenance(prepared, servers):
    server = servers(Script(rules=[GATE, *pseudo_rules(prepared, load_spec("wine"), ["regions"])]))
    models = scripted_models(server.base_url, 5, "pseudo-valid")
    spec = pseudo_spec(models)
    meta = generate_items(prepared, spec, "regions").metadata
    rows = stored(prepared)
    assert len(rows) == ITEMS and meta["invalid"].value == {}, meta["invalid"].value
    assert {r["format"] for r in rows} == {"pseudo_mcq10"} and {r["strategy"] for r in rows} == {"scenario"}
    assert {r["generator"] for r in rows} <= {m.name for m in models} and len({r["generator"] for r in rows}) > 1
    assert {r["prompt_version"] for r in rows} == {prompt_version(PROMPT)}
    groups = {tuple(sorted(f.fact_id for f in g)) for g in pseudo_groups(prepared, spec, "regions")}
    assert all(tuple(r["facts"]) in groups for r in rows)
    for r in rows:
        item = from_parameters(
            r["options"],
            r["answer_index"],
            r["parameters"],
            [OptionExplanation(text, tuple(sources)) for text, sources in r["explanations"]],
        )
        assert validate(item, spec.generation.pseudo_mcq) == [], r["item_id"]
        assert {s for e in item.explanations for s in e.sources} <= set(r["facts"])
    # the model always answers with option 4; the stored answers sit at the plan's balanced positions instead
    assert len({r["answer_index"] for r in rows}) == ITEMS


@pytest.mark.parametrize(
    ("variant", "reason"),
    [
        ("proper_subset", "proper subset"),
        ("nine_options", "9 options"),
        ("two_correct", "2 options are exactly the true statements"),
    ],
)
def test_an_llm_pseudo_mcq_the_validator_rejects_stores_nothing(prepared, servers, variant, reason):
    server = servers(Script(rules=[GATE, *pseudo_rules(prepared, load_spec("wine"), ["regions"], variant)]))
    models = scripted_models(server.base_url, 5, f"pseudo-{variant}")
    meta = generate_items(prepared, pseudo_spec(models), "regions").metadata
    assert stored(prepared) == [] and meta["invalid"].value == {"scenario": ITEMS}
    rejections = meta["pseudo_mcq_rejections"].value
    assert len(rejections) == ITEMS and all(reason in r for r in rejections), rejections

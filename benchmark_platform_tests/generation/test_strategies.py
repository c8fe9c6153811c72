"""Each LLM strategy against a scripted OpenAI-compatible model on loopback: a valid answer is stored with its
facts, generator, strategy, prompt version and gate result; an invalid answer stores nothing."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from benchmark_platform.generation.config import DETERMINISTIC
from benchmark_platform.generation.persist import audit_pass_rates
from benchmark_platform.generation.strategies import prompt_version
from benchmark_platform.llm.double import Rule, Script
from benchmark_platform.spec import load_spec
from benchmark_platform_tests.generation.conftest import generate_items, pseudo_rules, scripted_models

pytestmark = pytest.mark.slow  # the `prepared` database: ingest to selection of two disciplines (~20 s)

DRAFT = json.dumps(
    {
        "question": "Which option is grounded in the verified fact?",
        "answer": "Alpha",
        "distractors": ["Beta", "Gamma", "Delta"],
        "explanation": "Alpha is what the fact states.",
    }
)
MINED = json.dumps(
    {
        "question": "Which entity does the verified statement describe?",
        "explanation": "The statement is about the answer; the others are confusable neighbours.",
    }
)
VALID = [
    Rule(match="TASK: distractor_mining", reply=f"```json\n{MINED}\n```"),
    Rule(match="TASK: closed_book", reply='{"answer": "A"}'),
    Rule(match="TASK:", reply=f"Here it is: {DRAFT} -- done"),
]
INVALID = [
    Rule(match="TASK: distractor_mining", reply='{"question": "Too short"}'),
    Rule(match="TASK: closed_book", reply='{"answer": "A"}'),
    Rule(
        match="TASK:",
        reply=json.dumps(
            {
                "question": "Which is right?",
                "answer": "Alpha",
                "distractors": ["Alpha", "Beta", "Gamma"],
                "explanation": "duplicated option",
            }
        ),
    ),
]
STRATEGIES = ["fact_to_question", "distractor_mining", "scenario", "comparative"]


def spec_with(models, strategy: str, gate: bool = True):
    """Only `strategy`, in the 4-option format (test_llm_pseudo covers the pseudo-MCQs of scenario slots)."""
    spec = load_spec("wine")
    generation = spec.generation.model_copy(
        update={
            "generators": [m.name for m in models],
            "strategy_shares": {strategy: 1.0},
            "items_per_discipline": 8,
            "generator_cap": 0.25,
            "pseudo_mcq": spec.generation.pseudo_mcq.model_copy(update={"share_of_scenarios": 0.0}),
            "gate": spec.generation.gate.model_copy(
                update={"models": {"L1": models[0].name, "L2": models[0].name, "L3": models[0].name} if gate else {}}
            ),
        }
    )
    return spec.model_copy(update={"models": models, "generation": generation})


def stored(db, discipline: str) -> list[dict]:
    return db.query(
        """SELECT i.item_id, i.format, i.options, i.answer_index, g.strategy, g.generator,
                              g.prompt_version, g.gate_result, array_agg(f.fact_id) AS facts
                       FROM items i JOIN generation_metadata g USING (item_id) JOIN item_facts f USING (item_id)
                       WHERE i.spec = 'wine' AND i.discipline = %s GROUP BY i.item_id, g.item_id""",
        (discipline,),
    )


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_valid_answers_are_stored_and_invalid_ones_store_nothing(prepared, servers, strategy):
    server = servers(Script(rules=VALID))
    models = scripted_models(server.base_url, 5, f"valid-{strategy}")
    meta = generate_items(prepared, spec_with(models, strategy), "regions").metadata
    rows = stored(prepared, "regions")
    assert len(rows) == 8 and meta["invalid"].value == {}
    assert {r["strategy"] for r in rows} == {strategy}
    assert {r["generator"] for r in rows} <= {m.name for m in models}
    assert {r["prompt_version"] for r in rows} == {prompt_version(strategy)}
    assert {r["gate_result"] for r in rows} <= {"closed_book_solvable", "not_solvable", "skipped"}
    minimum_facts = {"scenario": 3, "comparative": 2}.get(strategy, 1)
    assert all(len(set(r["facts"])) >= minimum_facts for r in rows)
    assert all(len(r["options"]) == 4 and len({o.lower() for o in r["options"]}) == 4 for r in rows)

    bad = servers(Script(rules=INVALID))
    meta = generate_items(
        prepared, spec_with(scripted_models(bad.base_url, 5, f"invalid-{strategy}"), strategy), "regions"
    ).metadata
    assert stored(prepared, "regions") == [] and meta["invalid"].value == {strategy: 8}


def test_the_closed_book_cap_moves_the_excess_to_the_reserve(prepared, servers):
    server = servers(Script(rules=VALID))
    models = scripted_models(server.base_url, 5, "reserve")
    spec = spec_with(models, "fact_to_question")
    spec = spec.model_copy(
        update={
            "generation": spec.generation.model_copy(
                update={"gate": spec.generation.gate.model_copy(update={"max_solvable_share": 0.0})}
            )
        }
    )
    meta = generate_items(prepared, spec, "regions").metadata
    kept = stored(prepared, "regions")
    reserve = prepared.query(
        "SELECT gate_result FROM generation_reserve WHERE spec = 'wine' AND discipline = 'regions'"
    )
    # the gate model always answers A: exactly the items whose answer is A are closed-book solvable
    assert reserve and {r["gate_result"] for r in reserve} == {"closed_book_solvable"}
    assert all(r["answer_index"] != 0 or r["gate_result"] == "skipped" for r in kept)
    assert meta["reserve"].value == len(reserve) and len(kept) + len(reserve) == 8


def test_without_models_only_deterministic_generators_appear(prepared):
    generate_items(prepared, load_spec("wine"), "regions")
    rows = stored(prepared, "regions")
    assert rows and {r["generator"] for r in rows} == {DETERMINISTIC}
    assert {r["strategy"] for r in rows} == {"template", "distractor_mining"}
    assert {r["gate_result"] for r in rows} <= {"not_run", "skipped"}


def test_audit_pass_rates_of_an_earlier_round_shift_the_next_rounds_shares(prepared, servers):
    server = servers(Script(rules=[*pseudo_rules(prepared, load_spec("wine"), ["regions"]), *VALID]))
    models = scripted_models(server.base_url, 5, "adaptive")
    spec = load_spec("wine")
    spec = spec.model_copy(
        update={
            "models": models,
            "generation": spec.generation.model_copy(
                update={"generators": [m.name for m in models], "generator_cap": 0.3}
            ),
        }
    )
    generate_items(prepared, spec, "regions")
    first = Counter(r["generator"] for r in stored(prepared, "regions"))
    # an earlier round's audit: the policy dropped every item of gen0, every other item passed
    with prepared.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            "INSERT INTO audit_runs (spec, discipline, inputs_hash) VALUES ('wine', 'regions', 'adaptive') "
            "RETURNING audit_run_id"
        )
        run_id = cur.fetchone()[0]
        cur.execute(
            """INSERT INTO audit_findings (audit_run_id, item_id, agent, agent_version, severity)
                       SELECT %s, item_id, 'A1_lexical_hygiene', '1',
                              CASE WHEN generator = 'gen0' THEN 'fail' ELSE 'pass' END
                       FROM generation_metadata JOIN items USING (item_id) WHERE spec = 'wine'
                       AND discipline = 'regions'""",
            (run_id,),
        )
        cur.execute(
            """INSERT INTO audit_policy (audit_run_id, item_id, action, reason)
                       SELECT %s, item_id, 'drop', 'A1_lexical_hygiene failed'
                       FROM generation_metadata JOIN items USING (item_id) WHERE spec = 'wine'
                       AND discipline = 'regions' AND generator = 'gen0'""",
            (run_id,),
        )
    assert audit_pass_rates(prepared, "wine")["gen0"][0] == 0
    generate_items(prepared, spec, "regions")
    second = Counter(r["generator"] for r in stored(prepared, "regions"))
    assert second["gen0"] < first["gen0"] and sum(second.values()) == sum(first.values())
    selected = prepared.scalar("SELECT count(*) FROM selected_facts WHERE spec = 'wine' AND discipline = 'regions'")
    assert max(second[m.name] for m in models) <= int(0.3 * selected)  # the cap: floor(0.3 x the K_d slots)
    with prepared.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM audit_runs WHERE inputs_hash = 'adaptive'")

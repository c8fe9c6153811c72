"""LLM agents against a scripted OpenAI-compatible server on loopback, through the real gateway: tri-judge votes,
closed-book disclosure, difficulty relabel, escalation gates, KINA's consensus and refinement loop; invalid judge
output persists nothing."""

from __future__ import annotations

import asyncio
import json

from benchmark_platform.audit.config import KinaScreening
from benchmark_platform.audit.run import audit_discipline
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.llm.config import GatewaySettings, ModelConfig
from benchmark_platform.llm.double import Rule, Script, ServerThread
from benchmark_platform.llm.gateway import Gateway
from benchmark_platform_tests.audit.corpus import audit_spec, seed_corpus

EMBEDDER = StaticEmbedder()
JUDGES = ("judge_a", "judge_b", "judge_c")

RULES = [
    Rule(match="No source is given.\n\nQuestion: Which grape variety", reply='{"answer": "A"}'),
    Rule(match="No source is given.", reply='{"answer": "C"}'),
    Rule(match="Rate the difficulty", reply='{"tier": 2}'),
    Rule(match="list every option", reply='{"defensible": ["A"]}'),
    Rule(match="Question: In which year was the Napa", reply='{"answer": "B"}'),
    Rule(match="Question: Which county contains", reply="I would say A, probably."),
    Rule(
        match="one of three judges",
        reply=json.dumps(
            {
                "knowledge_coverage": True,
                "disciplinary_uniqueness": True,
                "socio_economic_impact": False,
                "practical_value": True,
                "failure_pattern": "recall",
                "admit": False,
            }
        ),
    ),
    Rule(match="diagnosis agent", reply='{"counter_evidence": ["stem drifts from options"], "defective": true}'),
    Rule(
        match="refinement agent",
        reply=json.dumps(
            {
                "question": "Which grape makes Barolo?",
                "options": ["Nebbiolo", "Barbera", "Dolcetto", "Freisa"],
                "answer_index": 0,
            }
        ),
    ),
]


def _models(base_url: str) -> list[ModelConfig]:
    return [ModelConfig(name=n, family=n, base_url=base_url, model=n, max_concurrency=8) for n in JUDGES]


def _run(db, spec, discipline: str, models: list[ModelConfig]):
    async def go():
        async with Gateway(models, GatewaySettings(), db, run_id="audit-test") as gateway:
            return await audit_discipline(db, spec, discipline, EMBEDDER, gateway)

    return asyncio.run(go())


def test_judge_panel_drops_discloses_relabels_and_persists_nothing_from_invalid_output(db) -> None:
    with ServerThread(
        Script(
            rules=[
                *RULES[:2],
                Rule(match="is needed).\n\nSource fact(s):\n- The Mosel", reply='{"tier": 4}'),
                *RULES[2:],
            ],
            default_reply='{"answer": "A"}',
        )
    ) as server:
        models = _models(server.base_url)
        base = audit_spec("audit_judges", judges=list(JUDGES))
        spec = base.model_copy(update={"models": models})
        ids = seed_corpus(db, spec.name, ("regions",))["regions"]
        done = _run(db, spec, "regions", models)

    b1 = {f.item_id: f for f in done.outcome.findings if f.agent == "B1_tri_judge_answer"}
    assert b1[ids[0]].severity == "pass" and b1[ids[1]].severity == "fail"
    assert ids[2] not in b1, done.outcome.invalid
    assert done.outcome.invalid["B1_tri_judge_answer"] == 3  # no valid vote from the three judges: no finding
    assert not db.query(
        "SELECT 1 FROM audit_findings WHERE audit_run_id = %s AND item_id = %s AND agent LIKE 'B1%%'",
        (done.audit_run_id, ids[2]),
    )
    actions = {(a.item_id, a.action): a for a in done.actions}
    assert "B1_tri_judge_answer" in actions[(ids[1], "drop")].reason
    assert actions[(ids[0], "disclose")].detail["slice"] == "closed_book"
    assert actions[(ids[3], "relabel")].detail == {"from": "L2", "to": "L4"}
    # B1 dissent 1/5 > 0.10 escalates B4; no disputed (split) verdict, so B5 is skipped with its reason
    assert {f.item_id for f in done.outcome.findings if f.agent == "B4_ambiguity"} == set(b1)
    skipped = {a: r for (a, _), r in done.outcome.skipped.items()}
    assert skipped["B5_verifier_skip"] == "no disputed B1 verdicts"
    assert skipped["C3_source_swap"] == "no B1/B2 disagreement"
    assert skipped["K4_judge_consensus"].startswith("not a KINA-style spec")


def test_kina_screening_consensus_and_refinement_loop(db) -> None:
    with ServerThread(Script(rules=RULES, default_reply='{"answer": "A"}')) as server:
        models = _models(server.base_url)
        kina = KinaScreening(flagships=["f1", "f2", "f3", "f4", "f5"], refinement=True)
        spec = audit_spec("audit_kina", judges=list(JUDGES), kina=kina).model_copy(update={"models": models})
        ids = seed_corpus(db, spec.name, ("regions",))["regions"]
        with db.transaction() as conn, conn.cursor() as cur:  # imported flagship answers: 3 of 5 wrong on item 0
            for n, model in enumerate(kina.flagships):
                cur.execute(
                    """INSERT INTO evaluation_runs (spec, discipline, model, kind) VALUES (%s, 'regions', %s,
                               'imported') RETURNING evaluation_run_id""",
                    (spec.name, model),
                )
                run = cur.fetchone()[0]
                for k, item in enumerate(ids):
                    cur.execute(
                        "INSERT INTO evaluation_answers (evaluation_run_id, item_id, correct) VALUES (%s,%s,%s)",
                        (run, item, k != 0 or n >= 3),
                    )
            cur.execute(
                "UPDATE items SET question = question || %s WHERE item_id = %s", (r" Give $\frac{a}{b$.", ids[4])
            )
        done = _run(db, spec, "regions", models)

    by = {(f.item_id, f.agent): f for f in done.outcome.findings}
    assert by[(ids[0], "K3_flagship_difficulty")].severity == "pass"  # 3 of 5 flagships wrong
    assert by[(ids[1], "K3_flagship_difficulty")].severity == "fail"
    assert by[(ids[4], "K2_formatting")].severity == "fail"  # LaTeX that does not parse
    assert by[(ids[0], "K2_formatting")].severity == "pass"
    assert by[(ids[0], "K1_uniqueness")].severity == "pass"
    assert by[(ids[0], "K4_judge_consensus")].severity == "fail"  # 0 of 3 judges admit
    refined = by[(ids[0], "K5_refinement")]
    assert refined.payload["revision"]["question"] == "Which grape makes Barolo?"
    assert refined.payload["needs_human_rescore"] and refined.payload["cleared"] is False
    assert {a.item_id for a in done.actions if a.action == "drop"} == set(ids)

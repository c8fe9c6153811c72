"""The evaluation and analysis assets on the real PostgreSQL: baseline + imported run + a scripted model slate,
idempotent partition writes, nothing written when a model fails, analysis tables, plots and metadata."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import dagster as dg
import numpy as np
import polars as pl
import pytest

from benchmark_platform.defs.analysis import build_defs as analysis_defs
from benchmark_platform.defs.common import MODEL_TAG, DatabaseResource
from benchmark_platform.defs.evaluation import build_defs as evaluation_defs
from benchmark_platform.defs.llm.resources import LLMGatewayResource
from benchmark_platform.evaluation.config import EvaluationConfig, ResultsImport, SlateEntry
from benchmark_platform.llm.config import GatewaySettings, ModelConfig, Prices
from benchmark_platform.llm.double import Rule, Script, ServerThread
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import Database, insert_rows

DISCIPLINES = ("regions", "grape_varieties")
N_ITEMS = 40


SKILL = {"strong": 0.75, "strong-think": 0.9, "weak": 0.4}  # share of questions each scripted model knows
FAST = GatewaySettings(backoff_base_s=0.01, backoff_max_s=0.02, max_retries=2, cache_flush_s=0.05)


def _script(name: str, items: list[tuple], failing: bool = False) -> Script:
    rules = []
    for item_id, _spec, _discipline, _format, question, _options, answer, *_ in items:
        knows = int(hashlib.sha256(f"{name}{item_id}".encode()).hexdigest(), 16) % 100 < SKILL[name] * 100
        reply = "ABCD"[answer if knows else (answer + 1) % 4]
        rules.append(Rule(match=question, reply=reply, faults=["500"] * 5 if failing else []))
    return Script(rules=rules)


def _items(spec: str) -> list[tuple]:
    rng = np.random.default_rng(0)
    rows = []
    for discipline in DISCIPLINES:
        for i in range(N_ITEMS):
            answer = int(rng.integers(0, 4))
            rows.append(
                (
                    f"{spec}-{discipline}-{i:02d}",
                    spec,
                    discipline,
                    "mcq4",
                    f'Question {discipline} {i} |"{"ABCD"[answer]}"|?',
                    json.dumps(["w", "x", "y", "z"]),
                    answer,
                    "because",
                    ["L1", "L2", "L3"][i % 3],
                )
            )
    return rows


@pytest.fixture(scope="module")
def setup(db: Database, wine_spec: BenchmarkSpec, tmp_path_factory):
    """(db, spec, failing spec): items of two disciplines, an lm-eval file, three scripted models."""
    name = "evaltest"
    items = _items(name)
    with db.transaction() as conn:
        insert_rows(
            conn,
            "items",
            (
                "item_id",
                "spec",
                "discipline",
                "format",
                "question",
                "options",
                "answer_index",
                "explanation",
                "difficulty",
            ),
            items,
        )
        # the release is the after-audit selection: every item audited (pass) and selected, so all of them ship
        with conn.cursor() as cur:
            for discipline in DISCIPLINES:
                cur.execute(
                    "INSERT INTO audit_runs (spec, discipline, inputs_hash) VALUES (%s, %s, 'test') "
                    "RETURNING audit_run_id",
                    (name, discipline),
                )
                run = cur.fetchone()[0]
                for rank, row in enumerate(r for r in items if r[2] == discipline):
                    cur.execute(
                        "INSERT INTO audit_findings (audit_run_id, item_id, agent, agent_version, severity) "
                        "VALUES (%s, %s, 'structure', 'test', 'pass')",
                        (run, row[0]),
                    )
                    cur.execute(
                        "INSERT INTO selected_items (spec, discipline, item_id, rank, gain) VALUES (%s, %s, %s, %s, 0)",
                        (name, discipline, row[0], rank),
                    )
    # an lm-evaluation-harness run of an external model on our items, exported and read back
    folder = tmp_path_factory.mktemp("lm_eval")
    samples = folder / "samples_evaltest_2026-11-29T16-00-00.000001.jsonl"
    with samples.open("w") as handle:
        for index, (item_id, *_rest) in enumerate(items):
            answer = "ABCD"[_rest[5]]
            said = answer if index % 2 else "[invalid]"
            handle.write(
                json.dumps(
                    {
                        "doc_id": index,
                        "doc": {"item": item_id},
                        "target": answer,
                        "resps": [[f"The answer is ({said})"]],
                        "filtered_resps": [said],
                        "filter": "custom-extract",
                        "metrics": ["exact_match"],
                        "exact_match": float(said == answer),
                    }
                )
                + "\n"
            )
    evaluation = EvaluationConfig(
        random_baseline_samples=2,
        imports=[
            ResultsImport(format="lm_eval_samples", path=samples, model="external-7b", family="acme", item_key="item")
        ],
        slate=[
            SlateEntry(model="strong", params_b=8),
            SlateEntry(model="strong-think", reasoning_of="strong", k=2),
            SlateEntry(model="weak", params_b=1),
        ],
    )
    spec = wine_spec.model_copy(update={"name": name, "evaluation": evaluation})
    servers = {model: ServerThread(_script(model, items)).__enter__() for model in SKILL}
    broken = ServerThread(_script("weak", items, failing=True)).__enter__()
    families = {"strong": "acme", "strong-think": "acme", "weak": "other"}
    prices = Prices(input_per_m=1.0, output_per_m=4.0)

    def config(model: str, url: str, model_id: str | None = None) -> ModelConfig:
        return ModelConfig(
            name=model,
            family=families[model],
            base_url=url,
            provider=f"p-{model}",
            model=model_id or model,
            prices=prices if model != "strong-think" else Prices(input_per_m=5.0, output_per_m=20.0),
        )

    spec = spec.model_copy(update={"models": [config(m, s.base_url) for m, s in servers.items()], "llm": FAST})
    # 'weak' moved to a provider model id that answers HTTP 500 beyond the retries (a new id: no cached answers)
    failing = spec.model_copy(
        update={
            "models": [
                config(m, broken.base_url, "weak-2") if m == "weak" else config(m, s.base_url)
                for m, s in servers.items()
            ]
        }
    )
    yield db, spec, failing
    for server in [*servers.values(), broken]:
        server.__exit__(None, None, None)


def _materialize(spec: BenchmarkSpec, db: Database, partition: str | None) -> dg.ExecuteInProcessResult:
    """Through the real gateway resource, which reads the spec's models and gateway settings."""
    defs = evaluation_defs(spec) if partition else analysis_defs(spec)
    database = DatabaseResource(url=db.url)
    return dg.materialize(
        list(defs.assets),
        partition_key=partition,
        raise_on_error=False,
        resources={"database": database, "llm": LLMGatewayResource(database=database)},
    )


def _failure(result: dg.ExecuteInProcessResult) -> str:
    """The step failure's message with its causes."""
    error, messages = result.get_step_failure_events()[0].step_failure_data.error, []
    while error is not None:
        messages.append(error.message)
        error = error.cause
    return "\n".join(messages)


def _answer_counts(db: Database, spec: BenchmarkSpec) -> dict[tuple[str, str], int]:
    rows = db.query(
        """SELECT r.discipline, r.model, count(*) AS n FROM evaluation_answers a
                       JOIN evaluation_runs r USING (evaluation_run_id) WHERE r.spec = %s GROUP BY 1, 2""",
        (spec.name,),
    )
    return {(r["discipline"], r["model"]): r["n"] for r in rows}


def test_evaluation_partitions_are_complete_and_idempotent(setup) -> None:
    db, spec, _ = setup
    results = [_materialize(spec, db, partition) for partition in DISCIPLINES]
    assert all(r.success for r in results)
    metadata = results[0].get_asset_materialization_events()[0].materialization.metadata
    assert metadata["llm_calls"].value == 4 * N_ITEMS and metadata["llm_cache_hits"].value == 0
    assert metadata["llm_cost_usd"].value > 0 and "telemetry per configuration" in metadata
    counts = _answer_counts(db, spec)
    assert counts[("regions", "random-baseline")] == 2 * N_ITEMS and counts[("regions", "strong-think")] == 2 * N_ITEMS
    assert counts[("grape_varieties", "external-7b")] == N_ITEMS and len(counts) == 2 * 5
    cost = """SELECT sum(a.cost_usd) AS cost, sum(a.input_tokens) AS tokens, sum(a.output_tokens) AS output,
              bool_and(a.latency_ms > 0) AS timed FROM evaluation_answers a JOIN evaluation_runs r
              USING (evaluation_run_id) WHERE r.spec = %s AND r.model = 'strong'"""
    telemetry = db.query(cost, (spec.name,))[0]
    assert telemetry["output"] == 2 * N_ITEMS and telemetry["timed"]
    assert telemetry["cost"] == pytest.approx((telemetry["tokens"] * 1.0 + telemetry["output"] * 4.0) / 1e6)
    unparsed = db.scalar(
        """SELECT count(*) FROM evaluation_answers a JOIN evaluation_runs r USING (evaluation_run_id)
                            WHERE r.spec = %s AND r.model = 'external-7b' AND a.predicted_index IS NULL""",
        (spec.name,),
    )
    assert unparsed == N_ITEMS  # lm-eval's "[invalid]" extractions stay unparsed, and count as wrong
    rerun = _materialize(spec, db, "regions")  # served from the cache: same answers, same costs
    assert rerun.success and _answer_counts(db, spec) == counts
    assert rerun.get_asset_materialization_events()[0].materialization.metadata["llm_cache_hits"].value == 4 * N_ITEMS
    again = db.query(cost, (spec.name,))[0]
    assert (again["cost"], again["tokens"]) == (telemetry["cost"], telemetry["tokens"])


def test_a_failing_model_leaves_the_partition_as_it_was(setup) -> None:
    db, spec, failing = setup
    before = _answer_counts(db, spec)
    result = _materialize(failing, db, "regions")  # 'weak' answers HTTP 500 beyond the retries
    assert not result.success
    assert "model weak: 40 of 40 calls failed" in _failure(result)
    assert _answer_counts(db, spec) == before


@pytest.mark.slow  # over 3 s with its setup: the full suite only
def test_analysis_stores_tables_and_plots_and_shows_them(setup) -> None:
    db, spec, _ = setup
    for partition in DISCIPLINES:
        _materialize(spec, db, partition)
    result = _materialize(spec, db, None)
    assert result.success
    board = pl.DataFrame(
        db.query(
            """SELECT model, accuracy, ci_low, ci_high, rank FROM analysis_accuracy
                                     WHERE spec = %s AND grouping = 'overall' ORDER BY rank""",
            (spec.name,),
        )
    )
    assert board["model"].to_list()[0] == "strong-think" and board.height == 5
    assert (board["ci_low"] <= board["accuracy"]).all() and (board["accuracy"] <= board["ci_high"]).all()
    groupings = {
        r["grouping"] for r in db.query("SELECT DISTINCT grouping FROM analysis_accuracy WHERE spec = %s", (spec.name,))
    }
    assert groupings == {"overall", "discipline", "difficulty"}  # the wine taxonomy's one root does not split
    tables = {
        r["name"]: r["n"]
        for r in db.query("SELECT name, count(*) AS n FROM analysis_tables WHERE spec = %s GROUP BY name", (spec.name,))
    }
    assert tables["ranking_stability"] == 3 and tables["tiers"] == 5 and tables["pairwise_resolvability"] == 10
    assert tables["reasoning_lift"] == 4  # all items, then L1 / L2 / L3
    assert tables["cost_frontier"] == 3 and tables["telemetry"] == 5
    lift = db.query(
        """SELECT row FROM analysis_tables WHERE spec = %s AND name = 'reasoning_lift'
                       AND row->>'group' = '(all)'""",
        (spec.name,),
    )[0]["row"]
    assert lift["treatment"] == "strong-think" and lift["control"] == "strong" and lift["delta"] > 0
    plots = db.query("SELECT name, png, sha256 FROM analysis_plots WHERE spec = %s ORDER BY name", (spec.name,))
    assert [p["name"] for p in plots] == ["accuracy_by_discipline", "cost_frontier", "score_distribution"]
    assert all(bytes(p["png"]).startswith(b"\x89PNG") for p in plots)
    metadata = result.get_asset_materialization_events()[0].materialization.metadata
    assert "leaderboard (%, bootstrap 95% CI)" in metadata and "plot: cost_frontier" in metadata
    assert metadata["plot: cost_frontier"].value.startswith("![cost_frontier](data:image/png;base64,")
    stored = """SELECT name, row_index, row::text AS row FROM analysis_tables WHERE spec = %s
                UNION ALL SELECT name, 0, sha256 FROM analysis_plots WHERE spec = %s ORDER BY 1, 2"""
    before = db.query(stored, (spec.name, spec.name))
    assert _materialize(spec, db, None).success
    assert db.query(stored, (spec.name, spec.name)) == before  # same answers, same seed: the same analyses


def test_imports_must_name_items_of_the_spec(setup, tmp_path: Path) -> None:
    db, spec, _ = setup
    stray = tmp_path / "samples_stray_2026-11-29T16-00-00.000001.jsonl"
    stray.write_text(
        json.dumps(
            {"doc_id": 0, "doc": {"item": "not-an-item"}, "target": "A", "filtered_resps": ["A"], "exact_match": 1.0}
        )
        + "\n"
    )
    bad = spec.model_copy(
        update={
            "evaluation": EvaluationConfig(
                imports=[ResultsImport(format="lm_eval_samples", path=stray, model="x", item_key="item")]
            )
        }
    )
    before = _answer_counts(db, spec)
    result = _materialize(bad, db, "regions")
    assert not result.success
    assert "are not items of spec evaltest, e.g. 'not-an-item'" in _failure(result)
    assert _answer_counts(db, spec) == before


def test_a_run_tagged_with_a_new_model_evaluates_only_that_model(setup) -> None:
    db, spec, _ = setup
    assert _materialize(spec, db, "regions").success
    before = db.query(
        """SELECT model, evaluation_run_id FROM evaluation_runs WHERE spec = %s AND discipline = 'regions'
                         ORDER BY model""",
        (spec.name,),
    )
    database = DatabaseResource(url=db.url)
    result = dg.materialize(
        list(evaluation_defs(spec).assets),
        partition_key="regions",
        tags={MODEL_TAG: "weak"},
        resources={"database": database, "llm": LLMGatewayResource(database=database)},
    )
    metadata = result.get_asset_materialization_events()[0].materialization.metadata
    assert metadata["llm_calls"].value == N_ITEMS  # the weak model only (k = 1), not the whole slate
    after = db.query(
        """SELECT model, evaluation_run_id FROM evaluation_runs WHERE spec = %s AND discipline = 'regions'
                        ORDER BY model""",
        (spec.name,),
    )
    assert [r["model"] for r in after] == [r["model"] for r in before]
    changed = {
        r["model"] for r, b in zip(after, before, strict=True) if r["evaluation_run_id"] != b["evaluation_run_id"]
    }
    assert changed == {"weak"}  # the other models' stored runs were kept as they were

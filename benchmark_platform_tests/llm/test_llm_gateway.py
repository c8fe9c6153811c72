"""The gateway against a scripted OpenAI-compatible server on loopback: cache, coalescing, faults, cost cap."""

from __future__ import annotations

import asyncio
import uuid

import psycopg2
import pytest
from pydantic import BaseModel

from benchmark_platform.llm.config import GatewaySettings, Prices
from benchmark_platform.llm.double import Latency, Rule, Script
from benchmark_platform.llm.gateway import ChatRequest, Gateway
from benchmark_platform_tests.llm.conftest import FAST, scripted_model


def ask(text: str, model: str = "scripted", **kw) -> ChatRequest:
    return ChatRequest(model=model, messages=[{"role": "user", "content": text}], **kw)


def test_rerun_pays_nothing_and_telemetry_is_recorded(serve, run, db):
    server = serve(Script(rules=[Rule(match="capital", reply="Paris")]))
    m = scripted_model(server.base_url)
    tag = uuid.uuid4().hex
    requests = [ask(f"{tag} capital of France? #{i}") for i in range(20)]
    results, totals = run([m], requests, run_id=f"first-{tag}")
    assert [r.text for r in results] == ["Paris"] * 20 and server.server.calls == 20
    assert totals.cache_hits == 0 and totals.provider_calls == 20
    results2, totals2 = run([m], requests, run_id=f"second-{tag}")
    assert server.server.calls == 20, "a rerun must not call the provider again"
    assert totals2.cache_hits == 20 and [r.text for r in results2] == ["Paris"] * 20
    rows = db.query(
        "SELECT run_id, count(*) AS n, bool_and(cache_hit) AS hit, sum(input_tokens) AS tin"
        " FROM llm_calls WHERE run_id LIKE %s GROUP BY run_id ORDER BY run_id",
        (f"%{tag}",),
    )
    assert [(r["n"], r["hit"]) for r in rows] == [(20, False), (20, True)]
    assert rows[0]["tin"] > 0


def test_sample_index_and_seed_are_part_of_the_key(serve, run):
    server = serve(Script())
    m = scripted_model(server.base_url)
    tag = uuid.uuid4().hex
    run([m], [ask(tag, sample_index=k) for k in range(3)] + [ask(tag, seed=7)])
    assert server.server.calls == 4


def test_stop_sequences_reach_the_provider_and_the_cache_key(serve, run):
    server = serve(Script())
    m = scripted_model(server.base_url)
    tag = uuid.uuid4().hex
    run([m], [ask(tag, stop=("\n\n", ".")), ask(tag)])
    assert server.server.calls == 2, "a different stop list is a different request"
    run([m], [ask(tag, stop=("\n\n", ".", " ", ":", "!"))])
    assert server.server.last_body["stop"] == ["\n\n", ".", " ", ":"], "OpenAI accepts at most four"


def test_identical_concurrent_requests_are_coalesced(serve, run):
    server = serve(Script())
    m = scripted_model(server.base_url)
    results, totals = run([m], [ask(uuid.uuid4().hex)] * 5)
    assert server.server.calls == 1 and totals.coalesced == 4
    assert all(r.ok and r.text == "A" for r in results)


@pytest.mark.slow  # over 3 s with its setup: the full suite only
def test_transient_faults_are_retried(serve, run):
    faults = {
        "r429": ["429", "429"],
        "r500": ["500"],
        "malformed": ["malformed"],
        "truncated": ["truncated"],
        "timeout": ["timeout"],
    }
    tag = uuid.uuid4().hex
    server = serve(
        Script(
            rules=[Rule(match=f"{tag}-{k}", reply=k, faults=v) for k, v in faults.items()],
            retry_after_s=0.05,
            timeout_sleep_s=5.0,
        )
    )
    m = scripted_model(server.base_url, timeout_s=0.5)
    results, totals = run([m], [ask(f"{tag}-{k}") for k in faults])
    assert [(r.status, r.text, r.retries) for r in results] == [("ok", k, len(v)) for k, v in faults.items()]
    assert totals.retries == 6
    assert server.server.faults_served == {"429": 2, "500": 1, "malformed": 1, "truncated": 1, "timeout": 1}


def test_retries_run_out_into_an_error(serve, run):
    tag = uuid.uuid4().hex
    server = serve(Script(rules=[Rule(match=tag, reply="never", faults=["500"] * 50)]))
    settings = GatewaySettings(max_retries=2, backoff_base_s=0.01, backoff_max_s=0.02)
    results, _ = run([scripted_model(server.base_url)], [ask(tag)], settings=settings)
    assert results[0].status == "error" and results[0].retries == 2 and "HTTP 500" in results[0].error
    assert server.server.calls == 3


def test_a_failing_provider_opens_the_circuit(serve, run):
    tag = uuid.uuid4().hex
    server = serve(Script(rules=[Rule(match=tag, reply="never", faults=["500"] * 50)]))
    settings = GatewaySettings(
        max_retries=5, backoff_base_s=0.01, backoff_max_s=0.02, breaker_failures=3, breaker_cooldown_s=60
    )
    m = scripted_model(server.base_url, max_concurrency=1)
    results, totals = run([m], [ask(f"{tag} {i}") for i in range(6)], settings=settings)
    assert {r.status for r in results} == {"circuit_open"}
    assert server.server.calls == 3, "once open, the circuit sends nothing"


def test_client_errors_are_not_retried(serve, run):
    server = serve(Script())
    m = scripted_model(server.base_url.replace("/v1", "/nowhere"))
    results, totals = run([m], [ask(uuid.uuid4().hex)])
    assert results[0].status == "error" and results[0].retries == 0 and "HTTP 404" in results[0].error


def test_cost_cap_stops_before_it_is_exceeded(serve, run):
    server = serve(Script(default_reply="B"))
    prices = Prices(output_per_m=100_000.0)  # $0.10 per output token: a call may cost $1, costs $0.10
    m = scripted_model(server.base_url, prices=prices, max_tokens=10, max_concurrency=2)
    tag = uuid.uuid4().hex
    settings = GatewaySettings(cost_cap_usd=3.0, backoff_base_s=0.01)
    results, totals = run([m], [ask(f"{tag} {i}") for i in range(40)], settings=settings, run_id=tag)
    statuses = [r.status for r in results]
    assert "cost_cap" in statuses and statuses.count("ok") >= 1
    assert totals.cost_usd <= 3.0 and totals.stopped_by_cost_cap
    assert server.server.calls == statuses.count("ok")
    # the cap is per run: a later step of the same run starts from what the run has spent
    more, totals2 = run([m], [ask(f"{tag} later {i}") for i in range(40)], settings=settings, run_id=tag)
    assert "cost_cap" in {r.status for r in more}
    assert totals.cost_usd + totals2.cost_usd <= 3.0


def test_provider_reported_cost_wins_over_prices(serve, run):
    tag = uuid.uuid4().hex
    server = serve(Script(rules=[Rule(match=tag, reply="ok", cost=0.0123)]))
    m = scripted_model(server.base_url, prices=Prices(input_per_m=1.0, output_per_m=1.0))
    results, totals = run([m], [ask(tag), ask("priced " + tag[::-1])])
    assert (results[0].cost_usd, results[0].cost_source) == (0.0123, "provider")
    assert results[1].cost_source == "prices" and 0 < results[1].cost_usd < 0.001


class Verdict(BaseModel):
    answer: str
    confidence: float


def test_structured_output_three_tiers_and_invalid_persists_nothing(serve, run, db):
    tag = uuid.uuid4().hex
    replies = {
        "fenced": 'Sure:\n```json\n{"answer": "B", "confidence": 0.9}\n```',
        "raw": '{"answer": "C", "confidence": 0.5}',
        "prefix": 'My verdict is {"answer": "D", "confidence": 0.2} as asked.',
        "invalid": '{"answer": "E"',
    }
    server = serve(Script(rules=[Rule(match=f"{tag}-{k}", reply=v) for k, v in replies.items()]))
    m = scripted_model(server.base_url)
    results, totals = run([m], [ask(f"{tag}-{k}") for k in replies], schema=Verdict, run_id=tag)
    assert [r.parsed.answer if r.parsed else None for r in results] == ["B", "C", "D", None]
    assert results[3].status == "invalid" and "Verdict" in results[3].error
    # a stage persists parsed answers only: the invalid one leaves no row behind
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("CREATE TEMP TABLE verdicts (answer text) ON COMMIT DROP")
        for r in results:
            if r.ok:
                cur.execute("INSERT INTO verdicts VALUES (%s)", (r.parsed.answer,))
        cur.execute("SELECT array_agg(answer ORDER BY answer) FROM verdicts")
        assert cur.fetchone()[0] == ["B", "C", "D"]
    statuses = db.query("SELECT status, count(*) AS n FROM llm_calls WHERE run_id = %s GROUP BY status", (tag,))
    assert {r["status"]: r["n"] for r in statuses} == {"ok": 3, "invalid": 1}
    assert server.server.calls == 4 and FAST.cache_flush_rows > 4


def test_a_retry_wait_holds_no_slot(serve, run):
    tag = uuid.uuid4().hex
    server = serve(Script(rules=[Rule(match=f"{tag}-limited", reply="late", faults=["429"])], retry_after_s=0.5))
    m = scripted_model(server.base_url, max_concurrency=1)
    results, _ = run([m], [ask(f"{tag}-limited"), ask(f"{tag}-free")])
    assert [(r.text, r.retries) for r in results] == [("late", 1), ("A", 0)]
    # one slot: had the first request kept it while waiting out Retry-After, the second would have waited longer
    assert results[1].latency_ms < results[0].latency_ms, "the second request ran during the first one's wait"


def test_large_batches_keep_order_across_chunks_and_mix_cache_hits(serve, run):
    tag = uuid.uuid4().hex
    server = serve(Script(rules=[Rule(match=f"{tag} {i}:", reply=f"answer {i}") for i in range(0, 300, 7)]))
    m = scripted_model(server.base_url, max_concurrency=16)
    odd = [ask(f"{tag} {i}: ?") for i in range(1, 300, 2)]
    run([m], odd)  # every odd request is cached before the full batch
    everything = [ask(f"{tag} {i}: ?") for i in range(300)]  # more than the first chunks (64, 128)
    results, totals = run([m], everything)
    assert [r.text for r in results] == [f"answer {i}" if i % 7 == 0 else "A" for i in range(300)]
    assert [r.cache_hit for r in results] == [i % 2 == 1 for i in range(300)]
    assert totals.provider_calls == 150 and server.server.calls == 300


def test_an_unknown_model_fails_the_batch_before_anything_is_sent(serve, run):
    server = serve(Script())
    with pytest.raises(KeyError, match="'nope'"):
        run([scripted_model(server.base_url)], [ask("fine"), ask("lost", model="nope")])
    assert server.server.calls == 0


def test_a_failed_lookup_mid_batch_stops_the_batch_and_leaves_nothing_running(serve, db, tmp_path):
    server = serve(Script(latency=Latency(mean_s=0.05)))
    m = scripted_model(server.base_url, max_concurrency=8)
    tag = uuid.uuid4().hex

    async def main() -> set[str]:
        async with Gateway([m], FAST, db, run_id="test", journal_dir=tmp_path / "journal") as gw:
            lookup, seen = gw._store.lookup, []

            def failing(hashes):  # the second chunk's lookup loses the database
                seen.append(len(hashes))
                if len(seen) == 2:
                    raise psycopg2.OperationalError("server closed the connection unexpectedly")
                return lookup(hashes)

            gw._store.lookup = failing
            with pytest.raises(psycopg2.OperationalError):
                await gw.complete_many([ask(f"{tag} {i}") for i in range(200)])
            return {t.get_coro().__qualname__ for t in asyncio.all_tasks() if t is not asyncio.current_task()}

    left = asyncio.run(main())
    assert not any("complete_many" in name for name in left), left  # no feeder or call task outlived the batch
    assert server.server.calls <= 64  # only the first chunk was ever sent


def test_an_answer_with_a_nul_character_is_cached_with_the_rest_of_its_batch(serve, run, db):
    # PostgreSQL's json and text types cannot hold U+0000: one such answer (or prompt) used to fail its whole cache
    # batch on every flush. The answer is stored and returned with U+FFFD in its place, so a rerun answers the same;
    # the prompt reaches the provider as it is and only the cache's copy of the request is cleaned.
    tag = uuid.uuid4().hex
    server = serve(
        Script(rules=[Rule(match="odd", reply="A\x00B"), Rule(match="\x00", reply="N"), Rule(match="plain", reply="C")])
    )
    m = scripted_model(server.base_url)
    requests = [ask(f"{tag} odd"), ask(f"{tag} plain 1"), ask(f"{tag} plain \x00 2")]
    results, totals = run([m], requests)
    assert [r.text for r in results] == ["A\ufffdB", "C", "N"] and totals.status["ok"] == 3  # N: the NUL arrived
    stored = db.query(
        "SELECT response #>> '{choices,0,message,content}' AS text FROM llm_call_cache c"
        " JOIN llm_calls k USING (request_hash) WHERE k.run_id = 'test' AND c.request::text LIKE %s"
        " ORDER BY text",
        (f"%{tag}%",),
    )
    assert [r["text"] for r in stored] == ["A\ufffdB", "C", "N"]
    again, totals2 = run([m], requests)
    assert totals2.cache_hits == 3 and [r.text for r in again] == [r.text for r in results]

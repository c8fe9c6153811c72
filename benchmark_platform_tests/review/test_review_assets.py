"""The review assets on real OenoBench items: allocation under the WIP cap, settlement with bonus-on-bar, audits,
joint penalty, whitelist, appeals, Table 5 and calibration, all through PostgreSQL."""

from __future__ import annotations

import math

import dagster as dg
import pytest
import yaml

from benchmark_platform.defs.common import DatabaseResource
from benchmark_platform.defs.review import build_defs
from benchmark_platform.review import persist as repo
from benchmark_platform.review.models import Verdict

from .conftest import APPLICABLE, spec_for


def materialize(spec, world, name: str) -> dg.MaterializeResult:
    defs = build_defs(spec)
    (asset,) = [a for a in defs.assets if a.key.path[-1] == name]
    result = dg.materialize(
        [asset], partition_key=world.discipline, resources={"database": DatabaseResource(url=world.db.url)}
    )
    assert result.success
    return result.asset_materializations_for_node(asset.op.name)[0].metadata


def careful_scores(reference: dict[str, int], k: int) -> dict[str, int]:
    """A careful review: the reference, with one rubric off by one on every third item (honest noise)."""
    if k % 3:
        return dict(reference)
    rubric = APPLICABLE[k % len(APPLICABLE)]
    return {**reference, rubric: reference[rubric] - 1 if reference[rubric] > 1 else 2}


def rate_open(world, careful: set[str]) -> int:
    """Every reviewer rates all their open assignments; careful ones follow the human ratings, the others wave through."""
    by_id = {i["item_id"]: i for i in world.items}
    rows = world.db.query(
        """SELECT a.blind_id, a.reviewer_id, a.item_id FROM review_assignments a
           LEFT JOIN review_ratings r USING (assignment_id) WHERE a.spec = %s AND r.assignment_id IS NULL""",
        (world.spec,),
    )
    with world.db.transaction() as conn, conn.cursor() as cur:  # reviewers opened their items a while ago
        cur.execute(
            "UPDATE review_assignments SET opened_at = now() - interval '1 hour' WHERE spec = %s AND opened_at IS NULL",
            (world.spec,),
        )
    for k, row in enumerate(rows):
        item = by_id[row["item_id"]]
        if row["reviewer_id"] in careful:
            scores = careful_scores(item["reference"], k)
            verdict, seconds = (Verdict.APPROVE if min(scores.values()) >= 4 else Verdict.REVISE), 600 + 10 * k
        else:
            scores, verdict, seconds = {r: 5 for r in APPLICABLE}, Verdict.APPROVE, 60 + k
        assert (
            repo.submit_rating(world.db, row["blind_id"], row["reviewer_id"], scores, verdict, "", seconds)
            is repo.Submit.STORED
        )
    for item in world.items:
        repo.record_validation(world.db, item["item_id"], 1, item["reference"], world.admin)
    return len(rows)


@pytest.mark.slow  # over 3 s with its setup: the full suite only
def test_review_round_through_the_assets(make_world):
    world = make_world(n_items=24, n_reviewers=4)
    spec = spec_for(
        world,
        policy={
            "wip_cap": 5,
            "tau": 0.9,
            "bonus": 20,
            "base_wage": 10,
            "audit_rate": 0.1,
            "audit_penalty": 15,
            "max_audit_failures": 1,
        },
    )
    careful = set(world.reviewers[:2])

    first = materialize(spec, world, "review_assignments")
    assert first["assigned_items"].value == 10 and first["waiting_items"].value == 14  # 4 reviewers x WIP cap 5
    rated = rate_open(world, careful)
    while rated:
        materialize(spec, world, "review_assignments")
        rated = rate_open(world, careful)
    pairs = repo.rating_pairs(world.db, world.spec, world.discipline)
    assert len(pairs) == 24

    ledger_meta = materialize(spec, world, "review_payout_ledger")
    assert ledger_meta["base"].value == 2 * 24 * 10
    ledger = world.db.query("SELECT * FROM review_ledger WHERE spec = %s", (world.spec,))
    flawed = {i["item_id"] for i in world.items if i["flawed"]}
    bonus = [e for e in ledger if e["kind"] == "bonus"]
    assert bonus, "someone cleared the bar"
    # lazy approval of a truly flawed item never clears tau: no lazy reviewer is paid a bonus on a flawed item
    assert not [e for e in bonus if e["item_id"] in flawed and e["reviewer_id"] not in careful]
    assert all(e["validated_score"] >= 0.9 for e in bonus)

    approved = [p for p in pairs if p["verdict_a"] == p["verdict_b"] == "approve"]
    audits = world.db.query("SELECT item_id FROM review_audits WHERE spec = %s", (world.spec,))
    assert len(audits) == math.ceil(0.1 * len(approved))
    for a in audits:  # the principal audits against the human ratings
        assert repo.record_audit(world.db, a["item_id"], 1, a["item_id"] in flawed, world.admin, "")
    materialize(spec, world, "review_payout_ledger")
    penalties = world.db.query(
        "SELECT reviewer_id, item_id FROM review_ledger WHERE spec = %s AND kind = 'penalty'", (world.spec,)
    )
    flawed_audited = {a["item_id"] for a in audits} & flawed
    assert {p["item_id"] for p in penalties} == flawed_audited
    off = {r["reviewer_id"] for r in world.db.query("SELECT reviewer_id FROM review_reviewers WHERE NOT whitelisted")}
    assert {p["reviewer_id"] for p in penalties} <= off  # max_audit_failures=1

    metrics = materialize(spec, world, "review_metrics")
    assert metrics["pairs"].value == 24
    rows = world.db.query("SELECT * FROM review_metrics WHERE spec = %s", (world.spec,))
    assert {r["metric"] for r in rows} == {"caught_flaw_rate", "asymmetric_catch_rate", "audit_flagged_rate"}

    calibration = materialize(spec, world, "review_bonus_calibration")
    assert calibration["validated_reviews"].value == 48
    stored = world.db.query("SELECT calibration FROM review_calibrations WHERE spec = %s", (world.spec,))
    assert len(stored) == 1 and stored[0]["calibration"]["dp_min"] == calibration["dp_min"].value


def test_appeal_reopens_a_revised_item_for_the_same_pair(make_world):
    world = make_world(n_items=6, n_reviewers=2, affiliations=True)
    spec = spec_for(world, policy={"wip_cap": 5})
    materialize(spec, world, "review_assignments")
    rate_open(world, careful=set(world.reviewers))
    revised = next(p for p in repo.rating_pairs(world.db, world.spec) if "revise" in (p["verdict_a"], p["verdict_b"]))
    blind = repo.file_appeal(world.db, revised["item_id"], "Johnson (2019), Wine Atlas p. 112 supports option C")
    assert len(blind) == 2
    rows = world.db.query("SELECT reviewer_id, round FROM review_assignments WHERE blind_id = ANY(%s)", (blind,))
    assert {r["round"] for r in rows} == {2} and {r["reviewer_id"] for r in rows} == set(world.reviewers)
    approved = [p for p in repo.rating_pairs(world.db, world.spec) if p["verdict_a"] == p["verdict_b"] == "approve"]
    for p in approved[:1]:
        with pytest.raises(ValueError, match="only revised or rejected"):
            repo.file_appeal(world.db, p["item_id"], "more evidence")


def sensor_tick(spec, world, cursor=None):
    defs = build_defs(spec)
    (sensor,) = defs.sensors
    context = dg.build_sensor_context(cursor=cursor, resources={"database": DatabaseResource(url=world.db.url)})
    return sensor(context)


def test_assignment_sensor_requests_a_run_when_items_can_be_assigned(make_world):
    world = make_world(n_items=8, n_reviewers=2)
    spec = spec_for(world, policy={"wip_cap": 3})
    first = sensor_tick(spec, world)
    (request,) = first.run_requests
    assert request.partition_key == world.discipline and request.run_key.startswith(
        f"review_assign:{world.discipline}:"
    )
    materialize(spec, world, "review_assignments")  # what the daemon does with the request
    assert len(repo.rating_pairs(world.db, world.spec)) == 0
    assert world.db.scalar("SELECT count(DISTINCT item_id) FROM review_assignments WHERE spec = %s", (world.spec,)) == 3
    # both reviewers are at the WIP cap: nothing to request until they rate
    again = sensor_tick(spec, world)
    assert isinstance(again, dg.SkipReason) or not again.run_requests
    overview = repo.reviewer_overview(world.db, world.spec, spec.review.policy)
    mine = [o["why_no_work"] for o in overview if o["reviewer"].reviewer_id in world.reviewers]
    assert mine == ["WIP cap reached: 3 open items (cap 3)"] * 2
    assert repo.waiting_items(world.db, world.spec) == {world.discipline: 5}
    rate_open(world, careful=set(world.reviewers))
    (later,) = sensor_tick(spec, world).run_requests
    assert later.run_key != request.run_key


def test_edit_reviewer_from_the_cli_with_plain_errors(make_world, monkeypatch, capsys, tmp_path):
    from benchmark_platform.cli.main import main

    world = make_world(n_items=1, n_reviewers=1)
    monkeypatch.setenv("BENCHMARK_PLATFORM_DATABASE_URL", world.db.url)
    name = world.reviewers[0]
    spec = spec_for(world).model_dump(mode="json", exclude_defaults=True)
    spec["taxonomy"].append({"name": "Extra", "key": "extra_d"})
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(spec), encoding="utf-8")
    edit = ["review", "edit-reviewer", name, "--spec", str(spec_file)]
    assert main([*edit, "--add-disciplines", "extra_d", "--exam", "extra_d:1:passed"]) == 0
    assert main(["review", "edit-reviewer", name, "--level", "WSET Level 3", "--no-whitelist"]) == 0
    (me,) = [r for r in repo.load_reviewers(world.db) if r.reviewer_id == name]
    assert me.disciplines == {world.discipline, "extra_d"} and me.exams_passed == {world.discipline}
    assert me.level == "WSET Level 3" and not me.whitelisted
    assert repo.exams(world.db)[name]["extra_d"] == {1: True}
    assert main(["review", "edit-reviewer", name, "--exam", "extra_d:3:passed"]) == 2
    assert "--exam 'extra_d:3:passed': write DISCIPLINE:ROUND:passed" in capsys.readouterr().err
    assert main(["review", "edit-reviewer", f"ghost-{world.spec}", "--level", "x"]) == 2
    assert f"there is no reviewer 'ghost-{world.spec}'" in capsys.readouterr().err


def test_items_the_audit_dropped_are_not_sent_to_review(make_world):
    world = make_world(n_items=3, n_reviewers=2)
    spec = spec_for(world, policy={"wip_cap": 5})
    dropped = world.items[0]["item_id"]
    with world.db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            "INSERT INTO audit_runs (spec, discipline, inputs_hash) VALUES (%s, %s, 'h') RETURNING audit_run_id",
            (world.spec, world.discipline),
        )
        run = cur.fetchone()[0]
        cur.execute(
            "INSERT INTO audit_policy (audit_run_id, item_id, action, reason) VALUES (%s, %s, 'drop', 'B1 wrong key')",
            (run, dropped),
        )
    assert repo.waiting_items(world.db, world.spec) == {world.discipline: 2}
    plan = repo.plan_assignments(world.db, world.spec, world.discipline, spec.review.policy, spec.seed)
    assert {a.item_id for a in plan.assignments} == {i["item_id"] for i in world.items[1:]}


def test_assign_and_settle_from_the_cli_call_what_the_assets_call(make_world, monkeypatch, capsys, tmp_path):
    import yaml

    from benchmark_platform.cli.main import main

    world = make_world(n_items=2, n_reviewers=2)
    spec = spec_for(world, policy={"wip_cap": 3}, currency="EUR")
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec.model_dump(mode="json", exclude_defaults=True)), encoding="utf-8")
    monkeypatch.setenv("BENCHMARK_PLATFORM_DATABASE_URL", world.db.url)
    assert main(["review", "assign", "--spec", str(path)]) == 0
    assert capsys.readouterr().out == f"{world.discipline}: 2 items assigned\n"
    rate_open(world, careful=set(world.reviewers))
    other_set = repo.ReviewPolicy(rubric_set="oenobench8")  # a spec that switched sets never mixes the two scales
    assert repo.settle_partition(world.db, world.spec, world.discipline, other_set, spec.seed) == []
    assert main(["review", "settle", "--spec", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{world.discipline}: settled 2 fully rated items") and out.endswith(" EUR paid\n")
    assert world.db.scalar("SELECT count(*) FROM review_ledger WHERE spec = %s AND kind = 'base'", (world.spec,)) == 4

"""KINA Table 5 from review logs, and the simulated review round (pilot -> calibration -> tournament -> ledger)."""

from __future__ import annotations

import polars as pl
import pytest
from scipy import stats

from benchmark_platform.cli.main import main as cli
from benchmark_platform.review.metrics import LOG_SCHEMA, agreement, cohen_kappa, table5
from benchmark_platform.review.simround import SimulationConfig, simulate_review_round


def test_table5_counts_and_wilson_intervals():
    rows = [
        # phase, item, flag_a, flag_b, decision, audited, flawed
        ("flat", "1", True, False, "revise", False, None),
        ("flat", "2", False, False, "approved", True, True),
        ("flat", "3", False, False, "approved", True, False),
        ("flat", "4", True, True, "rejected", False, None),
        ("tournament", "5", True, True, "rejected", False, None),
        ("tournament", "6", False, False, "approved", True, False),
        ("tournament", "7", False, True, "approved", True, True),  # escalated, committee approved: not twice-approved
    ]
    logs = pl.DataFrame(rows, schema=LOG_SCHEMA, orient="row")
    t = {(r["phase"], r["metric"]): r for r in table5(logs).iter_rows(named=True)}
    assert (t["flat", "caught_flaw_rate"]["k"], t["flat", "caught_flaw_rate"]["n"]) == (2, 4)
    assert (t["flat", "asymmetric_catch_rate"]["k"], t["flat", "asymmetric_catch_rate"]["n"]) == (1, 2)
    assert (t["flat", "audit_flagged_rate"]["k"], t["flat", "audit_flagged_rate"]["n"]) == (1, 2)
    assert (t["tournament", "audit_flagged_rate"]["k"], t["tournament", "audit_flagged_rate"]["n"]) == (0, 1)
    ci = stats.binomtest(2, 4).proportion_ci(method="wilson")
    assert (t["flat", "caught_flaw_rate"]["ci_low"], t["flat", "caught_flaw_rate"]["ci_high"]) == pytest.approx(
        (ci.low, ci.high)
    )
    with pytest.raises(ValueError, match="lacks columns"):
        table5(logs.drop("audited"))


def test_agreement_and_kappa():
    assert cohen_kappa([True, True, False, False], [True, True, False, False]) == 1.0
    assert cohen_kappa([True, False], [False, True]) == -1.0
    assert cohen_kappa([True, True], [True, True]) is None
    scores = {
        k: 5
        for k in (
            "representativeness_depth",
            "factuality",
            "source_reliability",
            "logical_rigor",
            "distractor_plausibility",
            "combinatorial_validity",
        )
    }
    pair = {
        "spec": "s",
        "discipline": "d",
        "verdict_a": "approve",
        "verdict_b": "reject",
        "scores_a": scores,
        "scores_b": {**scores, "factuality": 2},
    }
    (row,) = agreement([pair])
    assert row["pairs"] == 1 and row["verdict_agreement"] == 0 and row["mean_abs_rubric_diff"] == pytest.approx(0.5)


def test_simulated_round_ledger_is_consistent_and_tournament_beats_flat():
    cfg = SimulationConfig(items_per_discipline=80)
    sim = simulate_review_round(cfg)
    ledger = sim.ledger()
    base = ledger.filter(pl.col("kind") == "base")
    assert base.height == 2 * 80 * len(cfg.disciplines)  # every item reviewed twice, base wage each
    assert set(base["amount"]) == {cfg.base_wage}
    for c in sim.calibrations:
        bonus = ledger.filter((pl.col("kind") == "bonus") & (pl.col("discipline") == c.discipline))
        per_item = bonus.group_by("item_id").agg(pl.col("amount").sum())["amount"]
        assert (
            per_item.max() <= c.bonus_target + 0.011 and per_item.min() > c.bonus_target
        )  # one B per item, >= Corollary 1.2
        assert c.dp_min > 0
    penalties = ledger.filter(pl.col("kind") == "penalty")
    assert set(penalties["amount"]) <= {-cfg.audit_penalty}
    t = {(r["phase"], r["metric"]): r["rate"] for r in sim.table5.iter_rows(named=True)}
    assert t["tournament", "caught_flaw_rate"] > t["flat", "caught_flaw_rate"]
    assert t["tournament", "asymmetric_catch_rate"] < t["flat", "asymmetric_catch_rate"]
    assert t["tournament", "audit_flagged_rate"] <= t["flat", "audit_flagged_rate"]


def test_cli_writes_the_payout_ledger(tmp_path, capsys):
    out = tmp_path / "ledger.csv"
    assert cli(["review", "simulate-round", "--out", str(out), "--items-per-discipline", "30", "--seed", "3"]) == 0
    ledger = pl.read_csv(out)
    assert set(ledger.columns) >= {"discipline", "reviewer_id", "item_id", "round", "kind", "amount", "validated_score"}
    assert ledger.filter(pl.col("kind") == "base").height == 2 * 30 * 3
    assert "Delta p_min" in capsys.readouterr().out

"""Bonus calibration from pilot data: fitted win probabilities, Delta p_min, Corollary 1, C_bonus."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from benchmark_platform.review.calibration import (
    EmpiricalDistribution,
    bonus_dominant,
    bonus_for_effort_rate,
    bonus_for_mean_quality,
    calibrate,
    empirical_win_probability,
    pilot_from_logs,
)


def pilot(rng: np.random.Generator, n: int, discipline: str = "law") -> pl.DataFrame:
    high, low = rng.normal(0.85, 0.08, n), rng.normal(0.7, 0.08, n)
    return pl.DataFrame(
        {
            "discipline": [discipline] * 2 * n,
            "effort": ["H"] * n + ["L"] * n,
            "validated_score": np.concatenate([high, low]),
            "cost": rng.normal(2.0, 1.0, 2 * n),
        }
    )


def test_generalised_inverse_of_the_empirical_cost_law():
    g = EmpiricalDistribution(np.array([3.0, 1.0, 2.0, 4.0]))
    assert [g.ppf(u) for u in (0.25, 0.26, 0.5, 1.0)] == [1.0, 2.0, 2.0, 4.0]
    assert g.ppf(0.0) == -math.inf and g.cdf(2.0) == 0.5 and g.cdf(0.5) == 0.0


def test_corollary1_closed_forms():
    g = EmpiricalDistribution(np.array([-1.0, 0.5, 1.0, 2.0]))  # one intrinsically motivated type: pi_flat = 1/4
    assert bonus_dominant(2.0, 0.25) == 8.0
    assert bonus_for_effort_rate(g, 0.25, 0.25) == 0.0  # [G^-1(1/4)]_+ = [-1]_+ = 0: flat payment already gets there
    assert bonus_for_effort_rate(g, 0.6, 0.25) == 4.0
    assert bonus_for_mean_quality(g, eta=0.5 * 0.75, delta_q=1.0, dp_min=0.25) == 4.0  # pi* = 1/4 + 0.375 -> G^-1 = 1
    with pytest.raises(ValueError, match="infeasible"):
        bonus_for_mean_quality(g, eta=0.8, delta_q=1.0, dp_min=0.25)
    with pytest.raises(ValueError, match="Delta p_min = 0 <= 0"):
        bonus_dominant(1.0, 0.0)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        bonus_for_effort_rate(g, 1.0, 0.25)


def test_calibration_fits_agree_with_the_pilot_pairs():
    rng = np.random.default_rng(11)
    (cal,) = calibrate(pilot(rng, 400), tau=0.75, target_rate=0.7)
    assert cal.n_high == cal.n_low == 400
    assert cal.dp_min > 0.2 and abs(cal.dp_min - cal.empirical_dp_min) < 0.05
    assert cal.probs.dp_low > cal.probs.dp_high  # beating a lazy opponent is where effort pays most here
    assert cal.bonus_dominant == pytest.approx(cal.delta_c / cal.dp_min)
    assert 0 < cal.bonus_target < cal.bonus_dominant
    assert 0 < cal.expected_bonus_at_target <= cal.bonus_target


def test_calibration_rejects_bad_pilot_rows():
    frame = pilot(np.random.default_rng(1), 5)
    with pytest.raises(ValueError, match="effort must be 'H' or 'L'"):
        calibrate(frame.with_columns(pl.lit("high").alias("effort")), 0.7, 0.5)
    with pytest.raises(ValueError, match="lacks columns \\['cost'\\]"):
        calibrate(frame.drop("cost"), 0.7, 0.5)


def test_empirical_win_probability_splits_ties():
    assert empirical_win_probability(np.array([0.9]), np.array([0.9]), 0.8) == 0.5
    assert empirical_win_probability(np.array([0.7]), np.array([0.6]), 0.8) == 0.0  # below the bar


def test_pilot_from_logs_labels_effort_by_time_and_prices_it():
    logs = pl.DataFrame(
        {
            "discipline": ["law"] * 4,
            "reviewer_id": ["a", "a", "b", "b"],
            "seconds_on_page": [600.0, 500.0, 100.0, 200.0],
            "validated_score": [0.9, 0.95, 0.7, 0.6],
        }
    )
    out = pilot_from_logs(logs, hourly_rate=36.0)
    assert out["effort"].to_list() == ["H", "H", "L", "L"]
    # extra time of H over L = 400 s = 4 currency units at 36/h, scaled by each reviewer's relative time
    assert out["cost"].to_list() == pytest.approx([4 * 550 / 350] * 2 + [4 * 150 / 350] * 2)

"""Theorem 1 and Corollary 1 of KINA Appendix C, checked by Monte Carlo over many parameter draws (hypothesis).

The simulator (benchmark_platform.review.game) draws qualities, noisy scores, bonuses and cost types from
Assumptions 1-3; the closed forms (benchmark_platform.review.calibration) are checked against it. Tolerances are
Monte Carlo error bounds (DKW / binomial, at about 1e-6 failure probability), and hypothesis is derandomised so the
draws are the same in every run.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from scipy import stats

from benchmark_platform.review.calibration import (
    bonus_dominant,
    bonus_for_effort_rate,
    bonus_for_mean_quality,
    bonus_with_whitelist,
    expected_bonus,
    win_probabilities,
)
from benchmark_platform.review.game import (
    GameParams,
    dp_min_of,
    effort_gain_mc,
    equilibrium_rates,
    fosd_gap,
    play,
    released_quality,
    win_probabilities_mc,
)

N = 20_000
DKW = 2 * math.sqrt(math.log(2 / 1e-6) / (2 * N))  # two empirical CDFs, each within this of the truth
RATE_TOL = 5 * math.sqrt(0.25 / (2 * N))  # a high-effort share over 2N reviewers
SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None)

params = st.builds(
    lambda mu_low, gap, sq, se, cm, cs, tau_shift, bonus, transform: GameParams(
        mu_low=mu_low,
        mu_high=mu_low + gap,
        sigma_q=sq,
        sigma_eps=se,
        cost_mean=cm,
        cost_sd=cs,
        tau=mu_low + tau_shift,
        bonus=bonus,
        transform=transform,
    ),
    mu_low=st.floats(-1, 1),
    gap=st.floats(0.2, 2),
    sq=st.floats(0.3, 1.5),
    se=st.floats(0.1, 1.5),
    cm=st.floats(-0.5, 2),
    cs=st.floats(0.1, 1.5),
    tau_shift=st.floats(-1, 2.5),
    bonus=st.floats(0, 6),
    transform=st.sampled_from(["identity", "tanh", "cubic"]),
)


def normal_laws(p: GameParams):
    """Exact score laws for the identity transform: S^e ~ Normal(mu_e, sqrt(sigma_q^2 + sigma_eps^2))."""
    sd = math.hypot(p.sigma_q, p.sigma_eps)
    return stats.norm(p.mu_high, sd), stats.norm(p.mu_low, sd)


@SETTINGS
@given(p=params, aggregator=st.sampled_from(["min", "mean", "max", "sum_plus_noise"]), seed=st.integers(0, 2**32 - 1))
def test_theorem1_effort_rate_and_fosd_of_released_quality(p, aggregator, seed):
    rng = np.random.default_rng(seed)
    probs = win_probabilities_mc(p, 2 * N, rng)
    dp_min = dp_min_of(probs)
    assume(dp_min > 0.01)
    bound = float(p.cost.cdf(p.bonus * dp_min))
    pi_flat = float(p.cost.cdf(0.0))
    equilibria = equilibrium_rates(p, probs)
    assert equilibria, "a continuous best-response map on [0, 1] has a fixed point"
    assert all(pi >= bound - 1e-9 for pi in equilibria)  # pi_tour >= G(B dp_min) at every equilibrium
    assert bound >= pi_flat - 1e-12  # G(B dp_min) >= G(0) = pi_flat

    tour = play(p, "tour", min(equilibria), probs, N, rng)
    flat = play(p, "flat", 0.0, probs, N, rng)
    assert tour.high_effort_rate >= bound - RATE_TOL
    assert abs(flat.high_effort_rate - pi_flat) <= RATE_TOL
    z = rng.standard_normal(N)
    y_tour, y_flat = released_quality(tour, aggregator, z), released_quality(flat, aggregator, z)
    assert fosd_gap(y_tour, y_flat) <= DKW  # F_tour <= F_flat everywhere, up to sampling error
    if min(equilibria) - pi_flat > 0.2:  # the check has power: a clear effort shift shows as a strict shift
        event("clear effort shift: strict FOSD checked")
        assert fosd_gap(y_flat, y_tour) > DKW


@SETTINGS
@given(p=params, seed=st.integers(0, 2**32 - 1))
@pytest.mark.slow  # over 3 s with its setup: the full suite only
def test_fitted_win_probabilities_and_bonus_spend_match_simulation(p, seed):
    p = p.model_copy(update={"transform": "identity"})
    rng = np.random.default_rng(seed)
    mc = win_probabilities_mc(p, 2 * N, rng)
    exact = win_probabilities(*normal_laws(p), p.tau)
    for profile, value in [("HH", exact.p_hh), ("HL", exact.p_hl), ("LH", exact.p_lh), ("LL", exact.p_ll)]:
        assert abs(mc[profile] - value) <= RATE_TOL
    draw = play(p, "tour", min(equilibrium_rates(p, mc)), mc, N, rng)
    predicted = expected_bonus(p.bonus, draw.high_effort_rate, exact)  # C_bonus(B, pi) at the realised effort rate
    assert abs(draw.bonus_paid.mean() - predicted) <= p.bonus * RATE_TOL * 2
    assert predicted <= p.bonus


@SETTINGS
@given(p=params, delta_c=st.floats(0.05, 3), seed=st.integers(0, 2**32 - 1))
@pytest.mark.slow  # over 3 s with its setup: the full suite only
def test_corollary1_dominant_bonus_makes_high_effort_strictly_better(p, delta_c, seed):
    p = p.model_copy(update={"transform": "identity"})
    exact = win_probabilities(*normal_laws(p), p.tau)
    assume(exact.dp_min > 0.05)
    b = 1.05 * bonus_dominant(delta_c, exact.dp_min)
    game = p.model_copy(update={"bonus": b})
    rng = np.random.default_rng(seed)
    for opponent_high in (False, True):  # simulated payoffs, not the formula: B * (win_H - win_L) - Delta C > 0
        gain = effort_gain_mc(game, opponent_high, 4 * N, rng)
        assert gain - delta_c > -b * RATE_TOL
        assert b * (exact.dp_high if opponent_high else exact.dp_low) - delta_c > 0


@SETTINGS
@given(p=params, target=st.floats(0.05, 0.95), seed=st.integers(0, 2**32 - 1))
@pytest.mark.slow  # over 3 s with its setup: the full suite only
def test_corollary1_target_effort_rate_is_reached(p, target, seed):
    p = p.model_copy(update={"transform": "identity"})
    exact = win_probabilities(*normal_laws(p), p.tau)
    assume(exact.dp_min > 0.05)
    game = p.model_copy(update={"bonus": bonus_for_effort_rate(p.cost, target, exact.dp_min)})
    rng = np.random.default_rng(seed)
    probs = win_probabilities_mc(game, 2 * N, rng)
    equilibria = equilibrium_rates(game, probs)
    assert min(equilibria) >= target - 0.02  # MC error in dp_min moves the fixed point a little
    assert play(game, "tour", min(equilibria), probs, N, rng).high_effort_rate >= target - 0.02 - RATE_TOL


@SETTINGS
@given(p=params, share=st.floats(0.05, 0.9), seed=st.integers(0, 2**32 - 1))
@pytest.mark.slow  # over 3 s with its setup: the full suite only
def test_corollary1_mean_quality_target_is_met(p, share, seed):
    p = p.model_copy(update={"transform": "identity"})
    exact = win_probabilities(*normal_laws(p), p.tau)
    assume(exact.dp_min > 0.05)
    delta_q = p.mu_high - p.mu_low
    eta = share * (1 - float(p.cost.cdf(0.0))) * delta_q
    game = p.model_copy(update={"bonus": bonus_for_mean_quality(p.cost, eta, delta_q, exact.dp_min)})
    rng = np.random.default_rng(seed)
    probs = win_probabilities_mc(game, 2 * N, rng)
    tour = play(game, "tour", min(equilibrium_rates(game, probs)), probs, 4 * N, rng)
    flat = play(game, "flat", 0.0, probs, 4 * N, rng)
    gain = np.concatenate([tour.q_a, tour.q_b]).mean() - np.concatenate([flat.q_a, flat.q_b]).mean()
    se = p.sigma_q * math.sqrt(2 / (8 * N)) + delta_q * RATE_TOL
    assert gain >= eta - 0.02 * delta_q - 5 * se


@SETTINGS
@given(
    p=params,
    delta_c=st.floats(0.1, 3),
    loss_gap=st.floats(0, 0.5),
    omega=st.floats(0, 5),
    seed=st.integers(0, 2**32 - 1),
)
def test_whitelist_extension_lowers_the_needed_bonus(p, delta_c, loss_gap, omega, seed):
    p = p.model_copy(update={"transform": "identity"})
    exact = win_probabilities(*normal_laws(p), p.tau)
    assume(exact.dp_min > 0.05)
    lam = loss_gap * omega  # Lambda_min = inf Delta q * Omega
    b = bonus_with_whitelist(delta_c, lam, exact.dp_min)
    assert b <= bonus_dominant(delta_c, exact.dp_min)
    game = p.model_copy(update={"bonus": 1.05 * b + 1e-6})
    rng = np.random.default_rng(seed)
    for opponent_high in (False, True):
        gain = effort_gain_mc(game, opponent_high, 4 * N, rng) + lam - delta_c
        assert gain > -game.bonus * RATE_TOL

"""Monte Carlo of the two-reviewer game of KINA Appendix C under Assumptions 1-3.

Latent review quality Q^e ~ Normal(mu_e, sigma_q) with mu_H > mu_L (Assumption 1, strict FOSD); the principal sees
S = g(Q) + eps with g strictly increasing and eps i.i.d. Normal(0, sigma_eps) (Assumption 2); cost types kappa are
i.i.d. Normal(cost_mean, cost_sd) = G, continuous, so G(0) > 0 intrinsically motivated types may exist
(Assumption 3). The bonus B goes to the higher score when it clears tau (eq. 3). Everything here is simulated from
those primitives, independently of the closed forms in :mod:`benchmark_platform.review.calibration`, so the two can
check each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator
from scipy import optimize, stats

Transform = Literal["identity", "tanh", "cubic"]
Aggregator = Literal["min", "mean", "max", "sum_plus_noise"]
_TRANSFORMS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "identity": lambda q: q,
    "tanh": np.tanh,
    "cubic": lambda q: q + q**3 / 3.0,
}


class GameParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    mu_low: float
    mu_high: float
    sigma_q: float = Field(gt=0)
    transform: Transform = "identity"
    sigma_eps: float = Field(gt=0)
    cost_mean: float
    cost_sd: float = Field(gt=0)
    tau: float
    bonus: float = Field(ge=0)

    @model_validator(mode="after")
    def _assumption_1(self) -> GameParams:
        if not self.mu_high > self.mu_low:
            raise ValueError("Assumption 1 needs mu_high > mu_low")
        return self

    @property
    def cost(self) -> Any:  # a frozen scipy.stats law
        """G, the law of the cost type kappa."""
        return stats.norm(self.cost_mean, self.cost_sd)


def _scores(p: GameParams, high: np.ndarray, z: np.ndarray, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    q = np.where(high, p.mu_high, p.mu_low) + p.sigma_q * z
    return q, _TRANSFORMS[p.transform](q) + eps


def _bonus_won(mine: np.ndarray, theirs: np.ndarray, tau: float) -> np.ndarray:
    return ((mine > theirs) & (mine >= tau)).astype(float)


def win_probabilities_mc(p: GameParams, n: int, rng: np.random.Generator) -> dict[str, float]:
    """p(e_i, e_-i) for the four profiles, by simulation with common random numbers across profiles."""
    z_i, z_j, e_i, e_j = rng.standard_normal((4, n)) * np.array([[1.0], [1.0], [p.sigma_eps], [p.sigma_eps]])
    out = {}
    for mine in "HL":
        for theirs in "HL":
            _, s_i = _scores(p, np.full(n, mine == "H"), z_i, e_i)
            _, s_j = _scores(p, np.full(n, theirs == "H"), z_j, e_j)
            out[mine + theirs] = float(_bonus_won(s_i, s_j, p.tau).mean())
    return out


def dp_min_of(probs: dict[str, float]) -> float:
    return min(probs["HL"] - probs["LL"], probs["HH"] - probs["LH"])


def equilibrium_rates(p: GameParams, probs: dict[str, float]) -> list[float]:
    """Every symmetric equilibrium high-effort rate: pi = G(B Delta p(pi)), Delta p(pi) = pi Delta p(H) + (1 - pi) Delta p(L).

    A type kappa plays H iff kappa <= B Delta p(pi) when the opponent plays H with probability pi (cutoff strategies).
    """
    dp_l, dp_h = probs["HL"] - probs["LL"], probs["HH"] - probs["LH"]
    cost = p.cost

    def excess(pi: Any) -> Any:  # vectorised over pi
        return cost.cdf(p.bonus * (dp_l + pi * (dp_h - dp_l))) - pi

    grid = np.linspace(0.0, 1.0, 201)
    values = excess(grid)
    roots = [float(x) for x, v in zip(grid, values, strict=True) if v == 0.0]
    for a, b, va, vb in zip(grid[:-1], grid[1:], values[:-1], values[1:], strict=True):
        if va * vb < 0:
            roots.append(float(optimize.brentq(excess, a, b, xtol=1e-12)))
    return sorted(roots)


@dataclass(frozen=True)
class RoundDraw:
    """One simulated round of n tasks under a mechanism."""

    high_a: np.ndarray
    high_b: np.ndarray
    q_a: np.ndarray
    q_b: np.ndarray
    bonus_paid: np.ndarray  # per task: B if someone cleared the bar, else 0

    @property
    def high_effort_rate(self) -> float:
        return float(np.concatenate([self.high_a, self.high_b]).mean())


def play(
    p: GameParams,
    mechanism: Literal["flat", "tour"],
    effort_rate: float,
    probs: dict[str, float],
    n: int,
    rng: np.random.Generator,
) -> RoundDraw:
    """Draw n tasks: fresh i.i.d. types, cutoff effort choices at the given equilibrium rate, qualities and bonuses."""
    kappa = p.cost.rvs(size=(2, n), random_state=rng)
    if mechanism == "flat":
        cutoff = 0.0
    else:
        cutoff = p.bonus * (effort_rate * (probs["HH"] - probs["LH"]) + (1 - effort_rate) * (probs["HL"] - probs["LL"]))
    high = kappa <= cutoff
    z = rng.standard_normal((2, n))
    eps = rng.normal(0.0, p.sigma_eps, (2, n))
    q_a, s_a = _scores(p, high[0], z[0], eps[0])
    q_b, s_b = _scores(p, high[1], z[1], eps[1])
    paid = p.bonus * (np.maximum(s_a, s_b) >= p.tau) if mechanism == "tour" else np.zeros(n)
    return RoundDraw(high_a=high[0], high_b=high[1], q_a=q_a, q_b=q_b, bonus_paid=paid)


def effort_gain_mc(p: GameParams, opponent_high: bool, n: int, rng: np.random.Generator) -> float:
    """B (win rate with H - win rate with L) against a fixed opponent effort, from simulated payouts (CRN)."""
    z_i, z_j = rng.standard_normal((2, n))
    e_i, e_j = rng.normal(0.0, p.sigma_eps, (2, n))
    _, s_j = _scores(p, np.full(n, opponent_high), z_j, e_j)
    _, s_h = _scores(p, np.full(n, True), z_i, e_i)
    _, s_l = _scores(p, np.full(n, False), z_i, e_i)
    return float(p.bonus * (_bonus_won(s_h, s_j, p.tau) - _bonus_won(s_l, s_j, p.tau)).mean())


def released_quality(draw: RoundDraw, aggregator: Aggregator, z: np.ndarray) -> np.ndarray:
    """Y = Gamma(Q_a, Q_b, Z) for a coordinatewise nondecreasing Gamma; Z is mechanism-invariant."""
    if aggregator == "min":
        return np.asarray(np.minimum(draw.q_a, draw.q_b))
    if aggregator == "max":
        return np.asarray(np.maximum(draw.q_a, draw.q_b))
    if aggregator == "mean":
        return np.asarray((draw.q_a + draw.q_b) / 2)
    return np.asarray(draw.q_a + draw.q_b + z)


def fosd_gap(better: np.ndarray, worse: np.ndarray) -> float:
    """sup_t (F_better(t) - F_worse(t)) over the pooled sample: <= 0 iff ``better`` FOSD-dominates empirically."""
    grid = np.sort(np.concatenate([better, worse]))
    f_better = np.searchsorted(np.sort(better), grid, side="right") / len(better)
    f_worse = np.searchsorted(np.sort(worse), grid, side="right") / len(worse)
    return float(np.max(f_better - f_worse))

"""Bonus calibration from pilot data: KINA 3.2, Appendix C (win probabilities, Delta p_min, Corollary 1, C_bonus).

Pilot reviews carry a validated score S, the effort branch (H or L) they were collected under, and the reviewer's
incremental cost of high effort kappa (e.g. extra minutes times the hourly rate). Score distributions F_H^S, F_L^S
are fitted per discipline, the winning probabilities p(e_i, e_-i) = E[1 - F_{e_i}^S(max(S_-i, tau))] are integrated
from the fits, and Corollary 1 turns Delta p_min into the bonus to pay.
"""

from __future__ import annotations

import math
from typing import Any, Literal, Protocol

import numpy as np
import polars as pl
from pydantic import BaseModel, ConfigDict

Family = Literal["norm", "beta"]


class Distribution(Protocol):
    """A univariate law with a CDF and a generalised inverse (scipy frozen distributions qualify)."""

    def cdf(self, x: float) -> float: ...

    def ppf(self, u: float) -> float: ...


class EmpiricalDistribution:
    """The empirical CDF of a sample, with the generalised inverse G^-1(u) = inf{x : G(x) >= u} of Corollary 1."""

    def __init__(self, sample: np.ndarray) -> None:
        if len(sample) == 0:
            raise ValueError("an empirical distribution needs at least one observation")
        self.sorted = np.sort(np.asarray(sample, dtype=float))

    def cdf(self, x: float) -> float:
        return float(np.searchsorted(self.sorted, x, side="right") / len(self.sorted))

    def ppf(self, u: float) -> float:
        if u <= 0:
            return -math.inf
        return float(self.sorted[min(math.ceil(u * len(self.sorted)), len(self.sorted)) - 1])


def fit_scores(sample: np.ndarray, family: Family = "norm") -> Any:  # a frozen scipy.stats law
    """Fit a continuous law to validated scores in [0, 1]; Assumption 2 makes S continuous (normal by default)."""
    from scipy import stats  # here: scipy.stats costs ~0.9 s to import, in every process loading the code

    x = np.asarray(sample, dtype=float)
    if len(x) < 3 or np.ptp(x) == 0:
        raise ValueError(f"need at least 3 distinct-valued scores to fit a distribution, got {x.tolist()[:10]}")
    if family == "norm":
        return stats.norm(*stats.norm.fit(x))
    eps = 1e-3
    a, b, _, _ = stats.beta.fit(np.clip(x, eps, 1 - eps), floc=0, fscale=1)
    return stats.beta(a, b)


def win_probability(mine: Any, theirs: Any, tau: float) -> float:  # frozen scipy.stats laws
    """p = Pr(S_mine > max(S_theirs, tau)) for independent continuous scores (Appendix C, one-shot comparison)."""
    from scipy import integrate

    below_bar = theirs.cdf(tau) * (1.0 - mine.cdf(tau))
    lo, hi = tau, theirs.ppf(1.0)
    above, _ = integrate.quad(lambda t: (1.0 - mine.cdf(t)) * theirs.pdf(t), lo, hi, limit=200)
    return float(below_bar + above)


class WinProbabilities(BaseModel):
    """p(e_i, e_-i) for the four effort profiles, their increments and the bar-clearing probabilities alpha_uv."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    p_hh: float
    p_hl: float  # I exert H, the opponent L
    p_lh: float
    p_ll: float
    alpha_hh: float
    alpha_hl: float
    alpha_ll: float

    @property
    def dp_low(self) -> float:
        """Delta p(L): gain from switching to H against a low-effort opponent."""
        return self.p_hl - self.p_ll

    @property
    def dp_high(self) -> float:
        return self.p_hh - self.p_lh

    @property
    def dp_min(self) -> float:
        return min(self.dp_low, self.dp_high)


def win_probabilities(high: Any, low: Any, tau: float) -> WinProbabilities:
    """All win probabilities from fitted score laws F_H^S, F_L^S and the bar tau."""
    return WinProbabilities(
        p_hh=win_probability(high, high, tau),
        p_hl=win_probability(high, low, tau),
        p_lh=win_probability(low, high, tau),
        p_ll=win_probability(low, low, tau),
        alpha_hh=1.0 - high.cdf(tau) ** 2,
        alpha_hl=1.0 - high.cdf(tau) * low.cdf(tau),
        alpha_ll=1.0 - low.cdf(tau) ** 2,
    )


def empirical_win_probability(mine: np.ndarray, theirs: np.ndarray, tau: float) -> float:
    """The same probability over all pilot pairs, with ties splitting the bonus as the payout rule does."""
    m = np.asarray(mine, dtype=float)[:, None]
    t = np.asarray(theirs, dtype=float)[None, :]
    strict = m > np.maximum(t, tau)
    tie = (m == t) & (m >= tau)
    return float(np.mean(strict + 0.5 * tie))


def _require_positive(dp_min: float) -> None:
    if not dp_min > 0:
        raise ValueError(
            f"Delta p_min = {dp_min:.4g} <= 0: no bonus elicits effort (score noise too large or tau miscalibrated)"
        )


def bonus_dominant(delta_c: float, dp_min: float) -> float:
    """Corollary 1.1: any B strictly above Delta C / Delta p_min makes high effort strictly dominant."""
    _require_positive(dp_min)
    return delta_c / dp_min


def bonus_for_effort_rate(cost: Distribution, target_rate: float, dp_min: float) -> float:
    """Corollary 1.2: B >= [G^-1(pi*)]_+ / Delta p_min guarantees pi_tour >= pi* for pi* in [0, 1)."""
    _require_positive(dp_min)
    if not 0 <= target_rate < 1:
        raise ValueError(f"target high-effort rate must lie in [0, 1), got {target_rate}")
    return max(cost.ppf(target_rate), 0.0) / dp_min


def bonus_for_mean_quality(cost: Distribution, eta: float, delta_q: float, dp_min: float) -> float:
    """Corollary 1.3: a mean-quality gain eta in [0, (1 - pi_flat) Delta_Q] needs B >= [G^-1(pi_flat + eta/Delta_Q)]_+ / Delta p_min."""
    _require_positive(dp_min)
    if not delta_q > 0:
        raise ValueError(f"Delta_Q = E[Q^H] - E[Q^L] must be positive, got {delta_q}")
    pi_flat = cost.cdf(0.0)
    if not 0 <= eta <= (1 - pi_flat) * delta_q:
        raise ValueError(
            f"mean-quality gain eta={eta} is infeasible: it must lie in [0, {(1 - pi_flat) * delta_q:.4g}]"
        )
    return max(cost.ppf(min(pi_flat + eta / delta_q, 1.0)), 0.0) / dp_min


def bonus_with_whitelist(delta_c: float, lambda_min: float, dp_min: float) -> float:
    """Whitelist extension: B > (Delta C - Lambda_min)_+ / Delta p_min suffices when continuation value is at stake."""
    _require_positive(dp_min)
    return max(delta_c - lambda_min, 0.0) / dp_min


def expected_bonus(bonus: float, effort_rate: float, probs: WinProbabilities) -> float:
    """C_bonus(B, pi) = B [pi^2 alpha_HH + 2 pi (1 - pi) alpha_HL + (1 - pi)^2 alpha_LL] <= B, per task."""
    pi = effort_rate
    return bonus * (pi**2 * probs.alpha_hh + 2 * pi * (1 - pi) * probs.alpha_hl + (1 - pi) ** 2 * probs.alpha_ll)


class BonusCalibration(BaseModel):
    """The calibration of one discipline, as the platform stores and shows it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    discipline: str
    n_high: int
    n_low: int
    tau: float
    probs: WinProbabilities
    empirical_dp_min: float
    dp_min: float
    delta_c: float
    pi_flat: float
    bonus_dominant: float  # pay strictly more than this
    target_rate: float
    bonus_target: float
    expected_bonus_at_target: float


PILOT_COLUMNS = {"discipline": pl.String, "effort": pl.String, "validated_score": pl.Float64, "cost": pl.Float64}


def calibrate(pilot: pl.DataFrame, tau: float, target_rate: float, family: Family = "norm") -> list[BonusCalibration]:
    """Per discipline: fit F_H^S, F_L^S, integrate the win probabilities, apply Corollary 1 and C_bonus.

    ``pilot`` has columns discipline, effort ('H' or 'L'), validated_score and cost (kappa of that reviewer).
    Delta C is the largest observed kappa (it must bound the cost of high effort); G is the empirical law of kappa.
    """
    missing = {c for c in PILOT_COLUMNS if c not in pilot.columns}
    if missing:
        raise ValueError(f"pilot data lacks columns {sorted(missing)}")
    bad = pilot.filter(~pl.col("effort").is_in(["H", "L"]))
    if bad.height:
        raise ValueError(f"pilot row {bad.row(0, named=True)}: effort must be 'H' or 'L'")
    out = []
    for (discipline,), part in sorted(pilot.group_by("discipline"), key=lambda g: g[0]):
        high = part.filter(pl.col("effort") == "H")["validated_score"].to_numpy()
        low = part.filter(pl.col("effort") == "L")["validated_score"].to_numpy()
        probs = win_probabilities(fit_scores(high, family), fit_scores(low, family), tau)
        emp = min(
            empirical_win_probability(high, low, tau) - empirical_win_probability(low, low, tau),
            empirical_win_probability(high, high, tau) - empirical_win_probability(low, high, tau),
        )
        costs = EmpiricalDistribution(part["cost"].to_numpy())
        b_target = bonus_for_effort_rate(costs, target_rate, probs.dp_min)
        out.append(
            BonusCalibration(
                discipline=discipline,
                n_high=len(high),
                n_low=len(low),
                tau=tau,
                probs=probs,
                empirical_dp_min=emp,
                dp_min=probs.dp_min,
                delta_c=float(costs.sorted[-1]),
                pi_flat=costs.cdf(0.0),
                bonus_dominant=bonus_dominant(float(costs.sorted[-1]), probs.dp_min),
                target_rate=target_rate,
                bonus_target=b_target,
                expected_bonus_at_target=expected_bonus(b_target, target_rate, probs),
            )
        )
    return out


def pilot_from_logs(logs: pl.DataFrame, hourly_rate: float) -> pl.DataFrame:
    """Pilot data from logged, validated reviews when no instructed pilot was run (a proxy, stated as such).

    ``logs`` has discipline, reviewer_id, seconds_on_page, validated_score. A review counts as high effort when its
    time on page reaches the discipline's median; a reviewer's kappa is the discipline's extra time of high over low
    effort, priced at ``hourly_rate`` and scaled by how slow that reviewer is relative to the discipline.
    """
    median = pl.col("seconds_on_page").median().over("discipline")
    labelled = logs.with_columns(
        pl.when(pl.col("seconds_on_page") >= median).then(pl.lit("H")).otherwise(pl.lit("L")).alias("effort")
    )
    extra = labelled.group_by("discipline").agg(
        (
            pl.col("seconds_on_page").filter(pl.col("effort") == "H").mean()
            - pl.col("seconds_on_page").filter(pl.col("effort") == "L").mean()
        )
        .clip(lower_bound=0)
        .alias("extra_seconds"),
        pl.col("seconds_on_page").mean().alias("discipline_seconds"),
    )
    speed = labelled.group_by("discipline", "reviewer_id").agg(
        pl.col("seconds_on_page").mean().alias("reviewer_seconds")
    )
    return (
        labelled.join(extra, on="discipline")
        .join(speed, on=["discipline", "reviewer_id"])
        .with_columns(
            (
                hourly_rate / 3600 * pl.col("extra_seconds") * pl.col("reviewer_seconds") / pl.col("discipline_seconds")
            ).alias("cost")
        )
        .select(list(PILOT_COLUMNS))
    )

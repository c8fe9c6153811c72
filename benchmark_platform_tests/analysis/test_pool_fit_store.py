"""The pool's IRT fit is stored by what it is a function of (sql/0430): a second build with the same pool answers
reads it, bit for bit the fit a fresh fit gives, and says so; other answers are another fit."""

from __future__ import annotations

import numpy as np

from benchmark_platform.analysis.irt import fit_digest, fit_irt
from benchmark_platform.analysis.run import stored_fit


def _pool(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ability, easiness = rng.normal(size=(12, 1)), rng.normal(size=(1, 300))
    correct = (rng.random((12, 300)) < 1 / (1 + np.exp(-(ability + easiness)))).astype(float)
    correct[rng.random(correct.shape) < 0.05] = np.nan  # unanswered
    return correct


def _bits(fit) -> list[bytes]:
    return [fit.discrimination.tobytes(), fit.intercept.tobytes(), fit.abilities.tobytes()]


def test_a_stored_fit_is_read_back_bit_for_bit(db) -> None:
    correct, other = _pool(1), _pool(2)
    lines: list[str] = []
    first = stored_fit(db, lines.append)(correct)
    again = stored_fit(db, lines.append)(correct)
    assert _bits(first) == _bits(again) == _bits(fit_irt(correct))
    digest = fit_digest(correct)[:12]
    assert lines == [
        f"pool IRT fit {digest}: fitted and stored (12 models x 300 items)",
        f"pool IRT fit {digest}: read from the store (12 models x 300 items)",
    ]
    assert db.scalar("SELECT count(*) FROM irt_pool_fits WHERE fit_digest = %s", (fit_digest(correct),)) == 1

    stored_fit(db, lines.append)(other)  # other answers: another digest, fitted
    assert fit_digest(other) != fit_digest(correct) and lines[-1].endswith("fitted and stored (12 models x 300 items)")

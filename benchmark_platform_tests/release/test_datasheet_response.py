"""The datasheet's response-pattern line says which weight each discipline's selection used."""

from __future__ import annotations

from benchmark_platform.release.datasheet import response_note


def _discipline(weight: float) -> dict[str, object]:
    return {"response_term": "applied", "response_weight": weight, "response_models": 29, "holdout_validation": "none"}


def test_one_weight_is_named_and_boosted_small_disciplines_show_the_range() -> None:
    assert "weight 2, 29 models" in response_note([_discipline(2.0), _discipline(2.0)])
    assert "weight 2 to 72 by the discipline's K_d" in response_note([_discipline(72.0), _discipline(2.0)])
    assert "coverage-only" in response_note([{"response_term": "absent"}])

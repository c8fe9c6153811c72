"""The datasheet's KINA section: the flagships with their rule, screening counts summed per KINA discipline from the
release's own per-subfield table, and the flagships' accuracy on the bank against the release."""

from __future__ import annotations

import polars as pl

from benchmark_platform.audit.config import KinaScreening
from benchmark_platform.release.kina import kina_notes, screening_section

SCREENING = pl.DataFrame(
    {
        "subfield": ["finance", "western_economics", "logic"],
        "kina_discipline": ["Economics", "Economics", "Philosophy"],
        "audited": [74, 759, 171],
        "dropped_k1": [1, 3, 0],
        "dropped_k2": [0, 0, 2],
        "dropped_k3": [48, 600, 112],
        "screened_in": [25, 156, 57],
        "dropped_by_other_agents": [0, 1, 0],
        "released": [6, 24, 5],
    }
)
EFFECT = pl.DataFrame(
    {
        "model": ["big", "small"],
        "flagship": [True, False],
        "bank_items": [1004, 1004],
        "bank_accuracy": [70.0, 30.0],
        "release_items": [35, 35],
        "release_accuracy": [20.0, 25.0],
        "delta_points": [-50.0, -5.0],
    }
)


def test_section_sums_per_discipline_and_shows_the_flagships_effect() -> None:
    text = screening_section({"kina/screening": SCREENING, "kina/screening_effect": EFFECT})
    assert "| Economics | 833 | 4 | 0 | 648 | 181 | 1 | 30 |" in text
    assert "| all | 1004 | 4 | 2 | 760 | 238 | 1 | 35 |" in text
    assert "| big | 1004 | 70.0 | 35 | 20.0 | -50.0 |" in text and "| small |" not in text


def test_no_section_without_screening() -> None:
    assert screening_section({}) == ""


def test_the_flagships_are_named_with_their_rule() -> None:
    kina = KinaScreening(flagships=["a", "b"], min_flagships_wrong=1, flagship_rule="the two best.")
    (note,) = kina_notes(kina)
    assert (
        note
        == "**KINA flagships (K3).** a, b. Rule: the two best. K3 drops an item unless at least 1 of the 2 answer it wrongly."
    )

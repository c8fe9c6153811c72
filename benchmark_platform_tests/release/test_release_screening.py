"""The release screen: raw multi-value separators and identifier answers never ship."""

from __future__ import annotations

from benchmark_platform.release.screening import artefacts


def test_raw_separators_and_identifier_answers_are_named():
    assert artefacts("Which AVA lies within Arkansas Mountain|Ozark Mountain?", ("a", "b"), 0) == [
        "raw separator in stem"
    ]
    assert artefacts("In which county?", ("Franklin|Johnson", "Napa", "Lake", "Sonoma"), 1) == [
        "raw separator in option"
    ]
    assert artefacts("Which section of 27 CFR part 9 sets out the Oakville AVA?", ("9.167", "9.1", "x", "y"), 0) == [
        "answer is an identifier: regulation section number"
    ]
    assert artefacts("Which permit?", ("PA-W-21084", "b"), 0) == ["answer is an identifier: permit number"]
    assert artefacts("When was it established?", ("1992-02-24", "b"), 0) == ["answer is an identifier: bare date"]


def test_knowledge_items_pass():
    assert artefacts("What base yield does the rulebook set for Pomerol?", ("49 hl/ha", "55 hl/ha"), 0) == []
    assert artefacts("Which option lists exactly the true statements?\n1. A\n2. B", ("Statements 1 and 2",), 0) == []
    assert artefacts("How many hectolitres?", ("13283.93", "1"), 0) == []

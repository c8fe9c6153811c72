"""What counts as asking the same question twice (generation/model.asked_question), shared by generation's template
walk and the D2 audit: a comparison's options are part of its question, any other stem is the question."""

from __future__ import annotations

from benchmark_platform.generation.model import asked_question


def test_a_comparison_is_its_stem_and_its_options_in_any_order() -> None:
    stem = "Which of these départements declared the most red AOP wine in the 2016 harvest?"
    gironde = asked_question(stem, ("Gironde", "Aude", "Gard", "Var"), "highest")
    assert gironde == asked_question(stem.upper(), ("Var", "Gard", "aude", "Gironde"), "highest")
    assert gironde != asked_question(stem, ("Marne", "Aude", "Gard", "Var"), "highest")
    assert asked_question(stem, ("Marne",), "lowest") != asked_question(stem, ("Gironde",), "lowest")


def test_any_other_stem_is_one_question_whatever_its_options() -> None:
    cloze = "Which département declared 0 hectares of AOP vineyard?"
    assert asked_question(cloze, ("Cantal", "a"), "subject") == asked_question(cloze, ("Lozère", "b"), "subject")
    assert asked_question(cloze, ("Cantal",), None) == asked_question(cloze, ("Lozère",), "value")

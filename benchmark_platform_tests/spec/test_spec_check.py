"""`benchmark-platform spec check`: every fault of a spec on its own line, without loading Dagster."""

import subprocess
import sys

import pytest

from benchmark_platform.cli.main import main
from benchmark_platform.spec import load_spec


@pytest.mark.parametrize(("name", "disciplines", "sources"), [("wine", 6, 11), ("kina", 261, 0)])
def test_a_bundled_spec_checks_ok_with_a_summary(capsys, name, disciplines, sources):
    assert main(["spec", "check", name]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: ") and f"spec {name}, {disciplines} disciplines, {sources} sources, 0 models" in out


def test_the_check_loads_neither_dagster_nor_a_stage():
    code = (
        "import sys\n"
        "from benchmark_platform.cli.main import main\n"
        "assert main(['spec', 'check', 'wine']) == 0\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'dagster', 'faiss', 'polars', 'sklearn', 'spacy'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"


def test_field_errors_are_reported_together_one_line_each(changed_wine, capsys):
    def mutate(raw):
        raw["seed"] = "not a number"
        raw.setdefault("selection", {})["facts_per_disciplin"] = 3
        raw["sources"][0]["tier"] = 7

    path = changed_wine(mutate)
    assert main(["spec", "check", str(path)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3 and all(line.startswith(f"error: {path}: ") for line in lines)
    assert any("seed: Input should be a valid integer" in line for line in lines)
    assert any("selection.facts_per_disciplin: Extra inputs are not permitted" in line for line in lines)
    assert any("sources.0.geojson.tier: Input should be 1, 2 or 3" in line for line in lines)


def test_cross_section_errors_are_reported_together_each_under_its_field_path(changed_wine, capsys):
    def mutate(raw):
        raw["generation"]["templates"][0]["discipline"] = "astronomy"
        raw["facts"].setdefault("prose_sources", []).append("no_such_source")
        raw.setdefault("audit", {})["judges"] = ["judge_a"]
        raw.setdefault("selection", {})["signature_model"] = "signer"
        raw.setdefault("evaluation", {})["slate"] = [{"model": "judge_a"}]

    path = changed_wine(mutate)
    assert main(["spec", "check", str(path)]) == 2
    lines = capsys.readouterr().err.splitlines()
    prose = len(load_spec("wine").facts.prose_sources)
    expected = [
        "generation.templates.0.discipline: unknown discipline 'astronomy'",
        f"facts.prose_sources.{prose}: unknown source 'no_such_source'",
        "selection.signature_model: 'signer' is not one of the spec's models []",
        "audit.judges.0: 'judge_a' is not one of the spec's models []",
        "evaluation.slate.0.model: 'judge_a' is not one of the spec's models []",
    ]
    assert len(lines) == len(expected)
    for line, start in zip(lines, expected, strict=True):
        assert line.startswith(f"error: {path}: {start}")


def test_a_missing_spec_and_bad_yaml_are_one_line_each(tmp_path, capsys):
    assert main(["spec", "check", "no_such_benchmark"]) == 2
    assert "no such spec (bundled specs: " in capsys.readouterr().err
    bad = tmp_path / "spec.yaml"
    bad.write_text("name: [unclosed")
    assert main(["spec", "check", str(bad)]) == 2
    (line,) = capsys.readouterr().err.splitlines()[:1]
    assert line.startswith(f"error: {bad}: not valid YAML")

import pytest

from benchmark_platform.spec import SpecError, load_spec


def test_bundled_specs_load_with_their_partitions():
    wine = load_spec("wine")
    assert wine.discipline_keys == ["regions", "grape_varieties", "viticulture", "winemaking", "producers", "business"]
    assert wine.sources and all(s.licence for s in wine.sources)
    kina = load_spec("kina")
    assert len(kina.discipline_keys) == 261
    assert all("," not in k and "[" not in k for k in kina.discipline_keys)


def test_unknown_field_names_file_and_field(changed_wine):
    path = changed_wine(lambda raw: raw.setdefault("selection", {}).update(facts_per_disciplin=3))
    with pytest.raises(SpecError) as error:
        load_spec(path)
    assert str(path) in str(error.value) and "selection.facts_per_disciplin" in str(error.value)


def test_wrong_type_names_the_field(changed_wine):
    path = changed_wine(lambda raw: raw.update(seed="not a number"))
    with pytest.raises(SpecError, match=r"seed: Input should be a valid integer"):
        load_spec(path)


def test_reference_to_unknown_discipline_is_refused(changed_wine):
    path = changed_wine(lambda raw: raw["generation"]["templates"][0].update(discipline="astronomy"))
    with pytest.raises(SpecError, match="unknown discipline 'astronomy'"):
        load_spec(path)


def test_not_yaml_and_missing_spec(tmp_path):
    bad = tmp_path / "spec.yaml"
    bad.write_text("name: [unclosed")
    with pytest.raises(SpecError, match="not valid YAML"):
        load_spec(bad)
    with pytest.raises(SpecError, match="no such spec"):
        load_spec("no_such_benchmark")

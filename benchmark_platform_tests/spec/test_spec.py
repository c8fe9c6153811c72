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


@pytest.mark.slow  # over 3 s with its setup: the full suite only
def test_the_selections_settings_still_load_from_their_old_place_under_centrality(changed_wine):
    """Issue 37 moved tau_dup and the MIP's settings from selection.centrality to selection: old specs still load."""

    def old_place(raw):
        selection = raw.setdefault("selection", {})
        selection.pop("mip_max_candidates", None)
        selection["centrality"] = {"tau_dup": 0.4, "mip_max_candidates": 7, "mip_time_limit_s": 3.0, "bootstrap": 9}

    spec = load_spec(changed_wine(old_place))
    assert (spec.selection.tau_dup, spec.selection.mip_max_candidates, spec.selection.mip_time_limit_s) == (0.4, 7, 3.0)
    assert spec.selection.centrality.bootstrap == 9
    assert load_spec("wine").selection.mip_max_candidates == 0  # the bundled spec says it in the new place

    def twice(raw):
        raw.setdefault("selection", {})["centrality"] = {"mip_max_candidates": 7}

    with pytest.raises(SpecError, match="mip_max_candidates is given twice"):
        load_spec(changed_wine(twice))

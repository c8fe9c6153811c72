"""Gazetteers and alias classes of the wine spec: canonical ids, French/English and synonym classes."""

from __future__ import annotations

import pytest

from benchmark_platform.facts.config import FactsConfig, GazetteerFile
from benchmark_platform.facts.gazetteer import Gazetteer, GazetteerError


@pytest.fixture(scope="module")
def gazetteer(wine_spec) -> Gazetteer:
    return Gazetteer.from_config(wine_spec.facts, wine_spec.directory)


@pytest.mark.parametrize(
    ("name", "entity_id"),
    [
        ("Burgundy", "region:burgundy"),
        ("Bourgogne", "region:burgundy"),
        ("Shiraz", "grape_variety:syrah"),
        ("syrah", "grape_variety:syrah"),
        ("Spätburgunder", "grape_variety:pinot_noir"),
        ("pinot nero", "grape_variety:pinot_noir"),
        ("Atlas Peak", "ava:atlas_peak"),
        ("Carneros", "ava:los_carneros"),
        ("Saint-Émilion", "appellation:saint_emilion"),  # INAO 'Saint-Emilion grand cru ...' cut to its name
        ("Ajaccio", "appellation:ajaccio"),
        ("Barolo", "appellation:barolo"),
        ("airén", "grape_variety:airen"),  # the Latin-1 grape list, accents folded in the id
    ],
)
def test_names_resolve_to_one_canonical_id(gazetteer, name, entity_id):
    assert gazetteer.lookup(name).entity_id == entity_id


def test_common_words_and_damaged_names_are_not_entities(gazetteer):
    assert gazetteer.lookup("Mission") is None  # a grape, but ignore_names: mostly the English word
    assert not any("?" in name for name in gazetteer.by_name)  # '?' marks letters lost upstream
    assert gazetteer.entity_for("Some New Winery", "producer").entity_id == "producer:some_new_winery"


def test_a_bad_gazetteer_file_is_named_with_its_row(tmp_path):
    (tmp_path / "names.csv").write_text("name,aka\nOakville,\n,Nothing\n", encoding="utf-8")
    config = FactsConfig(gazetteers=[GazetteerFile(path="names.csv", entity_type="ava", name_column="name")])
    with pytest.raises(GazetteerError, match=r"names.csv, row 3: empty 'name'"):
        Gazetteer.from_config(config, tmp_path)
    config = FactsConfig(gazetteers=[GazetteerFile(path="names.csv", entity_type="ava", name_column="label")])
    with pytest.raises(GazetteerError, match=r"names.csv: no column\(s\) \['label'\]"):
        Gazetteer.from_config(config, tmp_path)

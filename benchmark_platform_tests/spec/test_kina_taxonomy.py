"""The bundled KINA taxonomy matches Table 8 of the KINA seed: 12 disciplines, 70 fields, 261 subfields, 899 items."""

from pathlib import Path

import yaml

TAXONOMY = Path(__file__).resolve().parents[2] / "benchmark_platform" / "specs" / "kina" / "taxonomy.yaml"


def test_kina_taxonomy_matches_table_8() -> None:
    disciplines = yaml.safe_load(TAXONOMY.read_text(encoding="utf-8"))
    fields = [field for discipline in disciplines for field in discipline["children"]]
    subfields = [subfield for field in fields for subfield in field["children"]]

    assert len(disciplines) == 12
    assert len(fields) == 70
    assert len(subfields) == 261
    assert sum(subfield["items"] for subfield in subfields) == 899
    assert len({subfield["name"] for subfield in subfields}) == 261
    assert disciplines[0]["children"][0]["children"][0] == {"name": "Animal Nutrition and Feed Science", "items": 8}
    assert subfields[-1] == {"name": "Social and Folklore Studies", "items": 9}

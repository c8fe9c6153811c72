"""Anchor files: the bundled wine examples load; CSV and YAML tables validate with errors naming file and row."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmark_platform.anchors import AnchorFileError, load_anchor_root, load_anchor_set
from benchmark_platform.spec import load_spec

HEADER = """discipline: grapes
is_example: true
k_total: 2
prototype:
  concepts: [grape variety]
"""


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def csv_folder(tmp_path: Path) -> Path:
    return write(
        tmp_path / "grapes",
        {
            "anchors.yaml": HEADER,
            "anchor_items.csv": "id,text,stratum\na1,merlot is a red grape variety.,reds\n",
            "item_labels.csv": "id,text,y_A\np1,syrah is a red grape variety.,1\nn1,The wine must be kept cool.,0\n",
            "pair_labels.csv": "q,u,y_T,y_U\na1,p1,1,0\np1,n1,0,1\n",
            "strata.csv": "name,omega,lower,upper,keys\nreds,0.6,0,2,template:colour\nother,0.4,0,1,sentence;*\n",
        },
    )


def test_bundled_wine_examples_cover_every_discipline_and_say_they_are_examples():
    spec = load_spec("wine")
    sets = load_anchor_root(spec.anchors_dir)
    assert set(sets) == set(spec.discipline_keys)
    for anchors in sets.values():
        assert anchors.is_example and "EXAMPLE" in anchors.note
        assert len(anchors.version) == 64 and anchors.anchor_items and anchors.pair_labels
        assert "*" in anchors.stratum_map()


def test_csv_tables_load_and_any_byte_changes_the_version(tmp_path):
    folder = csv_folder(tmp_path)
    anchors = load_anchor_set(folder)
    assert [s.keys for s in anchors.strata] == [("template:colour",), ("sentence", "*")]
    assert anchors.stratum_map()["template:colour"] == "reds" and anchors.anchor_weights() == {"a1": 1.0}
    (folder / "item_labels.csv").write_text(
        "id,text,y_A\np1,syrah is a red grape.,1\nn1,The wine must be kept cool.,0\n"
    )
    assert load_anchor_set(folder).version != anchors.version


@pytest.mark.parametrize(
    ("name", "text", "row", "needle"),
    [
        ("item_labels.csv", "id,text,y_A\np1,syrah,1\nn1,cool,2\n", 3, "y_A"),
        ("pair_labels.csv", "q,u,y_T,y_U\na1,p1,1,0\na1,zz,0,1\n", 3, "unknown item id 'zz'"),
        ("anchor_items.csv", "id,text,stratum\na1,merlot,blues\n", 2, "unknown stratum 'blues'"),
        ("strata.csv", "name,omega,lower,upper\nreds,0.6,0,1\n", 0, "quotas cannot hold"),
        ("strata.csv", "name,omega,lower,upper\nreds,-1,0,2\n", 2, "omega"),
    ],
)
def test_bad_rows_are_named_by_file_and_row(tmp_path, name, text, row, needle):
    folder = csv_folder(tmp_path)
    (folder / name).write_text(text, encoding="utf-8")
    with pytest.raises(AnchorFileError) as err:
        load_anchor_set(folder)
    assert err.value.path.name == name and err.value.row == row and needle in str(err.value)


def test_inline_yaml_errors_carry_the_line_and_tables_cannot_be_given_twice(tmp_path):
    folder = csv_folder(tmp_path)
    (folder / "pair_labels.csv").unlink()
    (folder / "anchors.yaml").write_text(
        HEADER + "pair_labels:\n  - {q: a1, u: p1, y_T: 1, y_U: 0}\n  - {q: p1, u: p1, y_T: 0, y_U: 1}\n"
    )
    with pytest.raises(AnchorFileError) as err:
        load_anchor_set(folder)
    assert (err.value.path.name, err.value.row) == ("anchors.yaml", 8) and "two different items" in str(err.value)
    (folder / "anchors.yaml").write_text(HEADER + "strata: []\n")
    with pytest.raises(AnchorFileError, match="given twice"):
        load_anchor_set(folder)


def test_folder_name_must_match_the_discipline(tmp_path):
    folder = csv_folder(tmp_path)
    shutil.move(folder, tmp_path / "reds")
    with pytest.raises(AnchorFileError, match="differs from its folder name"):
        load_anchor_set(tmp_path / "reds")

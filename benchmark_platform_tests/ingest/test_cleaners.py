"""Cleaners against the real dirt in ../shared/data."""

from __future__ import annotations

import csv
import json

import pytest

from benchmark_platform.ingest.cleaners import (
    ava_states,
    clean_infobox_value,
    dedupe_link_text,
    french_decimal,
    french_integer,
    strip_html_boilerplate,
    strip_mediawiki_chrome,
)
from benchmark_platform.ingest.encoding import decode, encoding_problems


def test_wikibooks_page_loses_its_mediawiki_chrome(shared_data):
    page = (shared_data / "wikimedia_pages" / "wikibooks_Wine_Printable_version.md").read_text()
    text = strip_mediawiki_chrome(page)
    assert text.startswith("Grape Vines\nVine History and Movement\nHumans have cultivated Wine since ancient times.")
    assert "In Greek mythology Dionysus was the god of wine." in text
    assert "Riesling with a spicy dish. The sweetness and acidity of the wine matches perfectly" in text
    for chrome in (
        "Jump to navigation",
        "edit source",
        "Retrieved from",
        "Navigation menu",
        "Personal tools",
        "This page was last edited",
        "Create account",
        "You can help to",
        "undeveloped draft",
        "Printable version",
        "upload.wikimedia.org",
        "](",
        "Contents",
        "Permission is granted",
    ):
        assert chrome not in text, chrome
    assert len(text) < len(page) / 2


def test_infobox_link_text_duplication_is_removed_on_every_real_row(shared_data):
    path = shared_data / "wikipedia_fr_infobox_openwines" / "output" / "appellations.csv"
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert len(rows) == 56
    cleaned = [{k: clean_infobox_value(v) for k, v in row.items() if not k.startswith("wikipedia")} for row in rows]
    for row in cleaned:
        for value in row.values():
            words = [w.casefold() for w in value.split()]
            assert not any(a == b and len(a) > 2 for a, b in zip(words, words[1:], strict=False)), value
    first = cleaned[0]
    assert first["climat"] == "Climat tempéré Climat océanique"
    assert first["région-mère"] == "Vignoble de la vallée de la Loire"
    assert first["localisation"].endswith("Deux-Sèvres et Vienne")
    assert first["volproduction"] == "93355 hl en 2009"  # the flattened <ref> citation is dropped
    assert first["densité"] == "minimum de 4000 pieds par ha"
    assert [r["superficieplantée"] for r in cleaned if "8800" in r["superficieplantée"]] == ["8800 hectares"]


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Climat tempéré tempéré", "Climat tempéré"),
        ("Vienne (département) Vienne", "Vienne"),
        ("Pinot noir (cépage) pinot noir N", "pinot noir N"),
        ("Vin rouge rouges", "Vin rouges"),
        ("Muscadet Sèvre et Maine", "Muscadet Sèvre et Maine"),
    ],
)
def test_dedupe_link_text(raw, clean):
    assert dedupe_link_text(raw) == clean


def test_french_thousands_separators_in_franceagrimer_areas(shared_data):
    rows = list(csv.DictReader((shared_data / "fr_official_stats" / "area_cepages_france_yearly.csv").open()))
    by_key = {(r["type_cepage"], r["year"]): r for r in rows}
    assert french_integer(by_key[("ALICANTE H.BOUS.N", "2006")]["surface_ha"]) == 6262
    assert french_integer(by_key[("AUBUN N", "2006")]["surface_ha"]) == 784
    assert french_decimal("12,50") == 12.5 and french_decimal("0.7") == 0.7 and french_integer("6 000") == 6000
    malformed = [r for r in rows if not r["surface_ha"].replace(".", "").isdigit()]
    assert len(malformed) == 25 and {r["year"] for r in malformed} == {"2014"}
    for row in malformed:
        with pytest.raises(ValueError, match="not an integer"):
            french_integer(row["surface_ha"])


def test_ttb_report_states_agree_with_the_ava_geojson(shared_data):
    ava = shared_data / "ttb_ava_ucdavis"
    geojson_states = {}
    for path in (ava / "avas").glob("*.geojson"):
        for feature in json.loads(path.read_text())["features"]:
            geojson_states.setdefault(feature["properties"]["name"], feature["properties"]["state"])
    rows = list(csv.DictReader((ava / "reports" / "us_by_ava.csv").open()))
    assert any(r["name"].startswith(" ") for r in rows) and any(r["state"] == "AK" for r in rows)
    compared = 0
    for row in rows:
        if row["name"].strip() in geojson_states:  # by name: the report's CFR sections disagree in places
            assert ava_states(row["state"]) == geojson_states[row["name"].strip()], row
            compared += 1
    assert compared >= 60
    assert ava_states("AK") == "AR" and ava_states("VI|WV") == "VA|WV" and ava_states(" NC|TN|VI") == "NC|TN|VA"
    with pytest.raises(ValueError, match="not a US state"):
        ava_states("XX")


def test_cp1252_files_are_detected_and_decoded_cleanly(shared_data):
    raw = (shared_data / "oenobench" / "gold_sheets_scored" / "gold_sheet_scored.csv").read_bytes()
    decoded = decode(raw, "text/csv; charset=utf-8")
    assert decoded.encoding == "cp1252" and decoded.mismatch
    assert encoding_problems(decoded.text) == []
    mojibake = raw.decode("cp1252").encode("utf-8").decode("latin-1")
    assert encoding_problems(mojibake)


def test_html_boilerplate_is_stripped():
    html = """<html><head><title>Atlas Peak AVA</title><script>track()</script></head><body>
      <header><nav><a href="/">Home</a> | <a href="/about">About</a></nav></header>
      <div id="mw-navigation">Navigation menu</div>
      <main><h1>Atlas Peak</h1><p>Atlas Peak is an American Viticultural Area in Napa County.</p>
      <span class="mw-editsection">[edit]</span><ul><li>Established 1992</li></ul>
      <table><tr><th>CFR</th><td>9.140</td></tr></table></main>
      <footer>Cookie settings. Privacy policy.</footer></body></html>"""
    title, text = strip_html_boilerplate(html)
    assert title == "Atlas Peak AVA"
    assert (
        text == "Atlas Peak\nAtlas Peak is an American Viticultural Area in Napa County.\nEstablished 1992\nCFR | 9.140"
    )

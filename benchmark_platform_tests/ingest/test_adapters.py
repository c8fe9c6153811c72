"""Every adapter against a loopback server serving real bodies from ../shared/data, with injected faults."""

from __future__ import annotations

import csv
import json
import warnings
from urllib.parse import parse_qs, urlsplit

import pytest
from pydantic import TypeAdapter, ValidationError

from benchmark_platform.ingest import ingest_source, replay_source
from benchmark_platform.ingest.config import SourceConfig
from benchmark_platform.ingest.fetch import FetchError, LiveFetcher
from benchmark_platform.ingest.records import Document, Rejection, record_fields
from benchmark_platform.ingest.snapshot import SnapshotStore
from benchmark_platform_tests.ingest.loopback import Loopback, Reply

COMMON = {
    "title": "t",
    "publisher": "p",
    "homepage": "https://example.org/",
    "tier": 1,
    "licence": "CC0-1.0",
    "attribution": "a",
}


def source(**config: object) -> SourceConfig:
    return TypeAdapter(SourceConfig).validate_python({"id": "test_source", **COMMON, **config})


def run(src: SourceConfig, store: SnapshotStore, policy, sleeps: list[float]) -> tuple[list[Document], list[Rejection]]:
    with LiveFetcher(store, policy, sleep=sleeps.append) as fetcher:
        result = ingest_source(src, fetcher)
    replayed = replay_source(src, store)  # the same adapter over the recorded responses gives the same documents
    assert replayed.documents == result.documents and replayed.rejections == result.rejections
    return result.documents, result.rejections


def test_geojson_ava_files_with_a_truncated_response_and_a_malformed_one(
    loopback: Loopback, tmp_path, shared_data, fast_policy, sleeps
):
    avas = shared_data / "ttb_ava_ucdavis" / "avas"
    atlas, clarksburg = (avas / "atlas_peak.geojson").read_bytes(), (avas / "clarksburg.geojson").read_bytes()
    loopback.route("/avas/atlas_peak.geojson", Reply(200, atlas, truncate_to=500), Reply(200, atlas))
    loopback.route("/avas/clarksburg.geojson", Reply(200, clarksburg, {"Content-Type": "application/geo+json"}))
    loopback.route("/avas/broken.geojson", Reply(200, atlas[:-40]))  # complete response, malformed JSON
    src = source(
        adapter="geojson",
        current_property="valid_end",
        url_template=loopback.url("/avas/{key}.geojson"),
        keys=["atlas_peak", "clarksburg", "broken"],
    )
    documents, rejections = run(src, SnapshotStore(tmp_path), fast_policy, sleeps)
    atlas_doc, clarksburg_doc = documents
    assert atlas_doc.raw == atlas and atlas_doc.title == "Atlas Peak" and atlas_doc.media_type == "application/geo+json"
    fields = record_fields(atlas_doc.text)
    assert fields["cfr_index"][0] == "9.140" and fields["state"][0] == "CA" and fields["county"][0] == "Napa"
    value, start, end = fields["within"]
    assert atlas_doc.text[start:end] == value == "Napa Valley|North Coast"
    assert clarksburg_doc.metadata["fields"]["valid_start"] == "2022-04-08"  # the current boundary, not the 1984 one
    assert "Earlier version\n" in clarksburg_doc.text and "valid_end: 2022-04-08" in clarksburg_doc.text
    assert [r.locator for r in rejections] == [loopback.url("/avas/broken.geojson")]
    assert "not valid JSON" in rejections[0].reason


def test_csv_rows_keep_their_exact_bytes_and_clean_ttb_state_codes(
    loopback: Loopback, tmp_path, shared_data, fast_policy, sleeps
):
    body = (shared_data / "ttb_ava_ucdavis" / "reports" / "us_by_ava.csv").read_bytes()
    url = loopback.route(
        "/reports/us_by_ava.csv", Reply(500, b"busy"), Reply(200, body, {"Content-Type": "text/plain"})
    )
    src = source(
        adapter="csv", urls=[url], cleaners={"state": "ava_states"}, required=["cfr", "name"], title_template="{name}"
    )
    documents, rejections = run(src, SnapshotStore(tmp_path), fast_policy, sleeps)
    assert len(documents) == 239 and rejections == []
    by_title = {d.title: d for d in documents}
    arkansas = by_title["Arkansas Mountain"]  # served as " Arkansas Mountain" with state AK
    assert arkansas.metadata["fields"]["state"] == "AR" and arkansas.url == f"{url}#row=5"
    assert arkansas.raw == body.splitlines()[4] and arkansas.raw.startswith(b"9.112,AK, Arkansas Mountain")
    assert arkansas.trace.locator == "row=5" and body[arkansas.trace.start : arkansas.trace.end] == arkansas.raw
    assert by_title["Shenandoah Valley"].metadata["fields"]["state"] == "VA|WV"
    quoted = by_title["Red Hill Douglas County, Oregon"]  # a quoted field with a comma
    assert quoted.raw.startswith(b'9.190,OR,"Red Hill Douglas County, Oregon"')


def test_csv_french_numbers_and_malformed_rows_become_rejections(
    loopback: Loopback, tmp_path, shared_data, fast_policy, sleeps
):
    body = (shared_data / "fr_official_stats" / "area_cepages_france_yearly.csv").read_bytes()
    url = loopback.route("/areas.csv", Reply(200, body, {"Content-Type": "text/csv"}))
    src = source(
        adapter="csv",
        urls=[url],
        required=["surface_ha"],
        title_template="{type_cepage} {year}",
        cleaners={
            "surface_ha": "french_integer",
            "wine_surface_proportion": "french_decimal",
            "year": "french_integer",
        },
    )
    documents, rejections = run(src, SnapshotStore(tmp_path), fast_policy, sleeps)
    assert len(documents) == 633 and len(rejections) == 25
    alicante = next(d for d in documents if d.title == "ALICANTE H.BOUS.N 2006")
    assert alicante.metadata["fields"]["surface_ha"] == 6262 and "surface_ha: 6262" in alicante.text
    assert alicante.raw == b"ALICANTE H.BOUS.N,6.262,0.7,2006"
    assert all("#row=" in r.locator and "surface_ha" in r.reason and r.excerpt.endswith(",2014") for r in rejections)


def test_csv_in_cp1252_served_as_utf8(loopback: Loopback, tmp_path, shared_data, fast_policy, sleeps):
    body = (shared_data / "oenobench" / "gold_sheets_scored" / "gold_sheet_scored.csv").read_bytes()
    url = loopback.route("/gold.csv", Reply(200, body, {"Content-Type": "text/csv; charset=utf-8"}))
    documents, rejections = run(source(adapter="csv", urls=[url]), SnapshotStore(tmp_path), fast_policy, sleeps)
    expected = list(csv.DictReader(body.decode("cp1252").splitlines(keepends=True)))
    assert len(documents) + len(rejections) >= len(expected) - 1 and len(documents) >= 55
    assert {d.metadata["encoding"] for d in documents} == {"cp1252"}
    assert all("\ufffd" not in d.text for d in documents)
    assert all(d.raw.decode("cp1252") in body.decode("cp1252") for d in documents)


def test_xls_customs_sheet_matches_the_independent_csv_export(
    loopback: Loopback, tmp_path, shared_data, fast_policy, sleeps
):
    stats = shared_data / "fr_official_stats"
    body = (stats / "douane_2016-stats-recolte.xls").read_bytes()
    export = list(
        csv.DictReader((stats / "douane_2016_recolte_by_departement_student_export.csv").open(), delimiter=";")
    )
    good = loopback.route("/recolte.xls", Reply(429, b"", {"Retry-After": "1"}), Reply(200, body))
    cut = loopback.route("/cut.xls", Reply(200, body[:20000]))  # a complete response of a truncated workbook
    columns = ["departement", *list(export[0])[1:]]
    src = source(adapter="xls", urls=[good, cut], sheet="JO REC 16", columns=columns, row_pattern=r"^(\d{2}|2A|2B) ")
    documents, rejections = run(src, SnapshotStore(tmp_path), fast_policy, sleeps)
    [document] = documents
    rows = {row["departement"][:2]: row for row in document.metadata["rows"]}
    assert len(rows) == len(export) == 77
    for expected in export:
        row = rows[expected["numero_departement"]]
        for column in ("nb_declaration", "s_tot", "q_aop_blanc", "q_total"):
            assert float(row[column]) == pytest.approx(float(expected[column]), abs=0.01), (expected, column)
    assert "PRODUCTION 2016 DES VINS PAR DEPARTEMENT" in document.text and "departement: 89 YONNE" in document.text
    assert [r.locator for r in rejections] == [cut] and "not a readable .xls" in rejections[0].reason
    assert sleeps[0] == 1.0


def test_page_adapter_strips_wikibooks_chrome_despite_a_wrong_charset(
    loopback: Loopback, tmp_path, shared_data, fast_policy, sleeps
):
    body = (shared_data / "wikimedia_pages" / "wikibooks_Wine_Printable_version.md").read_bytes()
    url = loopback.route("/Wine.md", Reply(200, body, {"Content-Type": "text/markdown; charset=ISO-8859-1"}))
    permalink = "https://en.wikibooks.org/w/index.php?title=Wine/Printable_version&oldid=4027698"
    src = source(adapter="page", urls=[url], canonical_url=permalink)
    [document], rejections = run(src, SnapshotStore(tmp_path), fast_policy, sleeps)
    assert rejections == [] and document.url == permalink and document.trace.response_url == url
    assert document.title == "Wine/Printable version"
    assert document.metadata["encoding"] == "utf-8" and "10°-14° Celsius" in document.text
    assert "Retrieved from" not in document.text


def test_page_adapter_rejects_a_chrome_only_html_page(loopback: Loopback, tmp_path, fast_policy, sleeps):
    html = b"<html><head><title>Menu</title></head><body><nav>Home | About | Contact</nav><footer>(c)</footer></body></html>"
    url = loopback.route("/empty.html", Reply(200, html, {"Content-Type": "text/html; charset=utf-8"}))
    documents, [rejection] = run(source(adapter="page", urls=[url]), SnapshotStore(tmp_path), fast_policy, sleeps)
    assert documents == [] and "after stripping boilerplate" in rejection.reason


def test_legal_text_inao_cahier_des_charges(loopback: Loopback, tmp_path, shared_data, fast_policy, sleeps):
    body = (
        shared_data / "inao_fr_appellations" / "cahiers_des_charges" / "aoc_chateaumeillant_decret-2010-1442_annexe.md"
    ).read_bytes()
    url = loopback.route("/annexe.md", Reply(200, body, delay_s=1.5), Reply(200, body))  # first attempt times out
    [document], _ = run(source(adapter="legal_text", urls=[url]), SnapshotStore(tmp_path), fast_policy, sleeps)
    assert document.title == "Cahier des charges de l'AOC Châteaumeillant"
    assert "densité minimale à la plantation de 6 000 pieds par hectare" in document.text
    assert "Gamay N | ― soit en taille Guyot simple" in document.text and "<td" not in document.text
    headings = [h["heading"] for h in document.metadata["outline"]]
    assert "V. ― Encépagement" in headings and "1° Aire géographique :" in headings
    start = next(h["start"] for h in document.metadata["outline"] if h["heading"] == "V. ― Encépagement")
    assert document.text[start:].startswith("V. ― Encépagement")


def _wikitext(row: dict[str, str]) -> str:
    """Infobox wikitext carrying the real field values of an OpenWines extract row (the values are real; the
    MediaWiki API JSON around them follows the documented action=query format, formatversion=2)."""
    names = [k for k in row if k and not k.startswith("wikipedia") and row[k]]
    return (
        "{{Infobox Région viticole\n"
        + "".join(f"| {k} = {row[k]}\n" for k in names)
        + "}}\n"
        + f"'''{row['nom']}''' est une [[appellation d'origine contrôlée|AOC]] du [[vignoble de la vallée de la Loire]]."
        "<ref>''Guide Hachette''</ref>"
    )


def test_mediawiki_api_exact_call_infobox_and_faults(loopback: Loopback, tmp_path, shared_data, fast_policy, sleeps):
    rows = list(csv.DictReader((shared_data / "wikipedia_fr_infobox_openwines" / "output" / "appellations.csv").open()))
    row = rows[0]
    response = {
        "batchcomplete": True,
        "query": {
            "pages": [
                {
                    "pageid": 1,
                    "ns": 0,
                    "title": row["nom"],
                    "revisions": [
                        {
                            "revid": 135000001,
                            "parentid": 1,
                            "timestamp": "2017-04-01T10:00:00Z",
                            "slots": {
                                "main": {
                                    "contentmodel": "wikitext",
                                    "contentformat": "text/x-wiki",
                                    "content": _wikitext(row),
                                }
                            },
                        }
                    ],
                }
            ]
        },
    }
    missing = {"query": {"pages": [{"ns": 0, "title": "Nulle part", "missing": True}]}}
    loopback.route(
        "/w/api.php",
        Reply(429, b"", {"Retry-After": "2"}),
        Reply(200, json.dumps(response).encode(), {"Content-Type": "application/json; charset=utf-8"}),
        Reply(200, json.dumps(missing).encode(), {"Content-Type": "application/json"}),
    )
    src = source(adapter="mediawiki", api=loopback.url("/w/api.php"), titles=[row["nom"], "Nulle part"])
    [document], [rejection] = run(src, SnapshotStore(tmp_path), fast_policy, sleeps)
    query = parse_qs(urlsplit(document.trace.response_url).query)
    assert {k: v[0] for k, v in query.items()} == {
        "action": "query",
        "prop": "revisions",
        "rvprop": "content|ids|timestamp",
        "rvslots": "main",
        "rvsection": "0",
        "titles": "Crémant de Loire",
        "redirects": "1",
        "format": "json",
        "formatversion": "2",
    }
    assert document.url == f"{loopback.base}/w/index.php?title=Cr%C3%A9mant_de_Loire&oldid=135000001"
    assert document.metadata["fields"]["année"] == "1975" and document.metadata["infobox"] == "Infobox Région viticole"
    assert document.content_date.isoformat() == "2017-04-01"
    assert "Crémant de Loire est une AOC du vignoble de la vallée de la Loire." in document.text
    assert "Guide Hachette" not in document.text.split("\n\n")[-1]  # the <ref> is dropped from the prose
    assert "does not exist" in rejection.reason and sleeps == [2.0]


def test_sparql_through_sparqlwrapper_with_faults(loopback: Loopback, tmp_path, shared_data, fast_policy, sleeps):
    features = [
        json.loads(p.read_text())["features"][0]["properties"]
        for p in sorted((shared_data / "ttb_ava_ucdavis" / "avas").glob("a*.geojson"))
    ]
    results = {
        "head": {"vars": ["name", "state"]},
        "results": {
            "bindings": [
                {"name": {"type": "literal", "value": f["name"]}, "state": {"type": "literal", "value": f["state"]}}
                for f in features
            ]
        },
    }
    loopback.route(
        "/sparql",
        Reply(502, b"bad gateway"),
        Reply(200, json.dumps(results).encode(), {"Content-Type": "application/sparql-results+json"}),
    )
    query = "SELECT ?name ?state WHERE { ?ava wdt:P31 wd:Q1153284 ; wdt:P17 wd:Q30 ; rdfs:label ?name . }"
    src = source(adapter="sparql", endpoint=loopback.url("/sparql"), query=query)
    [document], rejections = run(src, SnapshotStore(tmp_path), fast_policy, sleeps)
    sent = parse_qs(urlsplit(document.trace.response_url).query)
    assert sent["query"] == [query] and sent["format"] == ["json"]
    assert (
        "sparql-results+json" in loopback.requests[next(iter(loopback.requests.keys() - {"/robots.txt"}))][0]["accept"]
    )
    assert len(document.metadata["rows"]) == len(features) and "name: Atlas Peak; state: CA" in document.text
    with pytest.raises(ValidationError, match="P17"):
        source(adapter="sparql", endpoint=loopback.url("/sparql"), query="SELECT ?x WHERE { ?x wdt:P131* wd:Q1125 . }")


def test_a_failed_fetch_fails_the_source_and_records_no_document(
    loopback: Loopback, tmp_path, shared_data, fast_policy, sleeps
):
    ok = loopback.route(
        "/a.geojson", Reply(200, (shared_data / "ttb_ava_ucdavis" / "avas" / "altus.geojson").read_bytes())
    )
    down = loopback.route("/b.geojson", Reply(503, b"down"))
    src = source(adapter="geojson", urls=[ok, down])
    store = SnapshotStore(tmp_path)
    with LiveFetcher(store, fast_policy, sleep=sleeps.append) as fetcher, pytest.raises(FetchError, match="503"):
        ingest_source(src, fetcher)
    with pytest.raises(FetchError, match="503"):  # replay reproduces the failure rather than a partial source
        replay_source(src, store)


@pytest.mark.parametrize(
    "query",
    [
        "SELECT ?x WHERE { ?x wdt:P17 wd:Q142 . }",
        "PREFIX wd: <http://www.wikidata.org/entity/>\nselect ?x WHERE { ?x ?p wd:Q142 . }",
        "# ASK is only in this comment\nSELECT * WHERE { ?s ?p ?o }",
        "BASE <http://example.org/>\nASK { ?s ?p ?o }",
        "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }",
        "DESCRIBE <http://example.org/x>",
        "nothing a SPARQL parser would recognise",
    ],
)
def test_the_spec_check_of_the_query_form_agrees_with_sparqlwrapper(query: str):
    from SPARQLWrapper import SPARQLWrapper

    from benchmark_platform.ingest.config import sparql_query_form

    wrapper = SPARQLWrapper("https://query.wikidata.org/sparql")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # SPARQLWrapper warns on a query form it does not know
        wrapper.setQuery(query)
    assert sparql_query_form(query) == wrapper.queryType


def test_a_non_select_query_is_refused_when_the_spec_is_validated():
    with pytest.raises(ValidationError, match="only SELECT queries are ingested, not ASK"):
        source(adapter="sparql", query="ASK { ?x wdt:P17 wd:Q142 }")


def test_every_cleaner_a_spec_may_name_is_registered():
    from typing import get_args

    from benchmark_platform.ingest.cleaners import VALUE_CLEANERS
    from benchmark_platform.ingest.config import CleanerName

    assert set(VALUE_CLEANERS) == set(get_args(CleanerName))

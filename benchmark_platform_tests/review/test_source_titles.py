"""Each INAO rulebook is titled by its own appellation (issue 36, point 8): the source links of the review pages named
several rulebooks with one generic title, and one with the Markdown of its heading (`"Cassis"**`)."""

from __future__ import annotations

from benchmark_platform.ingest.adapters.legal_text import appellation, legal_text


def test_every_bundled_rulebook_gets_its_own_clean_title(shared_data):
    files = sorted((shared_data / "inao_fr_appellations" / "cahiers_des_charges").glob("*.md"))
    names = {p.stem: appellation(legal_text(p.read_text(encoding="utf-8"))) for p in files}
    assert len(files) == 41 and None not in names.values()
    assert len({n for n, _ in names.values() if n}) == 41  # 41 rulebooks, 41 titles
    assert not any(set(n) & set('*_#"«»') for n, _ in names.values() if n)
    assert names["aoc_cassis_decret-2009-355"] == ("Cassis", False)  # heading: CONTRÔLÉE "CASSIS"**
    assert names["aoc_ajaccio_decret-2009-1197"] == ("Ajaccio", False)  # heading wrapped before D'ORIGINE
    assert names["aoc_saint-nicolas-de-bourgueil_decret-2009-1244"] == ("Saint-Nicolas-de-Bourgueil", False)
    assert names["aoc_cotes-de-bourg_decret-2009-1137"] == ("Côtes de Bourg, Bourg et Bourgeais", True)


def test_a_text_without_the_heading_has_no_appellation():
    assert appellation("Décret n° 2009-355 du 30 mars 2009 relatif à l'appellation d'origine contrôlée") is None

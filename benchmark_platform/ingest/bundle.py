"""Build the bundled `wine` snapshot store from the real files in ../shared/data.

Those files were captured by others from the authorities (or from faithful republications) at known commits; each
becomes an imported exchange for the exact URL that serves those bytes (raw.githubusercontent.com at the pinned
commit), dated by that commit, with its origin and fidelity noted (capture.kind = "import"). Headers are what the
file suffix implies, since the original response headers were not kept. Only folders whose data README allows
copying are imported (never oenobench/), and their SOURCES.md and licence files are copied beside the store.

    python -m benchmark_platform.ingest.bundle [--data ../shared/data] [--out benchmark_platform/specs/wine/snapshot]
"""

from __future__ import annotations

import argparse
import csv
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from benchmark_platform.ingest.encoding import media_type
from benchmark_platform.ingest.snapshot import Capture, Exchange, SnapshotStore, sha256_hex
from benchmark_platform.paths import PROJECT_ROOT, SPECS_DIR

RAW = "https://raw.githubusercontent.com"


@dataclass(frozen=True)
class Import:
    folder: str  # folder of ../shared/data
    pattern: str  # glob inside it
    url: str  # upstream URL, formatted with {name} (the file's name)
    committed: str  # ISO date of the upstream commit holding these bytes
    note: str
    # a CSV in the folder with one row per file (columns file, commit, path): the URL's {commit} and {path}
    index: str | None = None


IMPORTS = (
    Import(
        "ttb_ava_ucdavis",
        "avas/*.geojson",
        f"{RAW}/UCDavisLibrary/ava/9afb4d9b48b920dec76f4c811275f6c9a2960697/avas/{{name}}",
        "2025-01-21",
        "byte-exact copy of upstream avas/<id>.geojson (all files under 60 KB)",
    ),
    Import(
        "ttb_ava_ucdavis",
        "reports/*.csv",
        f"{RAW}/UCDavisLibrary/ava/9afb4d9b48b920dec76f4c811275f6c9a2960697/reports/{{name}}",
        "2025-01-21",
        "byte-exact copy of upstream reports/<name>.csv",
    ),
    Import(
        "ttb_permittees",
        "ttb_wine_producers.csv",
        f"{RAW}/p-gag/grapegeek/806995ad44aa564da425adfa6e998a805c1a6354/data/us/{{name}}",
        "2026-01-18",
        "TTB permittee list as republished by grapegeek (file last changed 2026-01-18)",
    ),
    Import(
        "inao_fr_appellations",
        "cahiers_des_charges/aoc_*.md",
        f"{RAW}/etalab/lois-non-codifiees-et-reglements-francais/{{commit}}/{{path}}",
        "2026-11-29",
        "Légifrance text converted to Markdown by Etalab, read from upstream page by page: length equals upstream "
        "exactly, byte identity not guaranteed; dated by the shared-data capture (upstream commit dates not recorded)",
        index="cahiers_des_charges/index.csv",
    ),
    Import(
        "inao_fr_appellations",
        "openwines_dept44_geojson/aoc_*.geojson",
        f"{RAW}/OpenWines/Open-Data/6306348866c03812beeeebfff04d87fca823f042/dept_44/{{name}}",
        "2015-05-10",
        "INAO commune lists of appellations in Loire-Atlantique joined to OSM commune outlines by OpenWines",
    ),
    Import(
        "wikipedia_fr_infobox_openwines",
        "output/appellations.csv",
        f"{RAW}/OpenWines/Scraper/fb8c4452188d9a0f682ce09e4cc8aca7b4cb9582/output/{{name}}",
        "2017-04-16",
        "fr.wikipedia infobox extracts (section 0, 2017 revisions) flattened by the OpenWines scraper",
    ),
    Import(
        "wikipedia_fr_infobox_openwines",
        "output/cepages.csv",
        f"{RAW}/OpenWines/Scraper/fb8c4452188d9a0f682ce09e4cc8aca7b4cb9582/output/{{name}}",
        "2017-04-16",
        "fr.wikipedia 'Infobox Cépage' extracts flattened by the OpenWines scraper",
    ),
    Import(
        "wikimedia_pages",
        "wikibooks_Wine_Printable_version.md",
        f"{RAW}/AppoxyTerra/tmpc/c1c4e404c5d82ecde2265365db55640ac6f8ca4d/not_temp/9017/books/"
        "Agriculture_and_husbandry/Wine.md",
        "2023-09-07",
        "en.wikibooks 'Wine/Printable version' oldid=4027698 rendered to Markdown with the site chrome",
    ),
    Import(
        "fr_official_stats",
        "area_cepages_france_yearly.csv",
        f"{RAW}/OpenWines/area_cepages_france/7b4bf7991f940766f4902f7ceab98a70c72ff0ec/data/{{name}}",
        "2018-01-27",
        "FranceAgriMer grape-variety areas extracted from the Observatoire's PDFs by OpenWines",
    ),
    Import(
        "fr_official_stats",
        "douane_2016-stats-recolte.xls",
        f"{RAW}/BastienBellariva/projet_recolte/3add08e0b0803bfacb545dc456e3f9c27009199e/source/original/"
        "2016-stats-recolte.xls",
        "2018-05-28",
        "DGDDI (French customs) 2016 harvest declarations by département, original .xls",
    ),
    Import(
        "grape_varieties",
        "mdneuzerling_wikipedia_grape_varieties.csv",
        f"{RAW}/mdneuzerling/wine_reviews/5197e2e74cefc9b8177b3305b53493642a65cef2/varieties.csv",
        "2018-06-30",
        "en.wikipedia 'List of grape varieties' (2018) scraped by mdneuzerling/wine_reviews",
    ),
)
ATTRIBUTION_FILES = (
    "SOURCES.md",
    "cahiers_des_charges/index.csv",
    "LICENSE_CC0.txt",
    "openwines_dept44_geojson/LICENSE_ODbL.txt",
    "openwines_dept44_geojson/README_upstream.md",
    "README_upstream.md",
)


def build(data_dir: Path, out: Path) -> SnapshotStore:
    """Write the store (exchanges/, bodies/, attribution/) under `out`; existing exchanges are replaced."""
    for sub in ("exchanges", "bodies", "attribution"):
        shutil.rmtree(out / sub, ignore_errors=True)
    store = SnapshotStore(out)
    for item in IMPORTS:
        folder = data_dir / item.folder
        paths = sorted(folder.glob(item.pattern))
        if not paths:
            raise FileNotFoundError(f"{folder}/{item.pattern}: no file to import")
        rows = {}
        if item.index is not None:
            with (folder / item.index).open(encoding="utf-8", newline="") as handle:
                rows = {row["file"]: row for row in csv.DictReader(handle)}
        for path in paths:
            body = path.read_bytes()
            if item.index is not None and path.name not in rows:
                raise KeyError(f"{folder / item.index}: no row for {path.name}")
            url = item.url.format(
                name=path.name, **({k: rows[path.name][k] for k in ("commit", "path")} if rows else {})
            )
            store.put(
                Exchange(
                    url=url,
                    status=200,
                    response_headers={"content-type": media_type(None, path.name)},
                    body_sha256=sha256_hex(body),
                    body_size=len(body),
                    recorded_at=datetime.fromisoformat(item.committed).replace(tzinfo=UTC),
                    capture=Capture(kind="import", origin=f"{item.folder}/{path.relative_to(folder)}", note=item.note),
                ),
                body,
            )
        for name in ATTRIBUTION_FILES:
            if (folder / name).exists():
                target = out / "attribution" / item.folder / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(folder / name, target)
    return store


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=PROJECT_ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=SPECS_DIR / "wine" / "snapshot")
    args = parser.parse_args(argv)
    store = build(args.data, args.out)
    exchanges = store.exchanges()
    size = sum(p.stat().st_size for p in store.bodies_dir.glob("*.gz"))
    print(f"{len(exchanges)} exchanges, {size / 1e6:.1f} MB of compressed bodies in {args.out}")


if __name__ == "__main__":
    main()

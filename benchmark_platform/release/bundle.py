"""A release bundle: deterministic files plus `manifest.json` (the sha256 of every file and the upstream provenance).

Layout of releases/<spec>/<version>/:
    data/<table>.parquet          the open tables (dev split when a test split is sealed), data/analyses/<name>.parquet
    sealed/<table>.parquet.fernet.json   the test split's rows of every item- or fact-keyed table, Fernet-sealed
    plots/<name>.png              the analysis stage's plots
    croissant.json  datasheet.md  spec.json
    exports/lm_eval/  exports/inspect/  exports/hf/
    manifest.json                 what the release is: every file's sha256, the spec's sha256, the release code version
    lineage.json                  how this copy was built: run id, time, git revision, upstream data versions and runs

Same tables and spec give the same bytes: rows are sorted, ids are content-derived, no timestamps are written, and
every file carries the spec's canary string. That holds for every file listed in the manifest and for manifest.json
itself; lineage.json alone changes on every build (it is the run's record, not the release's content).
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import struct
import zlib
from pathlib import Path
from typing import Any

import polars as pl

from benchmark_platform.release.croissant import croissant
from benchmark_platform.release.datasheet import ReleaseSummary, datasheet, spec_notes
from benchmark_platform.release.exports import export_files, mcq_records
from benchmark_platform.release.kina import kina_notes
from benchmark_platform.release.seal import TEST, seal, split_of
from benchmark_platform.release.tables import ReleaseTable
from benchmark_platform.spec import BenchmarkSpec

MANIFEST = "manifest.json"
LINEAGE = "lineage.json"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def parquet_bytes(frame: pl.DataFrame, canary: str, label: str) -> bytes:
    buffer = io.BytesIO()
    frame.write_parquet(
        buffer,
        compression="zstd",
        compression_level=3,
        statistics=False,
        metadata={"canary": canary, "benchmark": label},
    )
    return buffer.getvalue()


def png_with_canary(png: bytes, canary: str) -> bytes:
    """The PNG with a tEXt chunk 'canary' right after its header chunk (IHDR is always 13 bytes of data)."""
    if not png.startswith(PNG_SIGNATURE):
        raise ValueError("not a PNG file")
    ihdr_end = len(PNG_SIGNATURE) + 8 + 13 + 4
    data = b"canary\x00" + canary.encode("latin-1")
    chunk = struct.pack(">I", len(data)) + b"tEXt" + data + struct.pack(">I", zlib.crc32(b"tEXt" + data))
    return png[:ihdr_end] + chunk + png[ihdr_end:]


def _json_bytes(value: object) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _split(
    frame: pl.DataFrame, test_ids: list[str], dev_facts: list[str], test_facts: list[str]
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """(open rows, sealed rows or None) of a table. Rows of test items are sealed; a fact stays open when a dev item
    uses it and is sealed when a test item does; tables keyed by neither stay open whole."""
    if not test_ids:
        return frame, None
    if "item_id" in frame.columns:
        sealed = pl.col("item_id").is_in(test_ids)
        return frame.filter(~sealed), frame.filter(sealed)
    if "fact_id" in frame.columns:
        return frame.filter(pl.col("fact_id").is_in(dev_facts)), frame.filter(pl.col("fact_id").is_in(test_facts))
    return frame, None


def _option_proofs(by_name: dict[str, ReleaseTable]) -> pl.DataFrame:
    """(item_id, fact_id) of every option's proving fact (options.parquet's proving_fact_ids)."""
    options = by_name["options"].frame if "options" in by_name else pl.DataFrame()
    if "proving_fact_ids" not in options.columns:
        return pl.DataFrame(schema={"item_id": pl.Utf8, "fact_id": pl.Utf8})
    return options.select("item_id", fact_id="proving_fact_ids").explode("fact_id").drop_nulls("fact_id")


def assemble(
    spec: BenchmarkSpec, tables: list[ReleaseTable], plots: dict[str, bytes], test_key: str | None
) -> tuple[dict[str, bytes], dict[str, int], dict[str, int]]:
    """(relative path -> bytes of every file, rows per Parquet file, split counts). Pure: no disk, no database."""
    release = spec.release
    label = f"{spec.name} {release.version}"
    if release.test_share > 0 and not test_key:
        raise ValueError(
            f"spec {spec.name}: release.test_share is {release.test_share} but no release key was given "
            "(set BENCHMARK_PLATFORM_RELEASE_KEY to a Fernet key)"
        )
    by_name = {t.name: t for t in tables}
    item_ids = by_name["items"].frame["item_id"].to_list() if by_name["items"].frame.height else []
    test_ids = [i for i in item_ids if split_of(i, spec.seed, release.test_share) == TEST] if release.test_share else []
    links, proofs = by_name["item_facts"].frame, _option_proofs(by_name)
    in_test = pl.col("item_id").is_in(test_ids)
    dev_facts = links.filter(~in_test)["fact_id"].to_list() if links.height else []
    test_facts = links.filter(in_test)["fact_id"].to_list() if links.height else []
    # an option's proof stays open with its dev item unless a test item was generated from it (its key stays sealed)
    dev_facts += sorted(set(proofs.filter(~in_test)["fact_id"]) - set(test_facts))
    test_facts += proofs.filter(in_test)["fact_id"].to_list()
    files: dict[str, bytes] = {}
    rows: dict[str, int] = {}
    open_tables: dict[str, tuple[str, pl.DataFrame, str, str]] = {}
    for table in sorted(tables, key=lambda t: t.name):
        frame, sealed = _split(table.sorted_frame(), test_ids, dev_facts, test_facts)
        if sealed is not None:
            assert test_key  # checked above: a test share needs a key
            path = f"sealed/{table.name}.parquet.fernet.json"
            files[path] = seal(
                parquet_bytes(sealed, release.canary, label), test_key, release.canary, f"{table.name}.parquet"
            )
            rows[path] = sealed.height
        path = f"data/{table.name}.parquet"
        files[path] = parquet_bytes(frame, release.canary, label)
        rows[path] = frame.height
        open_tables[table.name] = (path, frame, sha256_bytes(files[path]), table.description)
    for name, png in sorted(plots.items()):
        files[f"plots/{name}.png"] = png_with_canary(png, release.canary)
    summary = ReleaseSummary(
        spec.name,
        release.version,
        spec.description,
        release.licence,
        release.canary,
        [(key, " / ".join(path)) for key, path in spec.leaves],
        {name: frame for name, (_, frame, _, _) in open_tables.items()},
        len(test_ids),
        spec_notes(
            spec.selection.signature_model,
            spec.generation.generators,
            spec.audit.judges,
            bool(spec.evaluation.imports),
            bool(spec.sources),
            release.require_review_approval,
        )
        + (kina_notes(spec.audit.kina) if spec.audit.kina else ()),
        release.include_manual_review,
    )
    files["croissant.json"] = _json_bytes(croissant(summary, open_tables))
    records = mcq_records(open_tables["items"][1], open_tables["options"][1])
    files.update(
        export_files(
            records,
            spec.name,
            release.version,
            spec.description,
            release.licence,
            release.canary,
            lambda frame: parquet_bytes(frame, release.canary, label),
        )
    )
    files["spec.json"] = (spec.model_dump_json(indent=2) + "\n").encode()  # key order kept: it feeds code versions
    files["datasheet.md"] = datasheet(summary, len(files) + 1).encode()  # + itself (the manifest is not counted)
    return files, rows, {"dev_items": len(item_ids) - len(test_ids), "test_items": len(test_ids)}


def manifest_of(
    spec: BenchmarkSpec,
    files: dict[str, bytes],
    rows: dict[str, int],
    split: dict[str, int],
    spec_sha256: str,
    code_version: str,
) -> dict[str, object]:
    """What the release is, and nothing about the run that built it: the same inputs give the same bytes."""
    entries = {
        path: {"sha256": sha256_bytes(data), "bytes": len(data), **({"rows": rows[path]} if path in rows else {})}
        for path, data in sorted(files.items())
    }
    return {
        "benchmark": spec.name,
        "version": spec.release.version,
        "canary": spec.release.canary,
        "licence": spec.release.licence,
        "split": {"test_share": spec.release.test_share, **split},
        "spec_sha256": spec_sha256,
        "code_version": code_version,
        "files": entries,
    }


def files_digest(manifest: dict[str, Any]) -> str:
    """One hash over every file's hash: the release's content version."""
    return sha256_bytes(json.dumps({p: e["sha256"] for p, e in manifest["files"].items()}, sort_keys=True).encode())


def write_release(directory: Path, files: dict[str, bytes], manifest: dict[str, Any], lineage: dict[str, Any]) -> None:
    """Write the bundle atomically (a sibling temp dir renamed into place). Other versions are never touched."""
    staging = directory.with_name(directory.name + ".partial")
    if staging.exists():
        shutil.rmtree(staging)
    for path, data in files.items():
        target = staging / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (staging / MANIFEST).write_bytes(_json_bytes(manifest))
    (staging / LINEAGE).write_bytes(_json_bytes(lineage))
    if directory.exists():
        shutil.rmtree(directory)
    staging.rename(directory)


def _read_json(path: Path, what: str) -> dict[str, Any]:
    try:
        value = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"{path}: the release's {what} is damaged (not JSON: {exc}); restore it from a copy or rebuild the release"
        ) from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: the release's {what} is damaged (not a JSON object)")
    return value


def read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no release manifest here")
    manifest = _read_json(path, "manifest")
    files = manifest.get("files")
    if not isinstance(files, dict) or not all(isinstance(e, dict) and "sha256" in e for e in files.values()):
        raise ValueError(f"{path}: the release's manifest is damaged (no file map with sha256 per file)")
    for key in ("benchmark", "version"):
        if not isinstance(manifest.get(key), str):
            raise ValueError(f"{path}: the release's manifest is damaged (no {key!r})")
    return manifest


def read_lineage(directory: Path) -> dict[str, Any]:
    """How a kept release was built (lineage.json; releases written before it kept this in the manifest)."""
    path = directory / LINEAGE
    if path.is_file():
        return _read_json(path, "lineage")
    return dict(read_manifest(directory).get("provenance") or {})


def recorded_spec_sha256(directory: Path) -> str | None:
    manifest = read_manifest(directory)
    return manifest.get("spec_sha256") or read_lineage(directory).get("spec_sha256")


def verify_release(directory: Path) -> list[str]:
    """Problems found (empty when every file matches its recorded hash and no file is unlisted)."""
    manifest = read_manifest(directory)
    problems = []
    for name, entry in manifest["files"].items():
        path = directory / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif sha256_file(path) != entry["sha256"]:
            problems.append(f"{name}: content hash differs from the manifest")
    present = {p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()}
    unlisted = present - set(manifest["files"]) - {MANIFEST, LINEAGE}
    problems += [f"{name}: not listed in the manifest" for name in sorted(unlisted)]
    return problems


def compare_files(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Differences between two manifests' file maps (empty: byte-identical bundles)."""
    a, b = expected["files"], actual["files"]
    return (
        [f"{p}: missing from the rebuild" for p in sorted(set(a) - set(b))]
        + [f"{p}: not in the original" for p in sorted(set(b) - set(a))]
        + [
            f"{p}: sha256 {a[p]['sha256'][:12]} -> {b[p]['sha256'][:12]}"
            for p in sorted(set(a) & set(b))
            if a[p]["sha256"] != b[p]["sha256"]
        ]
    )


def _read_table(directory: Path, name: str) -> pl.DataFrame:
    path = directory / "data" / f"{name}.parquet"
    try:
        return pl.read_parquet(path)
    except (OSError, pl.exceptions.PolarsError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(
            f"{path}: unreadable ({first}); check the release with `benchmark-platform release verify`"
        ) from None


def _items_with_options(directory: Path) -> pl.DataFrame:
    items = _read_table(directory, "items")
    options = _read_table(directory, "options")
    if not items.height:
        return pl.DataFrame(
            {"item_id": [], "discipline": [], "content": []},
            schema=[("item_id", pl.String), ("discipline", pl.String), ("content", pl.UInt64)],
        )
    choices = options.sort("item_id", "position").group_by("item_id").agg(choices=pl.col("text"))
    joined = items.join(choices, on="item_id", how="left")
    return joined.select("item_id", "discipline", content=pl.struct(pl.exclude("item_id", "discipline")).hash(seed=0))


def diff_releases(old: Path, new: Path) -> dict[str, list[str]]:
    """Item ids added, removed and changed (same id, different content or options) from `old` to `new`."""
    a, b = _items_with_options(old), _items_with_options(new)
    joined = a.join(b, on="item_id", how="inner", suffix="_new")
    return {
        "added": sorted(set(b["item_id"]) - set(a["item_id"])),
        "removed": sorted(set(a["item_id"]) - set(b["item_id"])),
        "changed": sorted(joined.filter(pl.col("content") != pl.col("content_new"))["item_id"].to_list()),
    }


def list_releases(root: Path) -> list[dict[str, Any]]:
    """Every kept release under root (<spec>/<version>/manifest.json), oldest version first per spec."""
    kept = []
    for manifest_path in sorted(root.glob(f"*/*/{MANIFEST}")):
        manifest = read_manifest(manifest_path.parent)
        kept.append(
            {
                "spec": manifest["benchmark"],
                "version": manifest["version"],
                "path": manifest_path.parent,
                "items": manifest["files"].get("data/items.parquet", {}).get("rows", 0),
                "sealed_items": manifest.get("split", {}).get("test_items", 0),
                "files": len(manifest["files"]),
                "content": files_digest(manifest)[:16],
            }
        )
    return sorted(kept, key=lambda r: (r["spec"], _version_key(r["version"])))


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.removeprefix("v").split("."))

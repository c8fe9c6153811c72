"""A release bundle: deterministic files plus `manifest.json` (the sha256 of every file and the upstream provenance).

Layout of releases/<spec>/<version>/:
    data/<table>.parquet          the open tables (dev split when a test split is sealed), data/analyses/<name>.parquet
    sealed/<table>.parquet.fernet.json   the test split's rows of every item- or fact-keyed table, Fernet-sealed
    plots/<name>.png              the analysis stage's plots
    croissant.json  datasheet.md  spec.json
    report/index.html             the report and item browser, static (opens from the file system; data in data.js)
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
from benchmark_platform.release.persist import ReleaseTable
from benchmark_platform.release.report import REPORT_FILES, report_files
from benchmark_platform.release.seal import TEST, seal, split_of
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


RELEASE_SIGNIFICANT_DIGITS = 12


def parquet_bytes(frame: pl.DataFrame, canary: str, label: str) -> bytes:
    """The frame as release parquet. Floats are rounded to 12 significant digits (issue 30): a figure that decides
    nothing (a CI bound, a tau) may differ in its last bits with the CPU's libm or vector width, and the release's
    bytes must not."""
    frame = frame.with_columns(pl.col(pl.Float32, pl.Float64).round_sig_figs(RELEASE_SIGNIFICANT_DIGITS))
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
    sealed_outcomes = None
    for table in sorted(tables, key=lambda t: t.name):
        frame, sealed = _split(table.sorted_frame(), test_ids, dev_facts, test_facts)
        if table.name == "item_outcomes":
            sealed_outcomes = sealed  # the datasheet counts sealed items too
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
        min_answered_share=spec.analysis.min_answered_share,
        sealed_outcomes=sealed_outcomes,
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
    # + itself and the report (the manifest is not counted)
    files["datasheet.md"] = datasheet(summary, len(files) + 1 + len(REPORT_FILES)).encode()
    files.update(report_files(summary, files["datasheet.md"].decode()))
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


ASIDE = ".old"  # the replaced bundle, kept until the new one is in place
STAGING = ".partial"  # the bundle being written


def recover_release(directory: Path) -> None:
    """Finish or undo a replace a kill interrupted: the old bundle back when the new one never arrived, the
    leftovers removed otherwise. `directory` is then complete or absent, never a mix."""
    aside = directory.with_name(directory.name + ASIDE)
    staging = directory.with_name(directory.name + STAGING)
    if aside.exists():
        if directory.exists():
            shutil.rmtree(aside)  # killed after the new bundle was renamed in
        else:
            aside.rename(directory)  # killed between the two renames: the old bundle is whole
    if staging.exists():
        shutil.rmtree(staging)


def write_release(directory: Path, files: dict[str, bytes], manifest: dict[str, Any], lineage: dict[str, Any]) -> None:
    """Write the bundle beside the old one, then swap by renames (old aside, new in, old deleted): at every moment
    either the old or the new bundle is complete under its own name. Other versions are never touched."""
    recover_release(directory)
    staging = directory.with_name(directory.name + STAGING)
    for path, data in files.items():
        target = staging / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (staging / MANIFEST).write_bytes(_json_bytes(manifest))
    (staging / LINEAGE).write_bytes(_json_bytes(lineage))
    aside = directory.with_name(directory.name + ASIDE)
    if directory.exists():
        directory.rename(aside)
    staging.rename(directory)
    if aside.exists():
        shutil.rmtree(aside)


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
    if outside := [name for name in files if not _inside(directory, name)]:
        raise ValueError(f"{path}: the release's manifest is damaged (lists {outside[0]!r}, outside the bundle)")
    return manifest


def _inside(directory: Path, name: str) -> bool:
    """Whether a manifest entry names a file inside the bundle (no absolute path, no `..`, no link out)."""
    relative = Path(name)
    if not name or relative.is_absolute() or ".." in relative.parts or "\\" in name:
        return False
    root = directory.resolve()
    return (root / relative).resolve().is_relative_to(root)


def read_lineage(directory: Path) -> dict[str, Any]:
    """How a kept release was built (lineage.json; releases written before it kept this in the manifest)."""
    path = directory / LINEAGE
    lineage = _read_json(path, "lineage") if path.is_file() else read_manifest(directory).get("provenance") or {}
    if not isinstance(lineage, dict) or (problem := _lineage_problem(lineage)):
        raise ValueError(
            f"{path}: the release's lineage is damaged ({problem if isinstance(lineage, dict) else 'not an object'}); "
            "restore it from a copy or rebuild the release"
        )
    return lineage


def _lineage_problem(lineage: dict[str, Any]) -> str | None:
    """What is wrong with a lineage's shape (what rebuild reads), None when it fits."""
    for key in ("spec_sha256", "code_revision", "dagster_run_id", "built_at"):
        if lineage.get(key) is not None and not isinstance(lineage[key], str):
            return f"{key} is not a string"
    assets = lineage.get("assets", {})
    if not isinstance(assets, dict):
        return "assets is not an object"
    for asset, partitions in assets.items():
        if not isinstance(partitions, dict):
            return f"assets.{asset} is not an object"
        for partition, versions in partitions.items():
            if versions is None:
                continue
            # versions and run ids are strings; `reused` (whether this build reused the materialisation) a boolean
            if not isinstance(versions, dict) or not all(
                v is None or isinstance(v, bool if k == "reused" else str) for k, v in versions.items()
            ):
                return f"assets.{asset}.{partition or '-'} is not an object of versions"
    return None


def recorded_spec_sha256(directory: Path) -> str | None:
    manifest = read_manifest(directory)
    return manifest.get("spec_sha256") or read_lineage(directory).get("spec_sha256")


def release_files(directory: Path) -> set[str]:
    """The files of a release folder, relative and POSIX-style, without Python's bytecode caches: an evaluation
    harness that imports exports/inspect/<name>.py writes exports/inspect/__pycache__/ next to it."""
    return {
        p.relative_to(directory).as_posix()
        for p in directory.rglob("*")
        if p.is_file() and "__pycache__" not in p.relative_to(directory).parts
    }


def verify_release(directory: Path) -> list[str]:
    """Problems found (empty when every file matches its recorded hash and no file is unlisted)."""
    manifest = read_manifest(directory)
    problems = []
    try:
        read_lineage(directory)
    except ValueError as exc:
        problems.append(f"{LINEAGE}: {str(exc).removeprefix(f'{directory / LINEAGE}: ')}")
    for name, entry in manifest["files"].items():
        path = directory / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif sha256_file(path) != entry["sha256"]:
            problems.append(f"{name}: content hash differs from the manifest")
    unlisted = release_files(directory) - set(manifest["files"]) - {MANIFEST, LINEAGE}
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
    """Every kept release under root (<spec>/<version>/manifest.json), oldest version first per spec; a release
    whose manifest is damaged is listed with `damaged` (the reason) instead of its counts."""
    kept = []
    for manifest_path in sorted(root.glob(f"*/*/{MANIFEST}")):
        directory = manifest_path.parent
        if directory.name.endswith((ASIDE, STAGING)):
            continue  # an interrupted replace (write_release recovers it)
        try:
            manifest = read_manifest(directory)
        except ValueError as exc:
            kept.append(
                {"spec": directory.parent.name, "version": directory.name, "path": directory, "damaged": str(exc)}
            )
            continue
        kept.append(
            {
                "spec": manifest["benchmark"],
                "version": manifest["version"],
                "path": directory,
                "items": manifest["files"].get("data/items.parquet", {}).get("rows", 0),
                "sealed_items": (manifest.get("split") or {}).get("test_items", 0),
                "files": len(manifest["files"]),
                "content": files_digest(manifest)[:16],
            }
        )
    return sorted(kept, key=lambda r: (r["spec"], _version_key(r["version"])))


def _version_key(version: str) -> tuple[tuple[int, str], ...]:
    return tuple((int(x), "") if x.isdigit() else (-1, x) for x in version.removeprefix("v").split("."))

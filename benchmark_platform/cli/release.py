"""`benchmark-platform release verify|rebuild|diff|list|view`: the kept, versioned release bundles."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmark_platform.paths import RELEASES_DIR
from benchmark_platform.spec import DEFAULT_SPEC


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("release", help="verify, rebuild, compare and list kept releases")
    commands = parser.add_subparsers(dest="release_command", required=True)

    verify = commands.add_parser("verify", help="check every file of a release against its manifest's sha256")
    verify.add_argument("path", type=Path, help="a release folder, e.g. releases/wine/v0.1")
    verify.set_defaults(handler=_verify)

    rebuild = commands.add_parser(
        "rebuild", help="re-materialise a kept release from its recorded inputs and prove the files byte-identical"
    )
    rebuild.add_argument("version", help="e.g. v0.1")
    rebuild.add_argument(
        "--spec", default=DEFAULT_SPEC, help="spec name (the folder under the releases root) or the path of its .yaml"
    )
    rebuild.add_argument("--root", type=Path, default=RELEASES_DIR, help="releases root")
    rebuild.set_defaults(handler=_rebuild)

    diff = commands.add_parser("diff", help="items added, removed and changed between two releases")
    diff.add_argument("old", help="a release folder, or a version of --spec under --root")
    diff.add_argument("new", help="a release folder, or a version of --spec under --root")
    diff.add_argument("--spec", default=DEFAULT_SPEC, help="spec name or the path of its .yaml")
    diff.add_argument("--root", type=Path, default=RELEASES_DIR)
    diff.set_defaults(handler=_diff)

    digest = commands.add_parser(
        "digest", help="compare a built release with its spec's committed release_digest.json (items, leaderboard)"
    )
    digest.add_argument("--spec", default=DEFAULT_SPEC, help="bundled spec name or path to a spec.yaml")
    digest.add_argument("--root", type=Path, default=RELEASES_DIR, help="releases root holding <spec>/<version>")
    digest.add_argument("--write", action="store_true", help="write the built release's digest as the committed one")
    digest.set_defaults(handler=_digest)

    listing = commands.add_parser("list", help="every kept release under the releases root")
    listing.add_argument("--root", type=Path, default=RELEASES_DIR)
    listing.set_defaults(handler=_list)

    view = commands.add_parser("view", help="serve a release's report on 127.0.0.1 and print its URL (Ctrl-C stops)")
    view.add_argument("path", type=Path, help="a release folder, e.g. releases/wine/v0.1")
    view.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    view.set_defaults(handler=_view)


def _spec_ref(ref: str) -> tuple[str, Path | None]:
    """(spec name, its folder) of `--spec`: a bundled name (folder None: the release's recorded one), or the path of
    a spec .yaml, read for its name (a release is kept under the spec's name, wherever the spec lives)."""
    if Path(ref).suffix not in {".yaml", ".yml"}:
        return ref, None
    from benchmark_platform.spec import load_spec

    spec = load_spec(ref)
    return spec.name, spec.directory


def _release_dir(ref: str, spec: str, root: Path) -> Path:
    path = Path(ref)
    return path if path.is_dir() else root / _spec_ref(spec)[0] / ref


def _verify(args: argparse.Namespace) -> int:
    from benchmark_platform.release import read_manifest, verify_release

    manifest = read_manifest(args.path)  # a missing or damaged manifest: one error line (cli/main.py)
    problems = verify_release(args.path)
    for problem in problems:
        print(f"FAIL {problem}")
    print(
        f"{manifest['benchmark']} {manifest['version']}: {len(manifest['files'])} files, "
        + ("all hashes match" if not problems else f"{len(problems)} problems")
    )
    if problems:
        raise ValueError(
            f"{args.path}: {len(problems)} problems (first: {problems[0]}); "
            "restore the files from a copy or rebuild the release"
        )
    return 0


def _rebuild(args: argparse.Namespace) -> int:
    import dagster as dg

    from benchmark_platform.cli.run import prepare_environment
    from benchmark_platform.defs.common import DatabaseResource
    from benchmark_platform.defs.release.rebuild import rebuild_release
    from benchmark_platform.store import spec_lock

    name, spec_directory = _spec_ref(args.spec)
    directory = args.root / name / args.version
    if not (directory / "manifest.json").is_file():
        print(f"error: no kept release at {directory} (see `benchmark-platform release list`)", file=sys.stderr)
        return 2
    url = prepare_environment()
    try:
        with spec_lock(url, [name], "release rebuild"), dg.DagsterInstance.get() as instance:
            report = rebuild_release(
                directory, instance, {"database": DatabaseResource(url=url)}, spec_directory=spec_directory
            )
    except ValueError as exc:  # the kept release does not verify, or its spec no longer fits this code
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for change in report.code_changes:
        print(f"code changed since the release: {change}")
    if report.data_changes:
        print(
            f"{len(report.data_changes)} upstream partitions got a new data version (run-scoped versions of assets "
            "without a code version change on every run)"
        )
    print(f"LLM calls not answered from the gateway cache: {report.new_llm_calls}")
    for difference in report.differences:
        print(f"DIFF {difference}")
    print(
        f"{name} {args.version}: {report.files} files "
        + ("rebuilt byte-identical" if report.identical else f"differ in {len(report.differences)} places")
    )
    matches_digest = _check_committed_digest(args.spec, directory)
    return 0 if report.identical and matches_digest else 1


def _check_committed_digest(spec_name: str, directory: Path) -> bool:
    """Compare a release with the digest its bundled spec commits (issue 30); True when equal or when there is none."""
    from benchmark_platform.release import committed_digest, first_difference, release_digest
    from benchmark_platform.spec import load_spec

    try:
        expected = committed_digest(load_spec(spec_name).directory)
    except ValueError:  # not a spec this checkout knows: nothing committed to compare with
        return True
    if expected is None:
        return True
    difference = first_difference(expected, release_digest(directory))
    if difference is None:
        print(f"{spec_name}: the release matches the committed release_digest.json")
        return True
    print(f"DIFF release_digest.json: this machine built another release than the committed one: {difference}")
    return False


def _digest(args: argparse.Namespace) -> int:
    from benchmark_platform.release import (
        DIGEST_FILE,
        DigestError,
        committed_digest,
        digest_bytes,
        first_difference,
        release_digest,
    )
    from benchmark_platform.spec import SpecError, load_spec

    try:
        spec = load_spec(args.spec)
        actual = release_digest(args.root / spec.name / spec.release.version)
    except (SpecError, DigestError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    target = spec.directory / DIGEST_FILE
    if args.write:
        target.write_bytes(digest_bytes(actual))
        print(f"wrote {target}: {actual['items']} items in {len(actual['disciplines'])} disciplines")
        return 0
    expected = committed_digest(spec.directory)
    if expected is None:
        print(f"error: {target} does not exist (write it with --write)", file=sys.stderr)
        return 2
    difference = first_difference(expected, actual)
    if difference is not None:
        print(f"{spec.name} {spec.release.version} differs from {target}: {difference}")
        return 1
    print(f"{spec.name} {spec.release.version} matches {target}")
    return 0


def _diff(args: argparse.Namespace) -> int:
    from benchmark_platform.release import diff_releases

    old, new = _release_dir(args.old, args.spec, args.root), _release_dir(args.new, args.spec, args.root)
    for path in (old, new):
        if not (path / "manifest.json").is_file():
            print(f"error: no release at {path}", file=sys.stderr)
            return 2
    changes = diff_releases(old, new)
    for kind in ("added", "removed", "changed"):
        for item_id in changes[kind]:
            print(f"{kind:8} {item_id}")
    print(", ".join(f"{len(changes[k])} {k}" for k in ("added", "removed", "changed")))
    return 0


def _list(args: argparse.Namespace) -> int:
    from benchmark_platform.release import list_releases

    kept = list_releases(args.root)
    if not kept:
        print(f"no releases under {args.root}")
        return 0
    print(f"{'spec':10} {'version':8} {'items':>6} {'sealed':>6} {'files':>5}  content           path")
    damaged = [r for r in kept if "damaged" in r]
    for r in kept:
        if "damaged" in r:
            print(f"{r['spec']:10} {r['version']:8} DAMAGED {r['path']}: {r['damaged']}")
            continue
        print(
            f"{r['spec']:10} {r['version']:8} {r['items']:>6} {r['sealed_items']:>6} {r['files']:>5}  "
            f"{r['content']}  {r['path']}"
        )
    if damaged:
        print(
            f"error: {len(damaged)} of {len(kept)} releases under {args.root} are damaged (first: "
            f"{damaged[0]['damaged']}); restore them from a copy or rebuild them",
            file=sys.stderr,
        )
    return 2 if damaged else 0


def _view(args: argparse.Namespace) -> int:
    from benchmark_platform.release import view

    try:
        view(
            args.path, args.port, announce=lambda url: print(f"serving {args.path} at {url} (Ctrl-C stops)", flush=True)
        )
    except (FileNotFoundError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0

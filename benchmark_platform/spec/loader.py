"""Load a benchmark spec by bundled name or path; an invalid spec stops with the file and the field at fault."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import yaml
from pydantic import ValidationError

from benchmark_platform.paths import SPECS_DIR
from benchmark_platform.spec.models import BenchmarkSpec, SpecReferenceError

DEFAULT_SPEC = "wine"


class SpecError(ValueError):
    """A spec that cannot be used. `problems` lists each fault on its own line (file, field path, what is wrong)."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or [message]


class _IncludeLoader(yaml.SafeLoader):
    """SafeLoader plus `!include other.yaml` (or `other.csv`: a list of its rows, each a mapping of the header's
    columns to text), resolved next to the including file (large taxonomies and reviewable tables live apart) and
    refused outside `include_roots` (the spec's folder unless the caller allows more): a spec cannot read any file."""

    include_roots: tuple[Path, ...] = ()


def _read_utf8(path: Path, loader: type[_IncludeLoader]) -> object:
    try:
        with path.open(encoding="utf-8") as handle:
            return yaml.load(handle, loader)
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: not UTF-8 (byte {exc.start}: {exc.reason}); save the file as UTF-8") from None


def _include(loader: _IncludeLoader, node: yaml.Node) -> object:
    name = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    folder = Path(loader.name).parent
    path = (folder / name).resolve()
    roots = loader.include_roots or (folder.resolve(),)
    if not any(path.is_relative_to(root) for root in roots):
        raise SpecError(
            f"{loader.name}: `!include {name}` reads {path}, outside the spec's folder {roots[0]}; "
            "move the file into the spec's folder (or allow its folder: load_spec(..., include_roots=...))"
        )
    if path.suffix.lower() == ".csv":
        return _read_csv(path)
    return _read_utf8(path, type(loader))


def _read_csv(path: Path) -> list[dict[str, str]]:
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: not UTF-8 (byte {exc.start}: {exc.reason}); save the file as UTF-8") from None
    except csv.Error as exc:
        raise SpecError(f"{path}: not a valid CSV table: {exc}") from None
    for line, row in enumerate(rows, 2):
        if None in row or None in row.values():
            raise SpecError(f"{path}:{line}: the row's field count differs from the header's")
    return rows


_IncludeLoader.add_constructor("!include", _include)


def spec_path(name_or_path: str | Path) -> Path:
    candidate = Path(name_or_path)
    if candidate.suffix in {".yaml", ".yml"}:
        return candidate
    return SPECS_DIR / str(name_or_path) / "spec.yaml"


def load_spec(name_or_path: str | Path = DEFAULT_SPEC, include_roots: Sequence[Path] = ()) -> BenchmarkSpec:
    """The validated spec; `include_roots` are folders besides the spec's own that `!include` may read."""
    path = spec_path(name_or_path)
    if not path.exists():
        bundled = sorted(p.name for p in SPECS_DIR.iterdir() if (p / "spec.yaml").exists())
        raise SpecError(f"{path}: no such spec (bundled specs: {', '.join(bundled)})")
    # a bundled spec may include another bundled spec's files (kina_mmlu_pro reads kina's taxonomy)
    siblings: tuple[Path, ...] = (SPECS_DIR,) if path.resolve().is_relative_to(SPECS_DIR.resolve()) else ()
    roots = tuple(Path(p).resolve() for p in (path.parent, *siblings, *include_roots))
    loader = type("_SpecLoader", (_IncludeLoader,), {"include_roots": roots})
    try:
        raw = _read_utf8(path, loader)
    except RecursionError:
        raise SpecError(f"{path}: nested too deeply to be a spec") from None
    except (yaml.YAMLError, OSError) as exc:
        raise SpecError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise SpecError(f"{path}: a spec is a YAML mapping, got {type(raw).__name__}")
    try:
        return BenchmarkSpec.model_validate({**raw, "directory": path.parent})
    except ValidationError as exc:
        problems = validation_problems(exc)
        raise SpecError(f"{path}: invalid spec: {'; '.join(problems)}", [f"{path}: {p}" for p in problems]) from None


def validation_problems(error: ValidationError) -> list[str]:
    """One "field.path: message" per fault; the cross-section rules' faults each under their own field path."""
    problems = []
    for detail in error.errors():
        cause = (detail.get("ctx") or {}).get("error")
        if isinstance(cause, SpecReferenceError):
            problems += [f"{where}: {what}" for where, what in cause.problems]
        else:
            problems.append(f"{'.'.join(str(part) for part in detail['loc']) or '(top level)'}: {detail['msg']}")
    return problems

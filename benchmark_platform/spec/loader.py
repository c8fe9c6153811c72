"""Load a benchmark spec by bundled name or path; an invalid spec stops with the file and the field at fault."""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path

import yaml
from pydantic import ValidationError

from benchmark_platform.paths import SPECS_DIR
from benchmark_platform.safeyaml import YAML_LIMITS, Budget, SafeLoader, YamlError, read_yaml
from benchmark_platform.spec.models import BenchmarkSpec, SpecReferenceError

DEFAULT_SPEC = "wine"


class SpecError(ValueError):
    """A spec that cannot be used. `problems` lists each fault on its own line (file, field path, what is wrong)."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or [message]


class _IncludeLoader(SafeLoader):
    """The platform's safe loader plus `!include other.yaml` (or `other.csv`: a list of its rows, each a mapping of
    the header's columns to text), resolved next to the including file (large taxonomies and reviewable tables live
    apart) and refused outside `include_roots` (the spec's folder unless the caller allows more): a spec cannot read
    any file. An included file shares the including file's alias budget."""

    include_roots: tuple[Path, ...] = ()


def _read(path: Path, loader: type[_IncludeLoader], budget: Budget | None = None) -> object:
    try:
        return read_yaml(path, loader, budget=budget)
    except YamlError as exc:
        raise SpecError(str(exc)) from None


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
    return _read(path, type(loader), getattr(loader, "budget", None))


def _read_csv(path: Path) -> list[dict[str, str]]:
    if path.stat().st_size > YAML_LIMITS.max_bytes:  # the same size limit as a YAML file of the spec
        raise SpecError(f"{path}: over {YAML_LIMITS.max_bytes} bytes, too large for a spec's table")
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
        raw = _read(path, loader)
    except RecursionError:  # an `!include` cycle
        raise SpecError(f"{path}: nested too deeply to be a spec (does a file `!include` itself?)") from None
    if not isinstance(raw, dict):
        raise SpecError(f"{path}: a spec is a YAML mapping, got {type(raw).__name__}")
    if non_finite := _non_finite(raw):
        problems = [f"{where}: {value} is not a finite number" for where, value in non_finite]
        raise SpecError(f"{path}: invalid spec: {'; '.join(problems)}", [f"{path}: {p}" for p in problems])
    try:
        # absolute: every path in a spec is relative to the spec's own folder, whatever the current directory
        return BenchmarkSpec.model_validate({**raw, "directory": path.parent.resolve()})
    except ValidationError as exc:
        problems = validation_problems(exc)
        raise SpecError(f"{path}: invalid spec: {'; '.join(problems)}", [f"{path}: {p}" for p in problems]) from None


def _non_finite(value: object, where: str = "") -> list[tuple[str, float]]:
    """(field path, value) of every .inf / .nan in a spec: no setting means infinity (a limit is a number)."""
    if isinstance(value, float) and not math.isfinite(value):
        return [(where or "(top level)", value)]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _non_finite(v, f"{where}.{k}" if where else str(k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _non_finite(v, f"{where}.{i}")]
    return []


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

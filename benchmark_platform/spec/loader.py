"""Load a benchmark spec by bundled name or path; an invalid spec stops with the file and the field at fault."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from benchmark_platform.paths import SPECS_DIR
from benchmark_platform.spec.models import BenchmarkSpec

DEFAULT_SPEC = "wine"


class SpecError(ValueError):
    pass


class _IncludeLoader(yaml.SafeLoader):
    """SafeLoader plus `!include other.yaml`, resolved next to the including file (large taxonomies live apart)."""


def _include(loader: _IncludeLoader, node: yaml.Node) -> object:
    path = Path(loader.name).parent / str(loader.construct_scalar(node))  # type: ignore[arg-type]
    with path.open(encoding="utf-8") as handle:
        return yaml.load(handle, _IncludeLoader)  # noqa: S506 - SafeLoader subclass


_IncludeLoader.add_constructor("!include", _include)


def spec_path(name_or_path: str | Path) -> Path:
    candidate = Path(name_or_path)
    if candidate.suffix in {".yaml", ".yml"}:
        return candidate
    return SPECS_DIR / str(name_or_path) / "spec.yaml"


def load_spec(name_or_path: str | Path = DEFAULT_SPEC) -> BenchmarkSpec:
    path = spec_path(name_or_path)
    if not path.exists():
        bundled = sorted(p.name for p in SPECS_DIR.iterdir() if (p / "spec.yaml").exists())
        raise SpecError(f"{path}: no such spec (bundled specs: {', '.join(bundled)})")
    try:
        with path.open(encoding="utf-8") as handle:
            raw = yaml.load(handle, _IncludeLoader)  # noqa: S506 - SafeLoader subclass
    except (yaml.YAMLError, OSError) as exc:
        raise SpecError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise SpecError(f"{path}: a spec is a YAML mapping, got {type(raw).__name__}")
    try:
        return BenchmarkSpec.model_validate({**raw, "directory": path.parent})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or '(top level)'}: {error['msg']}" for error in exc.errors()
        )
        raise SpecError(f"{path}: invalid spec: {problems}") from None

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmark_platform.spec import load_spec
from benchmark_platform.spec.loader import _IncludeLoader


@pytest.fixture
def changed_wine(tmp_path: Path) -> Callable[[Callable[[dict[str, Any]], None]], Path]:
    """Writes the wine spec with its !includes resolved, changed by `mutate`, to a temporary file; returns its path."""

    def write(mutate: Callable[[dict[str, Any]], None]) -> Path:
        with (load_spec("wine").directory / "spec.yaml").open() as handle:
            raw = yaml.load(handle, _IncludeLoader)  # a SafeLoader subclass
        mutate(raw)
        path = tmp_path / "spec.yaml"
        path.write_text(yaml.safe_dump(raw))
        return path

    return write

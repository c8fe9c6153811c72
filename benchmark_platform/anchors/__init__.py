"""Anchor elicitation import (KINA 3.1, Appendix B): prototype, labels, strata and quotas per discipline.

io.py parses a discipline's files, persist.py stores and reads imports, run.py is what the anchors asset calls; the
stages after anchors read the stored import (`current_anchors`), never the files.
"""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.anchors.io import (
        MAIN_FILE,
        AnchorFileError,
        anchor_files,
        has_anchor_files,
        load_anchor_root,
        load_anchor_set,
        version_of,
    )
    from benchmark_platform.anchors.models import AnchorItem, AnchorSet, LabelledItem, PairLabel, Prototype, Stratum
    from benchmark_platform.anchors.persist import (
        StaleAnchorImportError,
        StoredAnchors,
        current_anchors,
        latest_import_versions,
        record_import,
    )
    from benchmark_platform.anchors.run import AnchorImport, import_anchors
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "AnchorFileError",
    "AnchorImport",
    "AnchorItem",
    "AnchorSet",
    "LabelledItem",
    "MAIN_FILE",
    "PairLabel",
    "Prototype",
    "StaleAnchorImportError",
    "StoredAnchors",
    "Stratum",
    "anchor_files",
    "current_anchors",
    "has_anchor_files",
    "import_anchors",
    "latest_import_versions",
    "load_anchor_root",
    "load_anchor_set",
    "record_import",
    "version_of",
]

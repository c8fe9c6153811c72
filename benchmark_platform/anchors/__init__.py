"""Anchor elicitation import (KINA 3.1, Appendix B): prototype, labels, strata and quotas per discipline."""

from benchmark_platform.anchors.io import AnchorFileError, anchor_files, load_anchor_root, load_anchor_set, version_of
from benchmark_platform.anchors.models import AnchorItem, AnchorSet, LabelledItem, PairLabel, Prototype, Stratum

__all__ = [
    "AnchorFileError",
    "AnchorItem",
    "AnchorSet",
    "LabelledItem",
    "PairLabel",
    "Prototype",
    "Stratum",
    "anchor_files",
    "load_anchor_root",
    "load_anchor_set",
    "version_of",
]

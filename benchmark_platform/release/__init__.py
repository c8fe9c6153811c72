"""release stage core."""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.release.bundle import (
        diff_releases,
        list_releases,
        read_manifest,
        release_files,
        verify_release,
    )
    from benchmark_platform.release.digest import (
        DIGEST_FILE,
        DigestError,
        committed_digest,
        digest_bytes,
        first_difference,
        release_digest,
    )
    from benchmark_platform.release.persist import spec_fingerprint
    from benchmark_platform.release.report.serve import view
    from benchmark_platform.release.run import (
        RELEASE_CODE_VERSION,
        RebuildReport,
        build_release,
        compare_rebuild,
        prepare_rebuild,
    )
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "DIGEST_FILE",
    "DigestError",
    "RELEASE_CODE_VERSION",
    "RebuildReport",
    "build_release",
    "committed_digest",
    "compare_rebuild",
    "diff_releases",
    "digest_bytes",
    "first_difference",
    "list_releases",
    "prepare_rebuild",
    "read_manifest",
    "release_digest",
    "spec_fingerprint",
    "release_files",
    "verify_release",
    "view",
]

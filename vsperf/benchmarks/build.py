"""Building a benchmark's C programs on first use, into the vsperf cache, keyed by source hash:
the one recipe of vsperf's native helpers (vsperf.host.build.make_into_cache) with make and a C
compiler only.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from vsperf.executor import Executor
from vsperf.host.build import cache_root, make_into_cache

BUILD_PACKAGES = "make gcc"


def missing_tools() -> list[str]:
    """The build tools that are absent (empty: it can build)."""
    return [tool for tool in ("make", "cc") if shutil.which(tool) is None]


def built_programs(
    executor: Executor, src_dir: Path, name: str, programs: Sequence[str], *, cache: Path | None = None
) -> dict[str, Path]:
    """Paths of `programs` built from `src_dir` into ~/.cache/vsperf/<name>-<hash>/ (once per
    version of the sources)."""
    return make_into_cache(executor, src_dir, cache or cache_root(), name, tuple(programs), what=name,
                           missing=missing_tools, packages=BUILD_PACKAGES)

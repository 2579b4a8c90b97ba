"""Finding the vsgen engine binary, building it from its C sources when needed.

Where the engine comes from, first match wins:
1. the VSGEN_ENGINE setting (a path), when set;
2. the binary `pip install .` built into the package (vsperf/trafficgen/vsgen/bin/vsgen-engine);
3. the sources, package data beside this module (csrc/); built with `make` into a cache
   directory keyed by a hash of the sources, so a change of the sources rebuilds and two vsperf
   processes never share a half-written file.
The build needs a C compiler, clang (BPF target), make, libbpf-dev and libxdp-dev; a missing one is a
PrerequisiteError that names the Debian packages to install.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vsperf.errors import PrerequisiteError
from vsperf.executor import Executor
from vsperf.host.build import cache_root, make_into_cache

ENGINE_NAME = "vsgen-engine"
_PKG = Path(__file__).resolve().parent
PACKAGED_BINARY = _PKG / "bin" / ENGINE_NAME
SOURCE_DIRS = (_PKG / "csrc",)
BUILD_PACKAGES = "make gcc clang llvm libbpf-dev libxdp-dev linux-libc-dev"
_LIBBPF_HEADER = Path("/usr/include/bpf/libbpf.h")
_LIBXDP_HEADER = Path("/usr/include/xdp/xsk.h")  # the AF_XDP transmit path (csrc/afxdp.c)


@dataclass(frozen=True)
class EngineBinary:
    """The engine to run and where it came from."""

    path: Path
    origin: str  # "setting", "package" or "built from <dir>"


def find_sources(candidates: tuple[Path, ...] = SOURCE_DIRS) -> Path | None:
    """The first directory of `candidates` holding the engine's sources (main.c and Makefile)."""
    for candidate in candidates:
        if (candidate / "main.c").is_file() and (candidate / "Makefile").is_file():
            return candidate
    return None


def missing_build_tools(which: Callable[[str], str | None] = shutil.which,
                        libbpf_header: Path = _LIBBPF_HEADER, libxdp_header: Path = _LIBXDP_HEADER) -> list[str]:
    """What the build lacks: tool names, "libbpf-dev" and "libxdp-dev" (empty: it can build)."""
    missing = [tool for tool in ("make", "cc", "clang") if which(tool) is None]
    if not libbpf_header.is_file():
        missing.append("libbpf-dev")
    if not libxdp_header.is_file():
        missing.append("libxdp-dev")
    return missing


def build_engine(executor: Executor, src_dir: Path, cache: Path) -> Path:
    """Build the engine from `src_dir` into `cache` (once per version of the sources)."""
    built = make_into_cache(executor, src_dir, cache, "vsgen", (ENGINE_NAME,), what="the vsgen engine",
                            missing=missing_build_tools, packages=BUILD_PACKAGES)
    return built[ENGINE_NAME]


def locate_engine(executor: Executor, setting: str = "", *, packaged: Path = PACKAGED_BINARY,
                  sources: tuple[Path, ...] = SOURCE_DIRS, cache: Path | None = None) -> EngineBinary:
    """The engine binary (see the module docstring); builds it when only sources exist."""
    if setting:
        path = Path(setting)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise PrerequisiteError(f"VSGEN_ENGINE {setting} is not an executable file")
        return EngineBinary(path, "setting")
    if packaged.is_file() and os.access(packaged, os.X_OK):
        return EngineBinary(packaged, "package")
    src = find_sources(sources)
    if src is None:
        raise PrerequisiteError(
            "the vsgen engine is neither installed nor buildable (no sources found): reinstall vsperf "
            "with `pip install .` from a source checkout"
        )
    return EngineBinary(build_engine(executor, src, cache or cache_root()), f"built from {src}")

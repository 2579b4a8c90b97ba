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

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vsperf.errors import CommandError, PrerequisiteError
from vsperf.executor import Executor

ENGINE_NAME = "vsgen-engine"
_PKG = Path(__file__).resolve().parent
PACKAGED_BINARY = _PKG / "bin" / ENGINE_NAME
SOURCE_DIRS = (_PKG / "csrc",)
SOURCE_SUFFIXES = (".c", ".h", ".S")
BUILD_PACKAGES = "make gcc clang llvm libbpf-dev libxdp-dev linux-libc-dev"
_LIBBPF_HEADER = Path("/usr/include/bpf/libbpf.h")
_LIBXDP_HEADER = Path("/usr/include/xdp/xsk.h")  # the AF_XDP transmit path (csrc/afxdp.c)
_BUILD_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class EngineBinary:
    """The engine to run and where it came from."""

    path: Path
    origin: str  # "setting", "package" or "built from <dir>"


def source_files(src_dir: Path) -> list[Path]:
    """The files the engine is built from, in a stable order."""
    files = [p for p in src_dir.iterdir() if p.is_file() and (p.suffix in SOURCE_SUFFIXES or p.name == "Makefile")]
    return sorted(files, key=lambda p: p.name)


def source_hash(src_dir: Path) -> str:
    """A short hash of the sources' names and contents: the cache key of their build."""
    digest = hashlib.sha256()
    for path in source_files(src_dir):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def find_sources(candidates: tuple[Path, ...] = SOURCE_DIRS) -> Path | None:
    """The first directory of `candidates` holding the engine's sources (main.c and Makefile)."""
    for candidate in candidates:
        if (candidate / "main.c").is_file() and (candidate / "Makefile").is_file():
            return candidate
    return None


def cache_root(env: dict[str, str] | None = None) -> Path:
    """Where built engines are kept: $XDG_CACHE_HOME/vsperf, else ~/.cache/vsperf."""
    env = dict(os.environ) if env is None else env
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", "/root")) / ".cache")
    return Path(base) / "vsperf"


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


def make_into_cache(
    executor: Executor,
    src_dir: Path,
    cache: Path,
    name: str,
    programs: tuple[str, ...],
    *,
    what: str,
    missing: Callable[[], list[str]],
    packages: str,
) -> dict[str, Path]:
    """`make OUT=<tmp>` in `src_dir` (package-data C sources), its `programs` moved atomically into
    cache/<name>-<source hash>/ (once per version of the sources; older versions pruned).

    The one build recipe of vsperf's native helpers (the vsgen engine, the UDP message-loss
    programs): `missing()` lists the build tools that are absent (fixed with `packages`), `what`
    names the build in errors.
    """
    target_dir = cache / f"{name}-{source_hash(src_dir)}"
    targets = {program: target_dir / program for program in programs}
    if all(t.is_file() and os.access(t, os.X_OK) for t in targets.values()):
        return targets
    absent = missing()
    if absent:
        raise PrerequisiteError(f"{what} must be built but {', '.join(absent)} is missing: apt-get install {packages}")
    target_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="build-", dir=target_dir) as tmp:
        try:
            executor.run(["make", "-s", "-C", str(src_dir), f"OUT={tmp}"], timeout_s=_BUILD_TIMEOUT_S)
        except CommandError as exc:
            raise PrerequisiteError(f"building {what} failed: {exc}") from exc
        for program, target in targets.items():
            built = Path(tmp) / program
            if not built.is_file():
                raise PrerequisiteError(f"building {what} in {src_dir} produced no {program}")
            # Atomic: a concurrent build of the same sources replaces it with an identical file.
            os.replace(built, target)
    _prune(cache, name, keep=target_dir)
    return targets


def _prune(cache: Path, name: str, keep: Path) -> None:
    """Remove the builds of older sources (a running program keeps its deleted file open)."""
    for old in cache.glob(f"{name}-*"):
        if old != keep and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


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

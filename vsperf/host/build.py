"""Building vsperf's native helpers (C sources shipped as package data) on this machine, into the
vsperf cache, keyed by a hash of their sources: the vsgen engine, the UDP message-loss programs.
A testbed host gets a copy of what is built here (`vsperf.host.Host.stage_file`)."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from vsperf.errors import CommandError, PrerequisiteError
from vsperf.executor import Executor

SOURCE_SUFFIXES = (".c", ".h", ".S")
_BUILD_TIMEOUT_S = 300.0


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


def cache_root(env: dict[str, str] | None = None) -> Path:
    """Where built engines are kept: $XDG_CACHE_HOME/vsperf, else ~/.cache/vsperf."""
    env = dict(os.environ) if env is None else env
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", "/root")) / ".cache")
    return Path(base) / "vsperf"


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

"""Where a command writes: every location checked before anything runs, and a write that fails
later (a disk that fills) turned into a clean stop rather than a traceback.

`check_output_dir` and `check_output_file` create nothing that stays: they expand `~`, bound the
path's length, find the nearest existing ancestor (which must be a directory), create and remove
a probe there (the only test that tells a read-only, pseudo (/proc, /sys) or full file system from
a writable one, root included), and require some free space. Their errors are one line (exit 2).

`OutputLost` is what a write that fails once the run has started raises: a `StopRun`, so the run
ends as interrupted (exit 1), its teardown runs and what it measured is kept.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path

from vsperf.errors import UserError
from vsperf.inputs import InputError, expand_path, file_kind
from vsperf.inputs.limits import MIB, size_text
from vsperf.signals import StopRun

RUN_MIN_FREE_BYTES = 16 * MIB  # a run's results directory: results, CSV, logs, plots, the PDF
FILE_MIN_FREE_BYTES = 1 * MIB  # one file (xunit.xml, compare --json)
PATH_MAX_BYTES = 4096  # Linux's PATH_MAX
_PROBE_PREFIX = ".vsperf-probe-"


class OutputError(UserError):
    """An output location vsperf cannot write: one line naming it, the problem and the fix."""


class OutputLost(StopRun):
    """An output could not be written once the run had started (a full disk, a device gone):
    the run stops as interrupted and keeps what it measured."""


def describe(exc: OSError) -> str:
    """An OSError as a person reads it: 'No space left on device'."""
    return exc.strerror or str(exc) or type(exc).__name__


def lost(what: str, exc: OSError) -> OutputLost:
    """The OutputLost of a failed write of `what` (a path, or 'results.json')."""
    return OutputLost(f"cannot write {what}: {describe(exc)}")


def _checked_length(path: Path, what: str) -> None:
    if len(os.fsencode(path)) >= PATH_MAX_BYTES:
        raise OutputError(f"{what} {path}: the path is longer than the {PATH_MAX_BYTES} bytes Linux allows; "
                          f"choose a shorter one")
    for part in path.parts:
        if len(os.fsencode(part)) > 255:
            raise OutputError(f"{what} {path}: a name in it is longer than the 255 bytes a file system allows; "
                              f"choose a shorter one")


def _nearest_existing(path: Path, what: str) -> Path:
    """The deepest existing ancestor of `path` (or `path`), which must be a directory."""
    for candidate in (path, *path.parents):
        try:
            mode = os.stat(candidate).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue  # not there, or a file further up: found as the nearest existing ancestor
        except OSError as exc:
            raise OutputError(f"{what} {path}: cannot look at {candidate}: {describe(exc)}") from None
        if not os.path.isdir(candidate):
            where = "is" if candidate == path else f"is inside {candidate}, which is"
            raise OutputError(f"{what} {path} {where} {file_kind(mode)}, not a directory; choose another place")
        return candidate
    raise OutputError(f"{what} {path}: no part of the path exists")


def _probe(folder: Path, path: Path, what: str) -> None:
    """Create and remove a directory in `folder`: the one test a read-only, pseudo or full file
    system fails (for root too, who passes every permission check)."""
    try:
        probe = tempfile.mkdtemp(prefix=_PROBE_PREFIX, dir=folder)
    except OSError as exc:
        hint = " (not a disk: choose a directory on one)" if exc.errno in (errno.ENOENT, errno.EPERM) else ""
        raise OutputError(f"{what} {path}: cannot create anything in {folder}: {describe(exc)}{hint}; "
                          f"choose a writable directory") from None
    with contextlib.suppress(OSError):
        os.rmdir(probe)


def _free_space(folder: Path, path: Path, what: str, min_free_bytes: int) -> None:
    try:
        stats = os.statvfs(folder)
    except OSError:
        return  # no statistics (some network file systems): the writes themselves will tell
    free = stats.f_bavail * stats.f_frsize
    if free < min_free_bytes:
        raise OutputError(f"{what} {path}: only {size_text(free)} free on its file system, vsperf needs "
                          f"{size_text(min_free_bytes)}; free some space or choose another place")


def check_output_dir(path: Path | str, what: str, *, min_free_bytes: int = RUN_MIN_FREE_BYTES) -> Path:
    """The absolute directory `path` (~ expanded), after checking that it is, or can be created
    as, a writable directory with `min_free_bytes` free; nothing is left behind. OutputError
    naming `what` ('--results-dir', 'LOG_DIR', '--xunit-dir', ...) otherwise."""
    try:
        full = expand_path(path, f"{what} {path}").absolute()
    except InputError as exc:
        raise OutputError(str(exc)) from None
    _checked_length(full, what)
    folder = _nearest_existing(full, what)
    _probe(folder, full, what)
    _free_space(folder, full, what, min_free_bytes)
    return full


def check_output_file(path: Path | str, what: str, *, min_free_bytes: int = FILE_MIN_FREE_BYTES) -> Path:
    """The absolute file `path`: its folder must exist and be writable, and the file must be
    absent or a regular file (it is replaced). OutputError naming `what` otherwise."""
    try:
        full = expand_path(path, f"{what} {path}").absolute()
    except InputError as exc:
        raise OutputError(str(exc)) from None
    _checked_length(full, what)
    with contextlib.suppress(FileNotFoundError):
        mode = os.stat(full).st_mode
        if os.path.isdir(full) or not os.path.isfile(full):
            raise OutputError(f"{what} {path} is {file_kind(mode)}; give the path of a file to write")
    if not full.parent.is_dir():
        folder = _nearest_existing(full.parent, what)
        raise OutputError(f"{what} {path}: directory {full.parent} does not exist (under {folder}); create it "
                          f"first or choose another place")
    _probe(full.parent, full, what)
    _free_space(full.parent, full, what, min_free_bytes)
    return full

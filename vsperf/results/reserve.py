"""Room kept on the results' file system for the last write of results.json.

A run that fills its disk must still close results.json (status interrupted, an end time) with
what it measured. The writer keeps a reserve file next to it, a little bigger than results.json
and grown with it (posix_fallocate: real blocks, allocated at once); when a write fails for want
of space, the reserve is released and the closing write fits in the room it held. Growing the
reserve is itself the first write to fail on a filling disk, so the run stops while that room
is still there. The reserve is removed when the run ends.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

RESERVE_MARGIN_BYTES = 64 * 1024  # above results.json's size: its closing write adds a few bytes


class SpaceReserve:
    """A file of at least `size_bytes + RESERVE_MARGIN_BYTES` allocated bytes at `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.size_bytes = 0

    def ensure(self, size_bytes: int) -> None:
        """Make the reserve hold at least `size_bytes` plus the margin (grown in steps of the
        margin); OSError (ENOSPC) when the file system has not that much room left."""
        need = size_bytes + RESERVE_MARGIN_BYTES
        if need <= self.size_bytes:
            return
        want = need + RESERVE_MARGIN_BYTES
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.posix_fallocate(fd, 0, want)
        finally:
            os.close(fd)
        self.size_bytes = want

    def release(self) -> None:
        """Give the room back (remove the file); safe to call twice."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self.size_bytes = 0

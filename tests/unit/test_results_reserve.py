"""The room kept for results.json's closing write on a file system that fills."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from vsperf.results.reserve import RESERVE_MARGIN_BYTES, SpaceReserve


def test_grows_with_results_json_in_steps_and_is_released(tmp_path: Path) -> None:
    reserve = SpaceReserve(tmp_path / ".reserve")
    reserve.ensure(1000)
    first = reserve.size_bytes
    assert first >= 1000 + RESERVE_MARGIN_BYTES
    assert os.stat(reserve.path).st_blocks * 512 >= first  # real blocks, not a sparse file
    reserve.ensure(2000)  # still within the margin: no new allocation
    assert reserve.size_bytes == first
    reserve.ensure(first)
    assert reserve.size_bytes > first
    reserve.release()
    reserve.release()  # twice is fine
    assert not reserve.path.exists()


def test_a_full_file_system_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int, offset: int, length: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    with pytest.raises(OSError, match="No space left"):
        SpaceReserve(tmp_path / ".reserve").ensure(10)

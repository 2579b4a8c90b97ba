"""The run's overall.log: a disk that fills turns it off with one line, never a traceback per record."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from vsperf.ui.logsetup import RunLogHandler, add_file_log


def test_everything_goes_to_the_file(tmp_path: Path) -> None:
    handler = add_file_log(tmp_path / "run" / "overall.log")
    logger = logging.getLogger("vsperf.test.file")
    logger.setLevel(logging.DEBUG)
    try:
        logger.debug("a debug line")
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
    assert "a debug line" in (tmp_path / "run" / "overall.log").read_text()


def test_a_full_disk_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    handler = RunLogHandler(tmp_path / "overall.log", encoding="utf-8")

    class FullStream:
        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

        def flush(self) -> None:
            raise OSError(28, "No space left on device")

        def close(self) -> None:
            pass

    handler.stream.close()
    handler.stream = FullStream()  # type: ignore[assignment]
    logger = logging.getLogger("vsperf.test.full")
    logger.addHandler(handler)
    try:
        for i in range(3):
            logger.error("record %d", i)
    finally:
        logger.removeHandler(handler)
        handler.close()  # flushing the full stream does not raise either
    err = capsys.readouterr().err
    assert err == (f"vsperf: {tmp_path / 'overall.log'}: cannot write the run's log (No space left on device); it "
                   f"goes on on the console only\n")

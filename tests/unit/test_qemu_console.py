"""vsperf.vnf.qemu.console: waiting for guest output in QEMU's console log, and its errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vsperf.errors import DeploymentError
from vsperf.vnf.qemu.console import ConsoleTimeout, GuestDied, SerialConsole, clean, last_lines


def test_clean_strips_terminal_escapes() -> None:
    assert clean("\x1b[2J\x1b[1;1HPort statistics\r\n") == "Port statistics\n"
    assert last_lines("a\n\n\x1b[6nb\r\nc\n", 2) == ["b", "c"]


def test_wait_for_finds_patterns_after_an_offset(tmp_path: Path) -> None:
    log = tmp_path / "console.log"
    log.write_text("login: \nroot@vm:~# \nVSPERF-GUEST-FORWARDING loopback=testpmd fwd=io\n")
    console = SerialConsole(log, "qemu vm0")
    first = console.wait_for([r"root@\S+#"], timeout_s=1, alive=lambda: True)
    found = console.wait_for([r"VSPERF-GUEST-FAILED", r"VSPERF-GUEST-FORWARDING (\S+)"], timeout_s=1,
                             alive=lambda: True, offset=first.offset)
    assert found.index == 1 and found.match.group(1) == "loopback=testpmd"


def test_timeout_reports_the_last_console_lines(tmp_path: Path) -> None:
    log = tmp_path / "console.log"
    log.write_text("".join(f"line {i}\n" for i in range(30)))
    console = SerialConsole(log, "qemu vm1")
    with pytest.raises(ConsoleTimeout, match=r"qemu vm1: no marker within 0.2 s \(GUEST_TIMEOUT\)") as err:
        console.wait_for(["never"], timeout_s=0.2, alive=lambda: True, what="marker")
    assert "line 29" in str(err.value) and "line 5\n" not in str(err.value)


def test_a_dead_guest_is_reported_at_once(tmp_path: Path) -> None:
    console = SerialConsole(tmp_path / "missing.log", "qemu vm0")
    with pytest.raises(GuestDied, match="nothing on the console"):
        console.wait_for(["x"], timeout_s=30, alive=lambda: False)


def test_send_line_types_into_stdin(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    console = SerialConsole(tmp_path / "log", "qemu vm0")
    console.attach(open(write_end, "wb"), None)  # noqa: SIM115 (the console closes it)
    console.send_line("root")
    assert os.read(read_end, 100) == b"root\r"
    console.close()
    assert os.read(read_end, 100) == b""  # QEMU's end of input
    os.close(read_end)
    with pytest.raises(DeploymentError, match="not connected"):
        console.send_line("again")


def test_output_reaches_the_log_as_it_comes_even_without_a_newline(tmp_path: Path) -> None:
    """A login prompt has no newline: the reader must not wait for one, and it keeps reading, so
    QEMU never blocks on a full pipe (the guest's serial output would stop)."""
    read_end, write_end = os.pipe()
    log = tmp_path / "console.log"
    console = SerialConsole(log, "qemu vm0")
    with open(read_end, "rb") as stdout:
        console.attach(None, stdout)
        os.write(write_end, b"x" * 200_000)  # far more than a pipe holds
        os.write(write_end, b"\r\nvm login: ")
        found = console.wait_for([r"login: $"], timeout_s=10, alive=lambda: True)
        os.close(write_end)
        console.close()
    assert found.index == 0 and log.stat().st_size == 200_000 + len(b"\r\nvm login: ")

"""vsperf.vnf.qemu.console: waiting for guest output in QEMU's console log, and its errors."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from vsperf.vnf.qemu.console import ConsoleTimeout, GuestDied, SerialConsole, clean, last_lines


def test_clean_strips_terminal_escapes() -> None:
    assert clean("\x1b[2J\x1b[1;1HPort statistics\r\n") == "Port statistics\n"
    assert last_lines("a\n\n\x1b[6nb\r\nc\n", 2) == ["b", "c"]


def test_wait_for_finds_patterns_after_an_offset(tmp_path: Path) -> None:
    log = tmp_path / "console.log"
    log.write_text("login: \nroot@vm:~# \nVSPERF-GUEST-FORWARDING loopback=testpmd fwd=io\n")
    console = SerialConsole(tmp_path / "s", log, "qemu vm0")
    first = console.wait_for([r"root@\S+#"], timeout_s=1, alive=lambda: True)
    found = console.wait_for([r"VSPERF-GUEST-FAILED", r"VSPERF-GUEST-FORWARDING (\S+)"], timeout_s=1,
                             alive=lambda: True, offset=first.offset)
    assert found.index == 1 and found.match.group(1) == "loopback=testpmd"


def test_timeout_reports_the_last_console_lines(tmp_path: Path) -> None:
    log = tmp_path / "console.log"
    log.write_text("".join(f"line {i}\n" for i in range(30)))
    console = SerialConsole(tmp_path / "s", log, "qemu vm1")
    with pytest.raises(ConsoleTimeout, match=r"qemu vm1: no marker within 0.2 s \(GUEST_TIMEOUT\)") as err:
        console.wait_for(["never"], timeout_s=0.2, alive=lambda: True, what="marker")
    assert "line 29" in str(err.value) and "line 5\n" not in str(err.value)


def test_a_dead_guest_is_reported_at_once(tmp_path: Path) -> None:
    console = SerialConsole(tmp_path / "s", tmp_path / "missing.log", "qemu vm0")
    with pytest.raises(GuestDied, match="nothing on the console"):
        console.wait_for(["x"], timeout_s=30, alive=lambda: False)


def test_send_line_types_into_the_socket(tmp_path: Path) -> None:
    path = tmp_path / "serial.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    received: list[bytes] = []

    def accept() -> None:
        conn, _ = server.accept()
        received.append(conn.recv(100))
        conn.close()

    thread = threading.Thread(target=accept)
    thread.start()
    console = SerialConsole(path, tmp_path / "log", "qemu vm0")
    console.send_line("root")
    thread.join(timeout=5)
    console.close()
    server.close()
    assert received == [b"root\r"]


def test_waiting_reads_the_socket_so_qemu_never_blocks_on_it(tmp_path: Path) -> None:
    """QEMU writes the guest's output to the connected socket byte by byte: unread, the socket
    fills up and QEMU holds the guest's serial output (a real login hung that way mid-line)."""
    path = tmp_path / "serial.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    log = tmp_path / "console.log"
    log.write_text("")
    written: list[int] = []

    def qemu() -> None:
        conn, _ = server.accept()
        conn.settimeout(5)
        conn.recv(100)  # the typed line
        total = 0
        try:
            for _ in range(2000):  # one byte per send, as QEMU's serial does: ~1 KB of buffer each
                total += conn.send(b"x")
        except OSError:
            pass  # the peer never read: the buffer is full
        written.append(total)
        with log.open("a") as f:
            f.write("[root@vm ~]# \n")
        conn.close()

    thread = threading.Thread(target=qemu)
    thread.start()
    console = SerialConsole(path, log, "qemu vm0")
    console.send_line("ip link set br0 up")
    console.wait_for([r"root@vm ~\]#"], timeout_s=10, alive=lambda: True)
    thread.join(timeout=10)
    console.close()
    server.close()
    assert written == [2000]

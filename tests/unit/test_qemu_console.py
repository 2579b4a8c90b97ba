"""vsperf.vnf.qemu.console: waiting for guest output in QEMU's console log, and its errors."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from vsperf.errors import DeploymentError
from vsperf.executor import LocalExecutor
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
from vsperf.host.release import release
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


def test_a_console_process_on_its_host_talks_over_its_pipes_and_logs_only_stderr_there(tmp_path: Path) -> None:
    # A guest's console as the QEMU VNF starts it (Host.spawn with pipes), on this machine as a
    # testbed host `dut`: stdin and stdout are the console, stderr goes to a log on the host.
    run_id = f"q{os.getpid() % 10**6}"
    journal = Journal(run_id, root=tmp_path / "state")
    host = Host("dut", LocalExecutor(), RunNames(run_id), journal)
    try:
        log = host.log_path("guest.qemu.log")
        assert str(log) == f"/tmp/vsperf-{run_id}-logs/guest.qemu.log"
        # a stand-in for QEMU's serial console: a prompt without a newline, then echo what is typed
        # (4 bytes: a line ends in a carriage return, as typed on a terminal)
        script = 'printf "login: "; echo warning >&2; line=$(head -c 4); echo "typed $line"; exec sleep 30'
        proc = host.spawn("qemu vm0", ["sh", "-c", script], log_path=log, pipes=True)
        console = SerialConsole(tmp_path / "guest0-console.log", "qemu vm0")
        console.attach(proc.stdin, proc.stdout)
        seen = console.wait_for([r"login: $"], timeout_s=10, alive=proc.alive)
        console.send_line("root")
        console.wait_for([r"typed root"], timeout_s=10, alive=proc.alive, offset=seen.offset)
        assert [(e.host, e.name, e.pid) for e in Journal.load(journal.path) if e.kind == "process"] == [
            ("dut", "qemu vm0", proc.pid)]
        deadline = time.monotonic() + 10
        while "warning" not in host.read_text(log) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert host.read_text(log) == "warning\n"  # stdout is the console's, not the log's
        host.stop_process(proc)
        console.close()
        assert not proc.alive() and [e for e in journal if e.kind == "process"] == []
        assert "typed root" in (tmp_path / "guest0-console.log").read_text()
    finally:
        release(journal, {"dut": host.executor})  # the process if an assertion failed, and the directory
    assert not Path(f"/tmp/vsperf-{run_id}-logs").exists()

"""What a QEMU guest asks of a testbed's DUT host (vsperf.testbed.vnf_host.TestbedVnfHost): a process
whose stdio is a console (stderr to a log on the host), files copied there, taps journaled first."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import cast

from test_testbed_switch_host import Host
from test_testbed_vnf_host import _local_host, _session
from vsperf.testbed.vnf_host import TestbedVnfHost

from vsperf.executor import Executor
from vsperf.vnf.qemu.console import SerialConsole


def test_a_console_process_talks_over_its_pipes_and_logs_only_stderr_on_the_host(tmp_path: Path) -> None:
    run_id = f"q{os.getpid() % 10**6}"
    host, session = _local_host(tmp_path, run_id)
    try:
        log = host.log_path("guest.qemu.log")
        # a stand-in for QEMU's serial console: a prompt without a newline, then echo what is typed
        # (4 bytes: a line ends in a carriage return, as typed on a terminal)
        script = 'printf "login: "; echo warning >&2; line=$(head -c 4); echo "typed $line"; exec sleep 30'
        proc, stdin, stdout = host.spawn_console("qemu vm0", ["sh", "-c", script], log_path=log)
        console = SerialConsole(tmp_path / "guest0-console.log", "qemu vm0")
        console.attach(stdin, stdout)
        seen = console.wait_for([r"login: $"], timeout_s=10, alive=proc.alive)
        console.send_line("root")
        console.wait_for([r"typed root"], timeout_s=10, alive=proc.alive, offset=seen.offset)
        assert [(h, p, label) for h, p, _t, label in session.journal.processes] == [("dut", proc.pid, "qemu vm0")]
        deadline = time.monotonic() + 10
        while "warning" not in host.read_text(log) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert host.read_text(log) == "warning\n"  # stdout is the console's, not the log's
        host.stop_process(proc)
        console.close()
        assert not proc.alive() and session.journal.processes == []
        assert "typed root" in (tmp_path / "guest0-console.log").read_text()
    finally:
        host.remove_dirs()


def test_files_are_copied_into_the_runs_directory_and_taps_journaled_before_they_exist(tmp_path: Path) -> None:
    recorder = Host()
    session = _session(tmp_path, recorder)
    host = TestbedVnfHost(session, "dut", "abc123")
    image = tmp_path / "vmlinuz"
    image.write_text("kernel")
    staged = host.stage_file(image, "k1-vmlinuz")
    assert staged == Path("/tmp/vsperf-abc123-files/k1-vmlinuz")
    assert recorder.files[str(staged)] == "kernel" and recorder.modes[str(staged)] == 0o400
    assert image.read_text() == "kernel"  # the original is untouched
    journal_seen: list[list[tuple[str, str]]] = []
    run = recorder.run

    def recording_run(argv: list[str], **kw: object) -> object:
        journal_seen.append(list(session.journal.links))
        return run(argv, **kw)  # type: ignore[arg-type]

    recorder.run = recording_run  # type: ignore[method-assign,assignment]
    host.add_tap("vstabc123v0s0", mtu_bytes=1500)
    add = recorder.calls.index(["ip", "tuntap", "add", "dev", "vstabc123v0s0", "mode", "tap"])
    assert ("dut", "vstabc123v0s0") in journal_seen[add]
    assert ["ip", "link", "set", "dev", "vstabc123v0s0", "mtu", "1500", "up"] in recorder.calls
    host.remove_tap("vstabc123v0s0")
    assert recorder.calls[-1] == ["ip", "link", "del", "dev", "vstabc123v0s0"] and session.journal.links == []
    assert cast(Executor, recorder).host == "dut"

"""A pktgen process on the generator host: its command line, and its life through the host (the pty
launcher, the Lua socket on the host's loopback, its console calmed, its stop), against a
stand-in pktgen (no DPDK, no root), on this machine and on one posing as a testbed's host."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from fake_pktgen import fake_pktgen, free_port
from gen_host import generator_host, recorded

from vsperf.errors import TrafficGenError
from vsperf.executor import CommandLog
from vsperf.host.host import Host
from vsperf.trafficgen.pktgen import ptyexec
from vsperf.trafficgen.pktgen.process import (
    CALM_SCRIPT,
    CONSOLE_NICE,
    TIMER_NICE,
    PktgenConfig,
    PktgenProcess,
    group_by_netns,
    pktgen_argv,
)

LAUNCHER = ("python3", "/tmp/vsperf-ab12cd-files/ptyexec.py")


def _cfg(**kw: object) -> PktgenConfig:
    base: dict[str, object] = dict(
        binary="/opt/pktgen/bin/pktgen", file_prefix="vspab12cdpg0", memory_mb=1536, lcores="0@0,1@1",
        driver="af_packet", ifnames=("vspab12cdg0",), lua_port=22022,
    )
    base.update(kw)
    return PktgenConfig(**base)  # type: ignore[arg-type]


def test_argv_runs_pktgen_under_the_pty_launcher_with_private_eal() -> None:
    argv = pktgen_argv(_cfg(), LAUNCHER)
    assert argv[:3] == ["python3", "/tmp/vsperf-ab12cd-files/ptyexec.py", "/opt/pktgen/bin/pktgen"]
    eal, app = argv[3:argv.index("--")], argv[argv.index("--") + 1:]
    assert eal[:2] == ["--lcores", "0@0,1@1"]
    for arg in ("--no-huge", "--legacy-mem", "--no-pci", "--file-prefix=vspab12cdpg0"):
        assert arg in eal
    assert eal[eal.index("-m") + 1] == "1536"
    assert eal[-2:] == ["--vdev", "net_af_packet0,iface=vspab12cdg0"]
    # the Lua socket on the host's loopback only: nothing listens on the host's network
    assert app == ["-P", "-g", "127.0.0.1:22022", "-m", "1.0"]


def test_two_ports_and_extra_args() -> None:
    argv = pktgen_argv(_cfg(ifnames=("a0", "a1"), driver="af_xdp", extra_eal_args=("--log-level=7",)), LAUNCHER)
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "--vdev"] == ["net_af_xdp0,iface=a0",
                                                                          "net_af_xdp1,iface=a1"]
    assert argv[argv.index("--") - 1] == "--log-level=7"
    assert argv[-1] == "1.[0-1]"
    assert pktgen_argv(_cfg(core_map="[1:2].0"), LAUNCHER)[-1] == "[1:2].0"


@pytest.mark.parametrize("bad", [dict(ifnames=()), dict(lua_port=0), dict(lcores="0@0; rm -rf /")])
def test_config_validates(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        _cfg(**bad)


def test_group_by_netns_one_process_per_namespace() -> None:
    assert group_by_netns(["g0", "g1"]) == [("g0", [0]), ("g1", [1])]
    assert group_by_netns(["s", "s", None]) == [("s", [0, 1]), (None, [2])]


# A process shaped like pktgen: its main thread and one more thread named "pktgen" (the timer).
_PKTGEN_LIKE = """
import os, sys, threading, time
def timer():
    with open(f"/proc/self/task/{threading.get_native_id()}/comm", "w") as fh:
        fh.write("pktgen")
    print(threading.get_native_id(), flush=True)
    time.sleep(30)
threading.Thread(target=timer, daemon=True).start()
time.sleep(30)
"""


def test_the_calm_script_lowers_the_console_and_the_timer_thread() -> None:
    proc = subprocess.Popen([sys.executable, "-c", _PKTGEN_LIKE], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        timer = int(proc.stdout.readline())
        done = subprocess.run(["sh", "-c", CALM_SCRIPT, "sh", str(proc.pid), str(CONSOLE_NICE), str(TIMER_NICE)],
                              capture_output=True, text=True, check=True, timeout=10)
        assert done.stdout.split() == [str(proc.pid), str(timer)]
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == CONSOLE_NICE
        assert os.getpriority(os.PRIO_PROCESS, timer) == TIMER_NICE
        assert os.sched_getaffinity(timer) == os.sched_getaffinity(proc.pid)
    finally:
        proc.kill()
        proc.wait()


# --- a pktgen through its host ---------------------------------------------------------------------


@pytest.fixture(params=["local", "gen"])
def host(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Host]:
    with generator_host(tmp_path, request.param, CommandLog(tmp_path / "commands.log")) as h:
        yield h


def _process(host: Host, binary: Path) -> PktgenProcess:
    cfg = _cfg(binary=str(binary), file_prefix=host.dpdk_file_prefix("pg0"), ifnames=("lo",), lua_port=free_port())
    return PktgenProcess(host, cfg, netns=None, label="pktgen 0")


def test_start_reaches_the_lua_socket_and_stop_quits_it(tmp_path: Path, host: Host) -> None:
    proc = _process(host, fake_pktgen(tmp_path))
    assert proc.label == ("pktgen 0" if host.local else "pktgen 0 on host gen")
    try:
        proc.start(10.0)
        (entry,) = recorded(host, "process")
        assert entry.name == proc.label and proc.proc is not None and entry.pid == proc.proc.pid
        pktgen = psutil.Process(entry.pid)
        # the pty launcher exec'ed pktgen under the PID vsperf recorded (a terminal on its stdin)
        launcher = str(Path(ptyexec.__file__)) if host.local else str(host.names.run_dir("files") / "ptyexec.py")
        assert pktgen.cmdline()[1] == str(tmp_path / "fake-pktgen") and launcher not in pktgen.cmdline()
        assert os.getpriority(os.PRIO_PROCESS, entry.pid) == CONSOLE_NICE  # its console calmed
        proc.check_alive()
    finally:
        proc.stop()
    log = Path(host.names.run_dir("logs") / "pktgen-0.log").read_text()
    assert "request vsperf_call" in log and "pktgen.screen('off')" in log and "pktgen.quit()" in log
    assert recorded(host, "process") == []  # it quit by itself, and is forgotten
    commands = (tmp_path / "commands.log").read_text()
    assert f"rm -rf -- /var/run/dpdk/{proc.cfg.file_prefix}" in commands  # its DPDK runtime directory
    assert f"python3 {launcher} {tmp_path / 'fake-pktgen'} --lcores" in commands
    proc.stop()  # twice is fine


def test_a_pktgen_that_exits_while_starting_is_reported_with_its_log(tmp_path: Path, host: Host) -> None:
    proc = _process(host, fake_pktgen(tmp_path, fail="fake pktgen: no ports"))
    where = "" if host.local else " on host gen"
    with pytest.raises(TrafficGenError, match=rf"^pktgen 0{where} exited \(code 3\) while starting: "
                                              r"fake pktgen: no ports$"):
        proc.start(10.0)
    proc.stop()
    assert recorded(host, "process") == []


def test_a_pktgen_that_died_is_named_with_its_log(tmp_path: Path, host: Host) -> None:
    proc = _process(host, fake_pktgen(tmp_path))
    try:
        proc.start(10.0)
        assert proc.proc is not None
        proc.proc.signal(9)
        proc.proc.wait(5.0)
        with pytest.raises(TrafficGenError, match=rf"^{proc.label} \(pid {proc.proc.pid}\) died: argv "):
            proc.check_alive()
    finally:
        proc.stop()
    assert recorded(host, "process") == []

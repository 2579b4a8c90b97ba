"""Starting pktgen: its command line, the pty launcher, namespace grouping, transmit timing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vsperf.trafficgen.pktgen.process import PTYEXEC_MODULE, PktgenConfig, group_by_netns, pktgen_argv
from vsperf.trafficgen.pktgen.txclock import Sample, transmit_window


def _cfg(**kw: object) -> PktgenConfig:
    base: dict[str, object] = dict(
        binary="/opt/pktgen/bin/pktgen", file_prefix="vspab12cdpg0", memory_mb=1536, lcores="0@0,1@1",
        driver="af_packet", ifnames=("vspab12cdg0",), lua_port=22022,
    )
    base.update(kw)
    return PktgenConfig(**base)  # type: ignore[arg-type]


def test_argv_runs_pktgen_under_the_pty_launcher_with_private_eal() -> None:
    argv = pktgen_argv(_cfg(), ("/usr/bin/python3", "-m", PTYEXEC_MODULE))
    assert argv[:4] == ["/usr/bin/python3", "-m", PTYEXEC_MODULE, "/opt/pktgen/bin/pktgen"]
    eal, app = argv[4:argv.index("--")], argv[argv.index("--") + 1:]
    assert eal[:2] == ["--lcores", "0@0,1@1"]
    for arg in ("--no-huge", "--legacy-mem", "--no-pci", "--file-prefix=vspab12cdpg0"):
        assert arg in eal
    assert eal[eal.index("-m") + 1] == "1536"
    assert eal[-2:] == ["--vdev", "net_af_packet0,iface=vspab12cdg0"]
    assert app == ["-P", "-g", "localhost:22022", "-m", "1.0"]


def test_two_ports_and_extra_args() -> None:
    argv = pktgen_argv(_cfg(ifnames=("a0", "a1"), driver="af_xdp", extra_eal_args=("--log-level=7",)))
    assert "net_af_xdp1,iface=a1" in argv
    assert argv[argv.index("--") - 1] == "--log-level=7"
    assert argv[-1] == "1.[0-1]"
    assert pktgen_argv(_cfg(core_map="[1:2].0"))[-1] == "[1:2].0"


@pytest.mark.parametrize("bad", [dict(ifnames=()), dict(lua_port=0), dict(lcores="0@0; rm -rf /")])
def test_config_validates(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        _cfg(**bad)


def test_group_by_netns_one_process_per_namespace() -> None:
    assert group_by_netns(["g0", "g1"]) == [("g0", [0]), ("g1", [1])]
    assert group_by_netns(["s", "s", None]) == [("s", [0, 1]), (None, [2])]


def test_ptyexec_gives_the_program_a_terminal_on_stdin(tmp_path: Path) -> None:
    """pktgen exits at once without a terminal on stdin; `test -t 0` checks for one."""
    run = subprocess.run([sys.executable, "-m", PTYEXEC_MODULE, "test", "-t", "0"], stdin=subprocess.DEVNULL,
                         timeout=30, check=False)
    assert run.returncode == 0
    plain = subprocess.run(["test", "-t", "0"], stdin=subprocess.DEVNULL, check=False)
    assert plain.returncode == 1


def test_ptyexec_reports_a_missing_program() -> None:
    run = subprocess.run([sys.executable, "-m", PTYEXEC_MODULE, "/nonexistent/pktgen"], capture_output=True,
                         text=True, timeout=30, check=False)
    assert run.returncode == 127
    assert "cannot run /nonexistent/pktgen" in run.stderr


def _series(points: list[tuple[float, int]]) -> list[Sample]:
    return [Sample(t, n) for t, n in points]


def test_transmit_window_over_the_whole_transmission() -> None:
    # counter moves between 0.1 and 0.2 (start ~0.15) and last changes between 1.1 and 1.2 (~1.15)
    samples = _series([(0.0, 100), (0.1, 100), (0.2, 150), (0.6, 600), (1.1, 1050), (1.2, 1100), (1.3, 1100)])
    window = transmit_window(samples)
    assert window is not None
    assert window.frames == 1000
    assert window.seconds == pytest.approx(1.0)
    assert window.rate_fps == pytest.approx(1000)


def test_transmit_window_from_a_mark_skips_the_irregular_start() -> None:
    # a first burst of 64 at ~0.05, the rate from the mark at 0.2, the last frame at ~1.2
    samples = _series([(0.0, 0), (0.1, 64), (0.2, 64), (0.3, 164), (1.15, 1014), (1.25, 1064), (1.35, 1064)])
    window = transmit_window(samples, since_s=0.2)
    assert window is not None
    assert window.frames == 1000
    assert window.seconds == pytest.approx(1.0)


def test_transmit_window_when_nothing_was_sent() -> None:
    assert transmit_window(_series([(0.0, 5), (0.1, 5)])) is None
    assert transmit_window(_series([(0.0, 5)])) is None

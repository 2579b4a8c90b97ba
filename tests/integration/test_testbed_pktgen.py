"""`vsperf phy2phy_tput --trafficgen pktgen --testbed`: Pktgen-DPDK started by vsperf on sshd host B
(the generator host) over SSH, on B's cable ends (net_af_packet), its Lua socket on B's loopback
reached through the SSH connection; the Linux bridge on sshd host A; real frames over the test's
veth "cables".

pktgen is not packaged: these tests run the pktgen named by PKTGEN_BINARY, or `pktgen` on PATH,
and skip saying so when there is none (docs/trafficgens.rst says how to build it). The hosts
share this machine's filesystem and process table: "nothing left" is checked there (no pktgen
of the run, no DPDK runtime directory, no run directory) and in the hosts' namespaces; that
pktgen ran on host B over SSH is checked in the command log. pktgen takes ~1.5 GiB of EAL
memory per port without hugepages: one run at a time.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from test_pktgen_lab import pktgen_binary
from testbed_bed import Bed, assert_nothing_left, finish, open_bed, running

from vsperf.trafficgen.pktgen.counters import COUNTERS_SCRIPT

pytestmark = pytest.mark.root

# 0.02 % of 10 Gbit/s at 64 B: ~3,000 frames/s in all, inside what pktgen's af_packet ports reach
# on a shared 2-CPU machine.
PARAMS = ";TRAFFICGEN_RESIDUAL_WAIT_S=1;TRAFFICGEN_RFC2544_MAX_RATE_PERCENT=0.02;" \
         "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT=0.01"


def skip_without_pktgen() -> None:
    """Skip the test where no pktgen is installed (Debian has none: the user builds it)."""
    if pktgen_binary() is None:
        pytest.skip("pktgen is not installed: set PKTGEN_BINARY or put a pktgen built with Lua on PATH "
                    "(docs/trafficgens.rst)")


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    skip_without_pktgen()
    with open_bed(tmp_path_factory.mktemp("testbed_pktgen"), "v9p", 116) as opened:
        yield opened


def pktgen_args(bed: Bed, results: Path, params: str = "") -> list[str]:
    binary = pktgen_binary()
    return bed.args(results, "(64,)", trafficgen="pktgen",
                    params=f";TRAFFICGEN_PKTGEN_BINARY={binary}{PARAMS}{params}")


def pktgens_of(run_id: str | None = None) -> dict[int, str]:
    """PID -> run id of the pktgen processes vsperf started on a testbed host (their DPDK file
    prefix vsperf-RUNID-pktgenN; the shared process table)."""
    found: dict[int, str] = {}
    for proc in psutil.process_iter(["cmdline"]):
        match = re.search(r"--file-prefix=vsp([0-9a-f]{6})pg\d", " ".join(proc.info["cmdline"] or []))
        if match and (run_id is None or match.group(1) == run_id):
            found[proc.pid] = match.group(1)
    return found


def counter_loops(bed: Bed) -> list[int]:
    """PIDs of the transmit-counter loops reading this bed's host B ports."""
    return [p.pid for p in psutil.process_iter(["cmdline"])
            if COUNTERS_SCRIPT in (p.info["cmdline"] or []) and any(
                f"/sys/class/net/{b}/" in " ".join(p.info["cmdline"]) for _, b in bed.cables)]


def assert_no_pktgen_left(bed: Bed, run_id: str) -> None:
    assert pktgens_of(run_id) == {}
    assert counter_loops(bed) == []
    assert list(Path("/var/run/dpdk").glob(f"vsp{run_id}*")) == []
    assert list(Path("/tmp").glob(f"vsperf-{run_id}-*")) == []


def test_pktgen_on_the_generator_host(bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "run"
    proc = bed.vsperf(*pktgen_args(bed, results), cwd=tmp_path)
    _out, err = finish(proc, 600)
    assert proc.returncode == 0, err
    data = json.loads((results / "results.json").read_text())
    test = data["tests"][0]
    assert test["status"] == "passed" and data["simulated"] is False, test["error"]
    trials = test["results"][0]["trials"]
    # real frames: sent by pktgen on host B, through host A's bridge, counted by pktgen on host B
    assert trials and all(t["tx_frames"] > 0 for t in trials)
    assert all(0 < t["rx_frames"] <= t["tx_frames"] for t in trials)
    gen = next(c for c in test["components"] if c["role"] == "trafficgen")
    assert gen["name"] == "pktgen" and "DPDK" in gen["version"]
    run_id = str(data["run_id"])
    log = (results / "commands.log").read_text()
    started = [line for line in log.splitlines() if f"--file-prefix=vsp{run_id}pg" in line]
    assert len(started) == 1 and f"[{bed.gen}] [background] ssh " in started[0]  # on host B, none here
    assert f"python3 /tmp/vsperf-{run_id}-files/ptyexec.py" in started[0]
    assert f"--file-prefix=vsp{run_id}pg0" in started[0]
    for _, b_if in bed.cables:
        assert f"iface={b_if}" in started[0]
    assert "-g 127.0.0.1:22022" in started[0]  # the Lua socket on B's loopback only, reached over SSH:
    assert re.search(rf"\[{bed.gen}\] \[forward\] ssh .* -N -L 22022:127.0.0.1:22022 root@", log)
    assert f"[{bed.gen}] [background] ssh " in next(line for line in log.splitlines() if "while read -r" in line)
    assert re.search(rf"\[{bed.gen}\] scp .*ptyexec.py .*:/tmp/vsperf-{run_id}-files/ptyexec.py", log)
    assert_nothing_left(bed, run_id, before, links_before)
    assert_no_pktgen_left(bed, run_id)


def test_vsperf_killed_mid_trial_next_run_stops_remote_pktgen(bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "killed"
    # 30 s trials: pktgen still sends when vsperf is killed
    args = [a.replace("TRAFFICGEN_DURATION=1", "TRAFFICGEN_DURATION=30") for a in pktgen_args(bed, results)]
    with running(bed.vsperf(*args, cwd=tmp_path)) as proc:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            if "pktgen 0 started on host" in _debug_log(results):
                break
            time.sleep(0.2)
        started = pktgens_of()
        assert started, f"no pktgen started (vsperf exit {proc.poll()})"
        time.sleep(3.0)  # into the first trial
        proc.kill()  # SIGKILL: no teardown at all
    run_id = next(iter(started.values()))
    assert pktgens_of(run_id), "pktgen did not outlive vsperf: nothing left for the next run to stop"
    nxt = bed.next_run(tmp_path)
    assert nxt.returncode == 0, nxt.stderr
    print(nxt.stderr)  # shown with -s: what a user sees
    assert "removed leftover of a killed run" in nxt.stderr and "pktgen 0" in nxt.stderr, nxt.stderr
    assert_no_pktgen_left(bed, run_id)
    assert_nothing_left(bed, run_id, before, links_before)


def _debug_log(results: Path) -> str:
    """What the run logged so far (empty before it wrote anything)."""
    try:
        return "".join(p.read_text(errors="replace") for p in results.glob("*.log"))
    except OSError:
        return ""


def test_generator_host_without_pktgen_exit_2_one_line_nothing_created(bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    missing = f"/opt/{bed.tag}/pktgen"  # not on host B (the hosts share this machine's filesystem)
    args = bed.args(tmp_path / "run", "(64,)", trafficgen="pktgen", params=f";TRAFFICGEN_PKTGEN_BINARY={missing}")
    proc = bed.vsperf(*args, cwd=tmp_path)
    _out, err = finish(proc, 300)
    assert proc.returncode == 2, err
    lines = [line for line in err.splitlines() if "error" in line.lower()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert f"host {bed.gen}: {missing} is missing: build Pktgen-DPDK >= 23.06 with Lua there" in lines[0], err
    assert bed.states() == before and bed.links() == links_before
    assert not (tmp_path / "run" / "results.json").exists()
    assert pktgens_of() == {}

"""A two-host testbed for end-to-end `vsperf ... --testbed` tests (test_testbed_run.py and the
other test_testbed_*.py files): sshd host A (the DUT) and sshd host B (the generator), each a
network namespace of this machine, cabled by two veth pairs the test creates (the "physical
NICs"), and the helpers that check nothing was left behind.

Each test module opens its own bed with its own name tag and its own /24 of 198.18.0.0/15
(`open_bed(base, "v9r", 102)` uses 198.18.102.0/24 for the controller links and
198.18.103.0/30 on A's first cable end), so modules never share names or addresses.

What a bed can and cannot prove: the hosts share this machine's filesystem, kernel and process
table, so "nothing left on a host" is checked in its namespace (links, XDP, state) and on the
shared filesystem; that every command went over SSH is checked in the command log.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest
from cabled_hosts import cable_states, cabled_hosts, ip, links_in
from sshd_hosts import SshdServer, sshd_skip_reason

from vsperf.host.journal import DEFAULT_STATE_ROOT, JOURNAL_FILE
from vsperf.host.ports import PortState
from vsperf.trafficgen.vsgen.build import ENGINE_NAME

OVS_DPDK_BINARY = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"


@dataclass
class Bed:
    """Hosts a and b of one test module: their sshd servers, namespaces and cables."""

    servers: dict[str, SshdServer]
    dir: Path
    tag: str  # unique names of this test process
    ns: dict[str, str]  # host ("a", "b") -> its namespace
    ctl: dict[str, tuple[str, str]]  # host -> (controller address, host address)
    cables: list[tuple[str, str]]  # (A end, B end)

    @property
    def dut(self) -> str:
        """Host A's name in the testbed file (the port journals in /run/vsperf name hosts: another
        test's leftover for a plain "hosta" must not be replayed on these)."""
        return f"dut{self.tag}"

    @property
    def gen(self) -> str:
        """Host B's name in the testbed file."""
        return f"gen{self.tag}"

    def testbed_file(self) -> Path:
        """lab.yaml: A is the DUT host, B the generator host, both cables as kernel interfaces."""
        a, b = self.servers["a"], self.servers["b"]
        path = self.dir / "lab.yaml"
        path.write_text(textwrap.dedent(f"""
            hosts:
              {self.dut}: {{address: {a.address}, port: {a.port}, key_file: {a.client_key},
                      known_hosts_file: {a.known_hosts}}}
              {self.gen}: {{address: {b.address}, port: {b.port}, key_file: {b.client_key},
                      known_hosts_file: {b.known_hosts}}}
            dut_host: {self.dut}
            trafficgen_host: {self.gen}
            ports:
              - dut: {{interface: {self.cables[0][0]}}}
                trafficgen: {{interface: {self.cables[0][1]}}}
              - dut: {{interface: {self.cables[1][0]}}}
                trafficgen: {{interface: {self.cables[1][1]}}}
            """))
        return path

    def states(self) -> dict[str, PortState]:
        """The state of every cable end, read in the hosts' namespaces."""
        return cable_states(self.ns, self.cables)

    def links(self) -> dict[str, set[str]]:
        """Every interface of each host's namespace."""
        return {h: links_in(self.ns[h]) for h in self.ns}

    def vsperf(self, *args: str, cwd: Path) -> subprocess.Popen[str]:
        """`python -m vsperf ARGS`, its output piped."""
        return subprocess.Popen([sys.executable, "-m", "vsperf", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=cwd)

    def held(self, proc: subprocess.Popen[str]) -> str:
        """What `proc` (a vsperf run with --mode trafficgen-off or -pause) wrote until it holds,
        checking that it names the generator ports and that host A's switch is up meanwhile."""
        assert proc.stderr is not None
        seen = ""
        while "Send SIGTERM to continue" not in seen:
            line = proc.stderr.readline()
            assert line, f"vsperf ended before holding: {seen}"
            seen += line
        assert re.search(rf"generator ports: {self.cables[0][1]}\b", seen), seen
        bridges = [name for name in self.links()["a"] if re.fullmatch(r"vsp[0-9a-f]+b\d+", name)]
        assert len(bridges) == 1  # host A's switch is up while vsperf holds
        return seen

    def next_run(self, tmp_path: Path, testbed: Path | None = None) -> subprocess.CompletedProcess[str]:
        """The next run after a killed one: `phy2phy_tput --trafficgen dummy` on this bed (or the
        testbed file `testbed`), which deploys nothing but restores what the killed run left."""
        return subprocess.run([sys.executable, "-m", "vsperf", "phy2phy_tput", "--trafficgen", "dummy", "--testbed",
                               str(testbed or self.testbed_file()), "--test-params", "TRAFFICGEN_PKT_SIZES=(64,)",
                               "--results-dir", str(tmp_path / "next")], capture_output=True, text=True,
                              cwd=tmp_path, timeout=300)

    def args(self, results: Path, sizes: str, vswitch: str = "linux-bridge", test: str = "phy2phy_tput",
             params: str = "", trafficgen: str = "vsgen") -> list[str]:
        """vsperf's arguments for `test` on this bed: 1 s trials at `sizes`, `params` appended. The
        run's history goes beside its results (LOG_DIR), not into this machine's own."""
        return [test, "--vswitch", vswitch, "--trafficgen", trafficgen, "--testbed", str(self.testbed_file()),
                "--test-params", f"TRAFFICGEN_DURATION=1;TRAFFICGEN_PKT_SIZES={sizes};LOG_DIR={results.parent}{params}",
                "--results-dir", str(results)]


def bed_skip_reason() -> str | None:
    """Why a bed cannot be built here (None: it can)."""
    reason = sshd_skip_reason()
    if reason:
        return reason
    if tuple(int(x) for x in os.uname().release.split(".")[:2]) < (5, 18):
        return "vsgen needs Linux >= 5.18"
    return None


def skip_missing_switch(vswitch: str) -> None:
    """Skip the test when `vswitch`'s programs are not installed (saying which package)."""
    if vswitch.startswith("ovs") and shutil.which("ovs-vswitchd") is None:
        pytest.skip("ovs-vswitchd missing: apt-get install openvswitch-switch")
    if vswitch == "ovs-dpdk" and not Path(OVS_DPDK_BINARY).is_file():
        pytest.skip(f"{OVS_DPDK_BINARY} missing: apt-get install openvswitch-switch-dpdk")


@contextlib.contextmanager
def open_bed(base: Path, tag_prefix: str, octet: int) -> Iterator[Bed]:
    """A bed named `tag_prefix` + this process's PID, on 198.18.`octet`.0/24 (controller links)
    and 198.18.`octet + 1`.0/30 (A's first cable end). Skips the test when it cannot be built.
    At the end everything is removed, and a failed test's leftovers (its run's port journal,
    daemons, engines and directories) with it."""
    reason = bed_skip_reason()
    if reason:
        pytest.skip(reason)
    tag = f"{tag_prefix}{os.getpid() % 10000}"
    ns = {"a": f"{tag}ha", "b": f"{tag}hb"}
    ctl = {"a": (f"198.18.{octet}.1", f"198.18.{octet}.2"), "b": (f"198.18.{octet}.9", f"198.18.{octet}.10")}
    cables = [(f"{tag}a0", f"{tag}b0"), (f"{tag}a1", f"{tag}b1")]
    bed: Bed | None = None
    try:
        with cabled_hosts(base, tag, ns, ctl, cables, f"198.18.{octet + 1}.1/30") as servers:
            # Like a NIC, A's ends take XDP frames (veth does with GRO on): vsgen's fast path. Set while
            # up: on a down veth the flag is kept but (on 6.18 here) the peer's XDP frames are not taken.
            ip("-n", ns["a"], "link", "set", cables[1][0], "up")
            for a_if, _ in cables:
                subprocess.run(["ip", "netns", "exec", ns["a"], "ethtool", "-K", a_if, "gro", "on"], check=True,
                               capture_output=True)
            ip("-n", ns["a"], "link", "set", cables[1][0], "down")
            bed = Bed(servers, base, tag, ns, ctl, cables)
            yield bed
    finally:
        if bed is not None:
            _remove_leftovers(bed)


def _remove_leftovers(bed: Bed) -> None:
    for journal in DEFAULT_STATE_ROOT.glob(f"*/{JOURNAL_FILE}"):
        text = journal.read_text()
        if f'"{bed.dut}"' in text or f'"{bed.gen}"' in text:
            run_id = journal.parent.name
            recorded = json.loads(text)
            for pid in daemons_of(run_id) + engines_of(run_id) + _journaled_pids(recorded):
                with contextlib.suppress(psutil.NoSuchProcess):
                    psutil.Process(pid).kill()
            for entry in recorded.get("entries", []):
                if entry["kind"] == "netns":
                    subprocess.run(["ip", "netns", "del", entry["name"]], capture_output=True)
            for root, pattern in ((Path("/tmp"), f"vsperf-{run_id}-*"), (Path("/var/run/dpdk"), f"vsp{run_id}*")):
                for leftover in root.glob(pattern):
                    shutil.rmtree(leftover, ignore_errors=True)
            shutil.rmtree(journal.parent, ignore_errors=True)


def _journaled_pids(recorded: dict[str, Any]) -> list[int]:
    """PIDs of the processes a journal names that are still those processes (same start ticks:
    the hosts share this machine's process table)."""
    pids = []
    for entry in (e for e in recorded.get("entries", []) if e["kind"] == "process"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            stat = Path(f"/proc/{entry['pid']}/stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[19]) == int(entry["start_ticks"]):
                pids.append(int(entry["pid"]))
    return pids


def wait_for_results(path: Path, proc: subprocess.Popen[str], timeout_s: float) -> dict[str, Any]:
    """results.json at `path` once it holds a measured frame size (`proc`: the vsperf writing it)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            data = json.loads(path.read_text())
            if data["tests"] and data["tests"][0]["results"]:
                return dict(data)
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.1)
    raise AssertionError(f"no frame size measured (vsperf exit {proc.poll()})")


def engines_of(run_id: str) -> list[int]:
    """PIDs of vsgen engines copied for run `run_id` (on the shared process table)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if cmd and cmd[0].endswith(f"/vsperf-{run_id}-files/{ENGINE_NAME}"):
            found.append(proc.pid)
    return found


def daemons_of(run_id: str) -> list[int]:
    """PIDs of the private OVS daemons of run `run_id`."""
    return [p.pid for p in psutil.process_iter(["cmdline"])
            if any(f"/tmp/vsperf-{run_id}-ovs/" in arg for arg in p.info["cmdline"] or [])]


def vnf_namespaces(run_id: str) -> list[str]:
    """The namespaces of run `run_id`'s VNFs on the DUT host (`ip netns` names: the hosts share
    this machine's /run/netns)."""
    out = subprocess.run(["ip", "-j", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return [ns["name"] for ns in json.loads(out or "[]") if ns["name"].startswith(f"vsp{run_id}v")]


def assert_nothing_left(bed: Bed, run_id: str, before: dict[str, PortState],
                        links_before: dict[str, set[str]]) -> None:
    """The cables as they were, no new interface on either host, no file, process, namespace or
    journal of run `run_id` left."""
    assert bed.states() == before
    assert bed.links() == links_before
    assert list(Path("/tmp").glob(f"vsperf-{run_id}-*")) == []
    assert engines_of(run_id) == [] and daemons_of(run_id) == []
    assert vnf_namespaces(run_id) == []
    assert not (DEFAULT_STATE_ROOT / run_id / JOURNAL_FILE).exists()


def finish(proc: subprocess.Popen[str], timeout_s: float) -> tuple[str, str]:
    """`proc`'s output once it ended. One still running after `timeout_s` is asked for its
    threads' stacks (SIGUSR1, see vsperf.cli.entry), killed and reaped, and the test fails with
    the end of what it wrote: a hung run says where it hung and holds no testbed for the next."""
    try:
        return proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)
        time.sleep(2.0)
        proc.kill()
        _out, err = proc.communicate(timeout=30)
        tail = "\n".join((err or "").splitlines()[-150:])
        pytest.fail(f"vsperf still ran after {timeout_s:g} s; killed. The end of its output:\n{tail}")


@contextlib.contextmanager
def running(proc: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    """`proc` (a `Bed.vsperf`), killed and reaped on leaving when it still runs: a failed test
    leaves no vsperf behind. Inside, `proc.kill()` is a SIGKILL with no teardown at all."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)

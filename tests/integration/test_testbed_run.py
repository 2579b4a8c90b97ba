"""`vsperf phy2phy_tput --testbed` end to end: the DUT's Linux bridge on sshd host A, vsgen on
sshd host B, real frames over the test's veth "cables" between the two hosts' namespaces.

What this proves and what it cannot: the hosts share this machine's filesystem, kernel and
process table, so "nothing left on a host" is checked in its namespace (links, XDP, state) and
on the shared filesystem; that every command went over SSH is checked in the command log.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from sshd_hosts import SshdServer, make_host_netns, remove_netns, run_sshd, sshd_skip_reason, start_sshd

from vsperf.lab.state import DEFAULT_STATE_ROOT
from vsperf.testbed.ports import PortState
from vsperf.trafficgen.vsgen.build import ENGINE_NAME

pytestmark = pytest.mark.root

TAG = f"v9r{os.getpid() % 10000}"  # unique names for this test process
NS = {"a": f"{TAG}ha", "b": f"{TAG}hb"}
CTL = {"a": ("198.18.102.1", "198.18.102.2"), "b": ("198.18.102.9", "198.18.102.10")}
CABLES = [(f"{TAG}a0", f"{TAG}b0"), (f"{TAG}a1", f"{TAG}b1")]


@dataclass
class Bed:
    servers: dict[str, SshdServer]
    dir: Path

    def testbed_file(self) -> Path:
        a, b = self.servers["a"], self.servers["b"]
        path = self.dir / "lab.yaml"
        path.write_text(textwrap.dedent(f"""
            hosts:
              hosta: {{address: {a.address}, port: {a.port}, key_file: {a.client_key},
                      known_hosts_file: {a.known_hosts}}}
              hostb: {{address: {b.address}, port: {b.port}, key_file: {b.client_key},
                      known_hosts_file: {b.known_hosts}}}
            dut_host: hosta
            trafficgen_host: hostb
            ports:
              - dut: {{interface: {CABLES[0][0]}}}
                trafficgen: {{interface: {CABLES[0][1]}}}
              - dut: {{interface: {CABLES[1][0]}}}
                trafficgen: {{interface: {CABLES[1][1]}}}
            """))
        return path


def _ip(*argv: str) -> None:
    subprocess.run(["ip", *argv], check=True, capture_output=True)


def _skip_reason() -> str | None:
    reason = sshd_skip_reason()
    if reason:
        return reason
    if tuple(int(x) for x in os.uname().release.split(".")[:2]) < (5, 18):
        return "vsgen needs Linux >= 5.18"
    return None


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    base = tmp_path_factory.mktemp("testbed_run")
    servers: dict[str, SshdServer] = {}
    try:
        for host in ("a", "b"):
            make_host_netns(NS[host], f"{TAG}c{host}", *CTL[host])
            servers[host] = start_sshd(base / host, f"host{host}", address=CTL[host][1], port=2222, netns=NS[host])
        for a_if, b_if in CABLES:  # the "physical NICs", cabled A <-> B; A's first one has an address
            _ip("link", "add", a_if, "netns", NS["a"], "type", "veth", "peer", "name", b_if, "netns", NS["b"])
        _ip("-n", NS["a"], "addr", "add", "198.18.103.1/30", "dev", CABLES[0][0])
        for ns, ifname in ((NS["a"], CABLES[0][0]), (NS["b"], CABLES[0][1]), (NS["b"], CABLES[1][1])):
            _ip("-n", ns, "link", "set", ifname, "up")
        yield Bed(servers, base)
    finally:
        for srv in servers.values():
            srv.stop()
        for host in ("a", "b"):
            remove_netns(NS[host], f"{TAG}c{host}")


def state_in(ns: str, ifname: str) -> PortState:
    """A port's state read directly in its namespace (not through vsperf)."""
    out = subprocess.run(["ip", "-n", ns, "-j", "-d", "addr", "show", "dev", ifname], capture_output=True,
                         text=True, check=True).stdout
    link = json.loads(out)[0]
    addrs = tuple(f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", [])
                  if not (a["family"] == "inet6" and a.get("scope") == "link"))
    flags = set(link["flags"])
    return PortState(ifname, "UP" in flags, "LOWER_UP" in flags, link["mtu"], addrs, "xdp" in link,
                     link.get("master"))


def all_states() -> dict[str, PortState]:
    return {a: state_in(NS["a"], a) for a, _ in CABLES} | {b: state_in(NS["b"], b) for _, b in CABLES}


def links_in(ns: str) -> set[str]:
    out = subprocess.run(["ip", "-n", ns, "-j", "link", "show"], capture_output=True, text=True, check=True).stdout
    return {link["ifname"] for link in json.loads(out)}


def engines_of(run_id: str) -> list[int]:
    """PIDs of vsgen engines copied for run `run_id` (on the shared process table)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if cmd and cmd[0].endswith(f"/vsperf-{run_id}-vsgen/{ENGINE_NAME}"):
            found.append(proc.pid)
    return found


def assert_nothing_left(run_id: str, before: dict[str, PortState], links_before: dict[str, set[str]]) -> None:
    assert all_states() == before
    assert {h: links_in(NS[h]) for h in NS} == links_before
    assert not Path(f"/tmp/vsperf-{run_id}-vsgen").exists()
    assert engines_of(run_id) == []
    assert not (DEFAULT_STATE_ROOT / f"testbed-{run_id}.json").exists()


def _vsperf(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "vsperf", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=cwd)


def _args(bed: Bed, results: Path, sizes: str) -> list[str]:
    return ["phy2phy_tput", "--vswitch", "linux-bridge", "--trafficgen", "vsgen", "--testbed",
            str(bed.testbed_file()), "--test-params", f"TRAFFICGEN_DURATION=1;TRAFFICGEN_PKT_SIZES={sizes}",
            "--results-dir", str(results)]


def test_phy2phy_tput_on_two_ssh_hosts(bed: Bed, tmp_path: Path) -> None:
    before, links_before = all_states(), {h: links_in(NS[h]) for h in NS}
    results = tmp_path / "run"
    proc = _vsperf(*_args(bed, results, "(64,)"), cwd=tmp_path)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    data = json.loads((results / "results.json").read_text())
    test = data["tests"][0]
    assert test["status"] == "passed" and data["simulated"] is False
    metrics = test["results"][0]["metrics"]
    # real frames crossed host B -> host A's bridge -> host B: a zero-loss rate was found
    assert metrics["throughput_rx_fps"] > 1000 and metrics["tx_rate_fps"] > 0 and metrics["packet_size"] == 64
    assert (results / "result_0_phy2phy_tput_p2p.csv").is_file() or list(results.glob("result_*_phy2phy_tput_*.csv"))
    components = {(c["role"], c["name"]): c for c in test["components"]}
    assert components[("vswitch", "linux-bridge")]["details"]["host"] == "hosta"
    assert components[("port", "port 0")]["version"] == "veth"
    log = (results / "commands.log").read_text()
    assert re.search(rf"\[hosta\] ssh .* 'ip link add name vsperf\w+ type bridge", log)
    assert re.search(rf"\[hostb\] scp .* root@{re.escape(CTL['b'][1])}:/tmp/vsperf-\w+-vsgen/{ENGINE_NAME}", log)
    assert re.search(rf"\[hostb\] \[background\] ssh .*vsperf-\w+-vsgen/{ENGINE_NAME}", log)
    assert_nothing_left(data["run_id"], before, links_before)


def _wait_for_results(path: Path, proc: subprocess.Popen[str], timeout_s: float) -> dict[str, object]:
    """results.json once it holds a measured frame size."""
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


def test_dut_host_lost_mid_trial_exit_1_results_kept_next_run_cleans(bed: Bed, tmp_path: Path) -> None:
    before, links_before = all_states(), {h: links_in(NS[h]) for h in NS}
    results = tmp_path / "lost"
    proc = _vsperf(*_args(bed, results, "(64,1518)"), cwd=tmp_path)
    try:
        data = _wait_for_results(results / "results.json", proc, 300)
        bed.servers["a"].kill()  # the DUT host drops off the network while 1518 B trials run
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        run_sshd(bed.servers["a"])
    assert proc.returncode == 1, err
    errors = [line for line in err.splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and "host hosta" in errors[0], err
    assert "Traceback" not in err
    kept = json.loads((results / "results.json").read_text())
    test = kept["tests"][0]
    assert test["status"] == "failed" and "host hosta" in test["error"]
    assert [r["metrics"]["packet_size"] for r in test["results"]] == [64]  # what was measured is kept
    assert test["results"][0]["metrics"]["throughput_rx_fps"] > 0
    # host A could not be cleaned: its bridge is still there, its ports still enslaved
    assert any(name.startswith("vsperf") for name in links_in(NS["a"]) - links_before["a"])
    # host B was: the engine is gone, its ports restored
    assert engines_of(str(data["run_id"])) == []
    assert {b: state_in(NS["b"], b) for _, b in CABLES} == {b: before[b] for _, b in CABLES}
    # the next run (here with the simulated generator: no deployment) restores host A first
    nxt = subprocess.run([sys.executable, "-m", "vsperf", "phy2phy_tput", "--trafficgen", "dummy", "--testbed",
                          str(bed.testbed_file()), "--test-params", "TRAFFICGEN_PKT_SIZES=(64,)", "--results-dir",
                          str(tmp_path / "next")], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert nxt.returncode == 0, nxt.stderr
    assert "restored after a killed run" in nxt.stderr
    assert_nothing_left(str(data["run_id"]), before, links_before)

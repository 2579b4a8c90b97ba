"""A two-host testbed on one machine: each "host" a network namespace with its own sshd, cabled
by veth pairs the test creates (the "physical NICs"). Every vsperf command goes over SSH.

What this proves and what it cannot: the hosts share this machine's filesystem and process table,
so the test checks that vsperf reached them only through SSH by the command log (every command
line names its host and is an `ssh` line) and by the ports' state, read in the namespaces.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cabled_hosts import cable_states, cabled_hosts, state_in
from sshd_hosts import SshdServer, run_sshd, sshd_skip_reason

from vsperf.executor import CommandLog
from vsperf.host.hosts import RunHosts
from vsperf.host.journal import leftover_journals
from vsperf.host.ports import PortError, PortState, read_port
from vsperf.remote.connection import HostLostError, SshHost
from vsperf.remote.ssh import SshExecutor
from vsperf.testbed.file import load_testbed

pytestmark = pytest.mark.root

OVS_DPDK_BINARY = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"

TAG = f"v9{os.getpid() % 10000}"  # unique names for this test process
NS = {"a": f"{TAG}ha", "b": f"{TAG}hb"}
CTL = {"a": ("198.18.100.1", "198.18.100.2"), "b": ("198.18.100.9", "198.18.100.10")}
NOBODY = "198.18.100.12"  # inside host B's /29, assigned to nothing: an unreachable host
CABLES = [(f"{TAG}a0", f"{TAG}b0"), (f"{TAG}a1", f"{TAG}b1")]


@dataclass
class Bed:
    """The two hosts, their servers and a testbed file for them."""

    servers: dict[str, SshdServer]
    dir: Path

    def ns(self, host: str) -> str:
        return NS[host]

    def ssh_host(self, host: str) -> SshHost:
        srv = self.servers[host]
        return SshHost(f"host{host}", srv.address, srv.port, "root", srv.client_key, srv.known_hosts)

    def yaml(self, *, a0: str = CABLES[0][0], known_a: Path | None = None, address_b: str | None = None) -> str:
        a, b = self.servers["a"], self.servers["b"]
        return textwrap.dedent(f"""
            hosts:
              hosta: {{address: {a.address}, port: {a.port}, key_file: {a.client_key},
                      known_hosts_file: {known_a or a.known_hosts}}}
              hostb: {{address: {address_b or b.address}, port: {b.port}, key_file: {b.client_key},
                      known_hosts_file: {b.known_hosts}, connect_timeout_s: 1}}
            dut_host: hosta
            trafficgen_host: hostb
            ports:
              - dut: {{interface: {a0}}}
                trafficgen: {{interface: {CABLES[0][1]}}}
              - dut: {{interface: {CABLES[1][0]}}}
                trafficgen: {{interface: {CABLES[1][1]}}}
            """)

    def write(self, text: str, name: str = "lab.yaml") -> Path:
        path = self.dir / name
        path.write_text(text)
        return path


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    reason = sshd_skip_reason()
    if reason:
        pytest.skip(reason)
    base = tmp_path_factory.mktemp("testbed")
    # the "physical NICs": cabled A <-> B, MTU 1500, A's first one up with an address
    with cabled_hosts(base, TAG, NS, CTL, CABLES, "198.18.101.1/30") as servers:
        yield Bed(servers, base)


def all_states() -> dict[str, PortState]:
    return cable_states(NS, CABLES)


def test_ports_used_over_ssh_are_restored_exactly(bed: Bed, tmp_path: Path) -> None:
    before = all_states()
    log = tmp_path / "commands.log"
    testbed = load_testbed(bed.write(bed.yaml()))
    with RunHosts.open(testbed, run_id="t9a", state_root=tmp_path, command_log=CommandLog(log)) as hosts:
        for host, interface in list(hosts.checked):
            hosts.use_port(hosts.hosts[host], interface, mtu_bytes=2000)
        now = all_states()
        assert all(s.admin_up and s.mtu_bytes == 2000 for s in now.values())
        # what a test might leave: an extra address, the original one gone
        hosts.dut.executor.run(["ip", "addr", "add", "198.18.102.1/30", "dev", CABLES[1][0]])
        hosts.dut.executor.run(["ip", "addr", "del", "198.18.101.1/30", "dev", CABLES[0][0]])
        assert (tmp_path / "t9a" / "journal.json").exists()  # the journal exists while ports are changed
    assert all_states() == before
    assert not list(tmp_path.glob("*/journal.json"))
    lines = log.read_text().splitlines()
    assert lines and all(" [hosta] ssh " in line or " [hostb] ssh " in line for line in lines)
    assert any("[hostb]" in line for line in lines) and any("[hosta]" in line for line in lines)


def test_a_killed_run_is_restored_by_the_next(bed: Bed, tmp_path: Path) -> None:
    before = all_states()
    path = bed.write(bed.yaml(), "kill.yaml")
    script = textwrap.dedent(f"""
        import os, signal
        from pathlib import Path
        from vsperf.executor import CommandLog
        from vsperf.host.hosts import RunHosts
        from vsperf.testbed.file import load_testbed
        s = RunHosts.open(load_testbed(Path({str(path)!r})), run_id="t9k", state_root=Path({str(tmp_path)!r}),
                          command_log=CommandLog(None))
        for host, interface in list(s.checked):
            s.use_port(s.hosts[host], interface, mtu_bytes=1800)
        os.kill(os.getpid(), signal.SIGKILL)
        """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert state_in(NS["a"], CABLES[1][0]).mtu_bytes == 1800  # left changed by the killed run
    assert len(leftover_journals(tmp_path)[0]) == 1
    with RunHosts.open(load_testbed(path), run_id="t9n", state_root=tmp_path, command_log=CommandLog(None)):
        assert all_states() == before  # restored while opening, before this run uses anything
    assert leftover_journals(tmp_path) == ([], [])


def test_a_dut_host_lost_mid_run_is_restored_by_the_next_run(bed: Bed, tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    before = all_states()
    testbed = load_testbed(bed.write(bed.yaml(), "lost.yaml"))
    hosts = RunHosts.open(testbed, run_id="t9l", state_root=tmp_path, command_log=CommandLog(None))
    try:
        for host, interface in list(hosts.checked):
            hosts.use_port(hosts.hosts[host], interface, mtu_bytes=1700)
        bed.servers["a"].kill()  # the DUT host drops off the network mid-run
        with pytest.raises(HostLostError, match=r"lost the SSH connection to host hosta \(root@198\.18\.100\.2:2222\)"):
            hosts.dut.executor.run(["ip", "link", "show"])
        hosts.close()  # restores what it can (host B), logs host A, keeps A's entries
    finally:
        run_sshd(bed.servers["a"])
    assert "host hosta" in caplog.text and "not restored" in caplog.text
    assert all(s.mtu_bytes == 1500 for name, s in all_states().items() if name.startswith(f"{TAG}b"))
    assert all(s.mtu_bytes == 1700 for name, s in all_states().items() if name.startswith(f"{TAG}a"))
    # vsperf's own process still runs, so the journal is not a leftover yet; a new vsperf finds it
    journal = tmp_path / "t9l" / "journal.json"
    data = json.loads(journal.read_text())
    assert {e["host"] for e in data["entries"] if e["kind"] == "port"} == {"hosta"}
    data["owner_pid"], data["owner_start_ticks"] = 1, 0  # as seen by the next vsperf process
    journal.write_text(json.dumps(data))
    with RunHosts.open(testbed, run_id="t9m", state_root=tmp_path, command_log=CommandLog(None)):
        pass
    assert all_states() == before and not list(tmp_path.glob("*/journal.json"))


def test_bad_ports_are_refused_before_anything_changes(bed: Bed, tmp_path: Path) -> None:
    before = all_states()
    ex = SshExecutor(bed.ssh_host("a"))
    try:
        with pytest.raises(PortError, match=rf"^host hosta: no interface 'nope0' \(interfaces there: .*{CABLES[0][0]}"):
            read_port(ex, "nope0")
        # a port enslaved to a bridge is someone else's
        ex.run(["ip", "link", "add", f"{TAG}br", "type", "bridge"])
        try:
            ex.run(["ip", "link", "set", CABLES[1][0], "master", f"{TAG}br"])
            testbed = load_testbed(bed.write(bed.yaml(), "br.yaml"))
            with pytest.raises(PortError, match=rf"host hosta: interface {CABLES[1][0]} is attached to {TAG}br"):
                RunHosts.open(testbed, run_id="t9b", state_root=tmp_path, command_log=CommandLog(None))
        finally:
            ex.run(["ip", "link", "del", f"{TAG}br"])
    finally:
        ex.close()
    assert all_states() == before and not list(tmp_path.glob("*/journal.json"))


def _vsperf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vsperf", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def test_cli_faults_exit_2_with_one_line_and_nothing_created(bed: Bed, tmp_path: Path) -> None:
    before = all_states()
    wrong = tmp_path / "wrong_known_hosts"
    b_key = bed.servers["b"].known_hosts.read_text().split()
    wrong.write_text(f"[{CTL['a'][1]}]:2222 {b_key[1]} {b_key[2]}\n")  # host B's key for host A
    cases = [
        (bed.yaml(known_a=wrong), rf"host hosta .*its key does not match the one in {wrong}"),
        (bed.yaml(address_b=NOBODY), r"host hostb \(root@198\.18\.100\.12:2222\): cannot connect"),
        (bed.yaml(a0="nope0"), r"host hosta: no interface 'nope0'"),
    ]
    args = [["phy2phy_tput", "--trafficgen", "trafgen"]] * len(cases)
    if Path(OVS_DPDK_BINARY).is_file():  # a VNF that no testbed host can run, refused by the VNF itself
        cases.append((bed.yaml(), r"VNF QemuPciPassthrough needs a physical NIC to pass to the guest, which vsperf "
                                  r"does not pass through on host hosta; use --vnf QemuDpdkVhostUser or QemuVirtioNet"))
        args.append(["pvp_tput", "--vswitch", "ovs-dpdk", "--vnf", "qemu-pci-passthrough", "--trafficgen", "vsgen"])
    for i, (text, message) in enumerate(cases):
        results = tmp_path / f"r{i}"
        proc = _vsperf(*args[i], "--testbed", str(bed.write(text, f"cli{i}.yaml")), "--results-dir", str(results),
                       cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        errors = [line for line in proc.stderr.splitlines() if "error" in line]
        assert len(errors) == 1 and re.search(message, errors[0]), proc.stderr
        assert "Traceback" not in proc.stderr and not results.exists()
    assert all_states() == before


def test_cli_with_the_simulated_generator_runs(bed: Bed, tmp_path: Path) -> None:
    results = tmp_path / "ok"
    proc = _vsperf("phy2phy_tput", "--trafficgen", "dummy", "--testbed", str(bed.write(bed.yaml(), "ok.yaml")),
                   "--test-params", "TRAFFICGEN_PKT_SIZES=(64,)", "--results-dir", str(results), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads((results / "results.json").read_text())
    assert data["tests"][0]["results"][0]["metrics"]["throughput_rx_fps"] > 0
    hosts = {h["name"]: h for h in data["environment"]["testbed_hosts"]}
    assert hosts["hosta"]["roles"] == ["DUT"] and hosts["hostb"]["roles"] == ["traffic generator"]
    assert hosts["hosta"]["kernel"] == os.uname().release and isinstance(hosts["hostb"]["memory_kb"], int)
    assert [n["name"] for n in hosts["hosta"]["nics"]] == [a for a, _ in CABLES]
    assert all(n["driver"] == "veth" for h in hosts.values() for n in h["nics"])
    log = (results / "commands.log").read_text()
    assert "[hosta] ssh -p 2222" in log and "[hostb] ssh -p 2222" in log
    report = next(results.glob("*.rst")).read_text()
    assert "Testbed host hosta" in report and "Testbed host hostb" in report and "Role: traffic generator" in report
    # The Level Test Report describes the DUT: its host's facts first, the controller apart.
    assert "Controller (vsperf ran here):" in report
    html = next(results.glob("*.html")).read_text()
    assert "mailto:" not in html  # root@ADDRESS is an SSH login, no e-mail address

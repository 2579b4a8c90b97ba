"""Host.net on this machine for real: namespaces, a veth pair carrying frames, a bridge, a tap,
a process inside a namespace, a TCP connection into one, all released through the journal (and
swept by the next run when the owner was killed). Everything is named with a fresh run id and
removed at the end even when a test fails."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from vsperf.errors import DeploymentError
from vsperf.executor import CommandLog, LocalExecutor, in_netns
from vsperf.host import hosts as hosts_module
from vsperf.host.host import Host
from vsperf.host.hosts import local_lab
from vsperf.host.journal import Journal, Owner
from vsperf.host.names import RunNames
from vsperf.host.netlink import LinkStatsReader, link_counters, link_mac, list_netns, netns_exists, netns_pids
from vsperf.host.proc import own_start_ticks
from vsperf.host.release import release
from vsperf.host.workdir import new_run_id

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(shutil.which("ip") is None, reason="ip missing: apt-get install iproute2"),
]


def _leftovers(tag: str) -> list[str]:
    """Namespaces and links of this machine whose name carries `tag`."""
    found = [f"netns {n}" for n in list_netns() if n.startswith(tag)]
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=False).stdout
    found += [f"link {line.split(':')[1].strip().split('@')[0]}" for line in links.splitlines()
              if line.split(":")[1].strip().startswith(tag)]
    return found


def _remove(tag: str) -> None:
    """What a failed test may have left: deleted by name (this run's tag only)."""
    for name in [n for n in list_netns() if n.startswith(tag)]:
        subprocess.run(["ip", "netns", "del", name], check=False)
    for what in _leftovers(tag):
        subprocess.run(["ip", "link", "del", "dev", what.split()[1]], check=False)


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    """This machine as a Host of a fresh run; after the test, released and checked empty."""
    names = RunNames(new_run_id())
    journal = Journal(names.run_id, root=tmp_path / "state")
    this = Host("local", LocalExecutor(CommandLog(tmp_path / "commands.log")), names, journal)
    try:
        yield this
    finally:
        release(journal, {"local": this.executor})
        left = _leftovers(names.tag)
        _remove(names.tag)
    assert left == [], f"run {names.run_id} left: {left}"


def test_veth_pair_between_namespaces_carries_frames_and_is_released(host: Host) -> None:
    names = host.names
    g0, g1 = names.gen_netns(0), names.gen_netns(1)
    host.net.add_netns(g0)
    host.net.add_netns(g1)
    a, b = host.net.add_veth(g0, g0, g1, g1, mtu_bytes=2000, queues=2)
    assert netns_exists(g0) and netns_exists(g1)
    assert (a.mac, b.mac) == (link_mac(g0, g0), link_mac(g1, g1)) and a.mac != b.mac
    details = json.loads(subprocess.run(["ip", "-n", g1, "-d", "-j", "link", "show", "dev", g1], capture_output=True,
                                        text=True, check=True).stdout)[0]
    assert host.net.link(g0, g0)["mtu"] == 2000 and (details["num_tx_queues"], details["num_rx_queues"]) == (2, 2)
    host.net.configure_port(g0, g0, "198.18.0.1", 30, "198.18.0.2", b.mac)
    host.net.configure_port(g1, g1, "198.18.0.2", 30, "198.18.0.1", a.mac)
    reader = LinkStatsReader(g1, g1)
    try:
        before = reader.read()
        receiver = in_netns(g1, lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        sender = in_netns(g0, lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        with receiver, sender:
            receiver.bind(("198.18.0.2", 0))
            receiver.settimeout(2.0)
            for _ in range(20):
                sender.sendto(b"vsperf", receiver.getsockname())
            assert receiver.recv(16) == b"vsperf"
        assert reader.read().rx_packets - before.rx_packets >= 20
        assert link_counters(g0, g0).tx_packets >= 20
    finally:
        reader.close()
    assert host.journal is not None
    assert [(e.kind, e.name) for e in host.journal] == [("netns", g0), ("netns", g1), ("link", g1)]  # made on b's side
    done = release(host.journal, {"local": host.executor})
    assert done.errors == [] and not netns_exists(g0) and not netns_exists(g1) and len(host.journal) == 0


def test_bridge_and_tap_in_the_switch_namespace(host: Host) -> None:
    names = host.names
    ns = names.switch_netns
    host.net.add_netns(ns)
    host.net.add_veth(names.phy_if(0), ns, names.phy_if(1), ns, mtu_bytes=1500)
    host.net.add_tap(names.vnf(0).switch_ifs[0], ns, mtu_bytes=1600)
    bridge = names.bridge(0)
    host.net.add_bridge(bridge, ns, (names.phy_if(0), names.phy_if(1)))
    host.net.enslave(names.vnf(0).switch_ifs[0], bridge, ns)
    host.net.set_mtu(names.phy_if(1), ns, 1400)
    assert host.net.link(names.phy_if(0), ns)["master"] == bridge
    assert host.net.link(names.vnf(0).switch_ifs[0], ns)["master"] == bridge
    assert host.net.link(names.vnf(0).switch_ifs[0], ns)["mtu"] == 1600
    assert host.net.link(names.phy_if(1), ns)["mtu"] == 1400
    assert "UP" in host.net.link(bridge, ns)["flags"]
    assert host.net.del_link(bridge, ns) is True and host.net.del_link(bridge, ns) is False
    host.net.del_netns(ns)
    assert not netns_exists(ns)


def test_a_vlan_bridge_or_the_kernels_refusal_in_one_line(host: Host) -> None:
    names = host.names
    ns = names.switch_netns
    host.net.add_netns(ns)
    host.net.add_veth(names.phy_if(0), ns, names.phy_if(1), ns, mtu_bytes=1500)
    bridge = names.bridge(0)
    try:
        host.net.add_bridge(bridge, ns, (names.phy_if(0),), vlan_filtering=True)
    except DeploymentError as exc:
        assert str(exc) == "this kernel cannot tag frames in a Linux bridge (CONFIG_BRIDGE_VLAN_FILTERING is off)"
        assert host.journal is not None and bridge not in [e.name for e in host.journal]
        pytest.skip("this kernel has no bridge VLAN filtering (its refusal was checked)")
    host.net.bridge_vlan(names.phy_if(0), ns, 100, pvid=True, untagged=True)
    vlans = subprocess.run(["bridge", "-n", ns, "-j", "vlan", "show", "dev", names.phy_if(0)], capture_output=True,
                           text=True, check=True).stdout.replace(" ", "")
    assert '"vlan":100' in vlans and '"vlan":1,' not in vlans


def test_what_runs_in_a_namespace_is_stopped_with_it(host: Host) -> None:
    ns = host.names.switch_netns
    host.net.add_netns(ns)
    proc = host.spawn("sleeper", ["sleep", "60"], netns=ns)
    deadline = time.monotonic() + 5.0
    while netns_pids(ns) != [proc.pid] and time.monotonic() < deadline:  # `ip netns exec` enters it, then execs
        time.sleep(0.02)
    assert proc.alive() and netns_pids(ns) == [proc.pid]
    assert host.journal is not None
    done = release(host.journal, {"local": host.executor})
    assert done.done == [f"process sleeper (pid {proc.pid}) stopped", f"netns {ns} deleted"]
    assert not proc.alive() and proc.returncode() == -15


def test_open_tcp_reaches_a_port_inside_a_namespace_only(host: Host) -> None:
    ns = host.names.switch_netns
    host.net.add_netns(ns)
    server = in_netns(ns, lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
    with server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        stream = host.executor.open_tcp(port, netns=ns, timeout_s=2.0)
        try:
            peer, _ = server.accept()
            with peer:
                stream.sendall(b"ping")
                assert peer.recv(4) == b"ping"
        finally:
            stream.close()
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with probe:  # the same port in this machine's own namespace is another port
            assert probe.connect_ex(("127.0.0.1", port)) != 0 or probe.getpeername()[1] != port


def test_a_killed_runs_namespaces_and_links_are_swept_by_the_next_run(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hosts_module, "orphaned_work_dirs", lambda: [])  # other runs' scratch dirs are not ours
    state = tmp_path / "state"
    killed = RunNames(new_run_id())
    try:
        dead = Journal(killed.run_id, root=state, owner=Owner(os.getpid(), own_start_ticks() - 100))
        vsperf_killed = Host("local", LocalExecutor(), killed, dead)
        vsperf_killed.net.add_netns(killed.switch_netns)
        vsperf_killed.net.add_veth(killed.gen_if(0), killed.switch_netns, killed.phy_if(0), None, mtu_bytes=1500)
        vsperf_killed.spawn("sleeper", ["sleep", "60"], netns=killed.switch_netns)
        assert len(_leftovers(killed.tag)) == 2  # the namespace and the veth's end in this namespace
        with local_lab(new_run_id(), CommandLog(None), state_root=state) as lab:
            assert len(_leftovers(killed.tag)) == 2  # the lab's sweep comes when its run starts
            lab.sweep()
            assert _leftovers(killed.tag) == [] and not dead.path.exists()
    finally:
        _remove(killed.tag)

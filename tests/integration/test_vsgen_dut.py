"""vsgen through a forwarding namespace (root): injected loss, duplication and reordering are
measured exactly, the frames on the wire are the reference frames, and it runs the local lab.

Topology of each test: vsg<id>a [gen port 0] <-> [f0] bridge in vsg<id>f [f1] <-> [gen port 1]
vsg<id>b. The bridge ports have GRO on, so that they take the generator's XDP frames.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import LabRun
from test_vsgen_wire import Net, fresh_net, generator, make_host, release_host, running, sane_latency, sh

from vsperf.host.host import Host
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions
from vsperf.trafficgen.vsgen.frames import build_frame, frame_spec, parse_signature, stamp, vary_of

pytestmark = [pytest.mark.root]

_PACKET_OUTGOING = 4


@dataclass
class Dut:
    net: Net
    fwd: str  # the forwarding namespace
    f0: str  # bridge port towards generator port 0
    f1: str  # bridge port towards generator port 1
    ports: tuple[GenPort, GenPort]
    host: Host


@pytest.fixture
def net() -> Iterator[Net]:
    yield from fresh_net()


@pytest.fixture
def dut(net: Net, tmp_path: Path) -> Iterator[Dut]:
    a, f, b = net.ns("a"), net.ns("f"), net.ns("b")
    r = net.rid
    net.veth(f"vsg{r}0", a, f"vsg{r}f0", f)
    net.veth(f"vsg{r}1", b, f"vsg{r}f1", f)
    sh("ip", "link", "add", f"vsg{r}br", "type", "bridge", ns=f)
    for port in (f"vsg{r}f0", f"vsg{r}f1"):
        sh("ip", "link", "set", port, "master", f"vsg{r}br", ns=f)
        sh("ethtool", "-K", port, "gro", "on", ns=f)
    sh("ip", "link", "set", f"vsg{r}br", "up", ns=f)
    ports = (net.port(a, f"vsg{r}0", "198.18.0.1"), net.port(b, f"vsg{r}1", "198.18.1.1"))
    host = make_host(tmp_path)
    yield Dut(net, f, f"vsg{r}f0", f"vsg{r}f1", ports, host)
    release_host(host)


def nft(ns: str, ruleset: str) -> None:
    subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=ruleset, text=True, check=True,
                   capture_output=True)


def nft_counter(ns: str, table: str, family: str) -> int:
    data = json.loads(sh("nft", "-j", "list", "table", family, table, ns=ns))
    return sum(item["rule"]["expr"][-2]["counter"]["packets"] for item in data["nftables"] if "rule" in item)


def test_every_100th_frame_dropped_is_measured_exactly(dut: Dut) -> None:
    nft(dut.fwd, """table bridge vsgloss {
        chain forward_c {
            type filter hook forward priority 0; policy accept;
            ip daddr 198.18.0.0/15 numgen inc mod 100 == 0 counter drop
        }
    }""")
    with running(dut.host, VSGEN_STREAM_DETAIL=10) as gen:
        gen.start(dut.ports)
        traffic = Traffic(bidir=False, multistream=10, stream_type="L3")
        gen.trial(traffic, 10_000.0, 0.1)  # the first run also probes the XDP path
        before = nft_counter(dut.fwd, "vsgloss", "bridge")
        result = gen.trial(traffic, 50_000.0, 0.4)
        dropped = nft_counter(dut.fwd, "vsgloss", "bridge") - before
        assert result.tx_frames == 20_000
        assert result.loss_frames == dropped == 200
        assert gen.last_run is not None
        (d,) = gen.last_run.dirs
        assert d.path == "xdp-live"
        # Round robin over 10 streams: every 100th frame always falls on the same stream.
        assert (d.lost, d.streams_with_loss, d.max_stream_loss) == (200, 1, 200)
        sane_latency(result)


def test_duplicated_frames_are_detected_and_counted_once(dut: Dut) -> None:
    nft(dut.fwd, f"""table netdev vsgdup {{
        chain ingress_c {{
            type filter hook ingress device "{dut.f0}" priority 0;
            ip daddr 198.18.0.0/15 numgen inc mod 50 == 0 counter dup to "{dut.f1}"
        }}
    }}""")
    with running(dut.host) as gen:
        gen.start(dut.ports)
        result = gen.trial(Traffic(bidir=False), 20_000.0, 0.5)
        assert result.tx_frames == result.rx_frames == 10_000  # each frame counted once
        assert "rx_duplicated_frames" in result.flags
        assert gen.last_run is not None
        assert gen.last_run.dirs[0].dup == 200 and gen.last_run.dirs[0].lost == 0


def test_reordered_frames_are_detected(dut: Dut) -> None:
    # Odd sequence numbers wait in a slow HTB class: they arrive after later even ones.
    for argv in (
        ("tc", "qdisc", "add", "dev", dut.f1, "root", "handle", "1:", "htb", "default", "10"),
        ("tc", "class", "add", "dev", dut.f1, "parent", "1:", "classid", "1:10", "htb", "rate", "1gbit"),
        ("tc", "class", "add", "dev", dut.f1, "parent", "1:", "classid", "1:20", "htb", "rate", "2mbit",
         "ceil", "2mbit", "burst", "1600", "cburst", "1600"),
        # The sequence number's last byte is at 37 from the IPv4 header (20 + 8 + 9).
        ("tc", "filter", "add", "dev", dut.f1, "parent", "1:", "protocol", "ip", "prio", "1", "u32",
         "match", "u8", "0x01", "0x01", "at", "37", "flowid", "1:20"),
    ):
        sh(*argv, ns=dut.fwd)
    with running(dut.host, TRAFFICGEN_RESIDUAL_WAIT_S=0.5) as gen:
        gen.start(dut.ports)
        result = gen.trial(Traffic(bidir=False), 10_000.0, 0.4)
        assert result.tx_frames == result.rx_frames == 4000
        assert "rx_reordered_frames" in result.flags
        assert gen.last_run is not None
        d = gen.last_run.dirs[0]
        assert d.lost == 0 and d.dup == 0 and 0 < d.reorder <= 2000


class Capture(threading.Thread):
    """Frames leaving `ifname` in namespace `ns`, caught by a packet socket."""

    def __init__(self, ns: str, ifname: str, count: int) -> None:
        super().__init__(daemon=True)
        self.ns, self.ifname, self.count = ns, ifname, count
        self.frames: list[bytes] = []
        self.ready = threading.Event()

    def run(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(f"/run/netns/{self.ns}", os.O_RDONLY)
        try:
            assert libc.setns(fd, 0x40000000) == 0
        finally:
            os.close(fd)
        with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3)) as sock:
            sock.bind((self.ifname, 0))
            sock.settimeout(0.2)
            self.ready.set()
            deadline = time.monotonic() + 10
            while len(self.frames) < self.count and time.monotonic() < deadline:
                try:
                    data, addr = sock.recvfrom(65535)
                except TimeoutError:
                    continue
                if addr[2] == _PACKET_OUTGOING and parse_signature(data) is not None:
                    self.frames.append(data)


def test_frames_on_the_wire_are_the_reference_frames(dut: Dut) -> None:
    traffic = Traffic(bidir=False, multistream=100, stream_type="L3", frame_size_bytes=128)
    capture = Capture(dut.fwd, dut.f1, 300)
    capture.start()
    assert capture.ready.wait(5)
    with running(dut.host) as gen:
        gen.start(dut.ports)
        gen.trial(traffic, 5000.0, 0.1)
        assert gen._engine is not None and gen.last_run is not None
        run_tag, trial_tag = int(gen._engine.hello["run_tag"]), gen.last_run.trial_tag
    capture.join()
    forward = directions(traffic, dut.ports)[0]
    template = build_frame(frame_spec(traffic, forward, run_tag))
    vary, base = vary_of(forward)
    frames = [f for f in capture.frames if parse_signature(f).trial_tag == trial_tag]  # type: ignore[union-attr]
    assert len(frames) >= 250
    for frame in frames:
        sig = parse_signature(frame)
        assert sig is not None and sig.run_tag == run_tag
        assert frame == stamp(template, 14, vary, base, 0, sig.stream, trial_tag, sig.seq, sig.tx_ns)
    assert {parse_signature(f).stream for f in frames} == set(range(100))  # type: ignore[union-attr]


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs"])
def test_the_local_lab_p2p(lab_run: LabRun, vswitch: str) -> None:
    if vswitch == "ovs" and shutil.which("ovs-vswitchd") is None:
        pytest.skip("Open vSwitch missing: apt-get install openvswitch-switch")
    traffic = Traffic(bidir=True, multistream=10, stream_type="L4")
    with lab_run.deployment("p2p", traffic, VSWITCH=vswitch) as dep:
        switch = {k: v for k, v in lab_run.settings.items() if k.startswith("VSWITCH")}
        gen = generator(lab_run.hosts.trafficgen, **switch)
        try:
            gen.start(dep.gen_ports)
            result = gen.trial(traffic, 4000.0, 1.0)
            dep.check_alive()
            assert result.tx_frames == result.rx_frames == 4000
            assert abs(result.actual_tx_rate_fps / 4000.0 - 1) <= 0.005
            sane_latency(result)
            burst = gen.burst(traffic, 1000)
            assert burst.tx_frames == 1000
        finally:
            gen.stop()

"""The trafgen backend on its generator host (faked: no root): its checks there, sender CPUs, the
expected VLAN, one receive agent per namespace of the ports, and trials counted exactly."""

from __future__ import annotations

import signal
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from gen_host import recorded
from settings_util import make_settings
from trafgen_host import FakeGenHost, FakeProc, host

from vsperf.errors import PrerequisiteError, TrafficGenError
from vsperf.search.measurer import FLAG_UNDER_DELIVERY
from vsperf.traffic import Traffic, Vlan
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions
from vsperf.trafficgen.trafgen import agent, bpf
from vsperf.trafficgen.trafgen.backend import FLAG_RX_UNTAGGED, FLAG_RX_WRONG_VLAN, TrafgenTrafficGenerator
from vsperf.trafficgen.trafgen.config import packet_config
from vsperf.trafficgen.trafgen.rxcount import NO_VLAN

CPUS = ("grep", "^Cpus_allowed_list:", "/proc/self/status")
PORTS = (GenPort("ns0", "g0", "02:00:00:00:00:01", "198.18.0.1"), GenPort("ns1", "g1", "02:00:00:00:00:02",
                                                                            "198.18.1.1"))
PMD_ON_CPU_1: dict[str, Any] = {"VSWITCH": "ovs", "VSWITCH_PMD_CPU_MASK": "0x2"}


def _gen(tmp_path: Path, ex: FakeGenHost | None = None, **settings: Any) -> TrafgenTrafficGenerator:
    ex = ex or FakeGenHost(answers={CPUS: (0, "Cpus_allowed_list:\t0-3\n")})
    return TrafgenTrafficGenerator(make_settings(settings), host(ex, tmp_path))


def test_explicit_cpus_repeat_over_ports(tmp_path: Path) -> None:
    gen = _gen(tmp_path, TRAFGEN_CPUS=[3])
    assert gen._cpu_for(0) == 3 and gen._cpu_for(1) == 3


def test_senders_avoid_pmd_cpus_only_where_the_switch_runs(tmp_path: Path) -> None:
    gen = _gen(tmp_path, **PMD_ON_CPU_1)  # the generator host's CPUs: 0-3 (read there, not here)
    assert [gen._cpu_for(i) for i in range(3)] == [0, 2, 3]
    gen.switch_on_host = False  # a testbed whose DUT host is another machine
    assert [gen._cpu_for(i) for i in range(2)] == [0, 1]
    bridge = _gen(tmp_path, VSWITCH="linux-bridge", VSWITCH_PMD_CPU_MASK="0x2")
    assert [bridge._cpu_for(i) for i in range(2)] == [0, 1]


def test_expected_vlan(tmp_path: Path) -> None:
    gen = _gen(tmp_path)
    plain = GenPort(None, "g1", "02:00:00:00:00:01", "198.18.1.1")
    pushed = GenPort(None, "g1", "02:00:00:00:00:01", "198.18.1.1", rx_vlan_id=100)
    assert gen._expected_vlan(Traffic(), plain) == NO_VLAN
    assert gen._expected_vlan(Traffic(vlan=Vlan(enabled=True, id=9)), plain) == 9
    assert gen._expected_vlan(Traffic(vlan=Vlan(enabled=True, id=9)), pushed) == 100


def test_bad_requests(tmp_path: Path) -> None:
    gen = _gen(tmp_path)
    with pytest.raises(TrafficGenError, match="positive"):
        gen.trial(Traffic(), 0, 1)
    with pytest.raises(TrafficGenError, match="before start"):
        gen.trial(Traffic(), 100, 1)
    with pytest.raises(TrafficGenError, match="two generator ports"):
        gen.start([])


COMMAND_V = 'command -v "$1"'


def test_prerequisites_are_checked_on_the_generator_host(tmp_path: Path) -> None:
    root: dict[tuple[str, ...], tuple[int, str]] = {("id", "-u"): (0, "0\n")}
    _gen(tmp_path, FakeGenHost(answers=root)).check_prerequisites()
    with pytest.raises(PrerequisiteError, match=r"^host gen: the trafgen generator needs root: run as root, or use "
                                                r"--trafficgen dummy$"):
        _gen(tmp_path, FakeGenHost(answers={("id", "-u"): (0, "1000\n")})).check_prerequisites()
    with pytest.raises(PrerequisiteError, match=r"^the trafgen generator needs root"):
        _gen(tmp_path, FakeGenHost("local", answers={("id", "-u"): (0, "1000\n")})).check_prerequisites()
    for program, package in TrafgenTrafficGenerator.PROGRAMS.items():
        missing = FakeGenHost(answers={**root, ("sh", "-c", COMMAND_V, "sh", program): (1, "")})
        with pytest.raises(PrerequisiteError, match=rf"^host gen: {program} is missing: apt-get install {package} "
                                                    r"there$"):
            _gen(tmp_path, missing).check_prerequisites()


def test_a_kernel_that_refuses_bpf_maps_is_said_before_anything_is_created(tmp_path: Path) -> None:
    refused = FakeGenHost(answers={("id", "-u"): (0, "0\n"), ("python3", "-"): (
        1, "Traceback (most recent call last):\nBpfError: [Errno 1] bpf(cmd 0) failed: Operation not permitted\n")})
    with pytest.raises(PrerequisiteError, match=r"^host gen: the kernel refuses BPF maps \(BpfError: \[Errno 1\] "
                                                r"bpf\(cmd 0\) failed: Operation not permitted\); frames cannot be "
                                                r"counted$"):
        _gen(tmp_path, refused).check_prerequisites()
    # the host's python3 ran the agent's own bpf module, given on its stdin: nothing was staged
    probe = refused.inputs[("python3", "-")]
    assert probe.startswith(Path(bpf.__file__).read_text()) and probe.endswith("ArrayMap(1).close()\n")
    assert refused.files == {} and refused.spawned == []


def test_version_is_the_generator_hosts(tmp_path: Path) -> None:
    ex = FakeGenHost(answers={("trafgen", "-v"): (1, "trafgen 0.6.8 (Flutternozzle), Git id: (none)\n")})
    assert _gen(tmp_path, ex).version() == "0.6.8"  # trafgen -v exits 1
    assert ex.commands("trafgen") == [["trafgen", "-v"]]


# --- trials on a faked wire --------------------------------------------------------------------------


class FakeMap:
    def __init__(self, fd: int, slots: list[int]) -> None:
        self.fd, self.slots = fd, slots

    def values(self) -> list[int]:
        return list(self.slots)

    def close(self) -> None:
        pass


class Wire:
    """The generator ports wired through a device that delivers each frame (minus `lost` per
    trafgen) to the other port, untagged or tagged with `vlan`; trafgen "sends" its count as it
    starts and exits, as it reports in its log."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, lost: int = 0, vlan: int | None = None) -> None:
        self.lost, self.vlan = lost, vlan
        self.tx: dict[str, int] = defaultdict(int)
        self.maps: dict[int, list[int]] = {}
        self.attached: dict[str, int] = {}  # ifname -> its counter's map
        wire = self

        class WiredAgent(agent.Agent):
            def attach(self, map_fd: int, ifname: str, code: bytes) -> None:
                super().attach(map_fd, ifname, code)
                wire.attached[ifname] = map_fd

        def array_map(slots: int) -> FakeMap:
            fd = 40 + len(self.maps)
            self.maps[fd] = [0] * slots
            return FakeMap(fd, self.maps[fd])

        monkeypatch.setattr(bpf, "ArrayMap", array_map)
        monkeypatch.setattr(bpf, "load_sched_cls", lambda insns, name: 77)
        monkeypatch.setattr("socket.if_nametoindex", lambda name: 5)
        monkeypatch.setattr(agent, "tx_frames", lambda _text, ifname: self.tx[ifname])
        self.ex = FakeGenHost(make_agent=lambda: WiredAgent(lambda _request: 0),
                              answers={CPUS: (0, "Cpus_allowed_list:\t0-3\n")})
        self.ex.on_spawn = self.send

    def send(self, proc: FakeProc) -> None:
        argv = proc.program
        if argv[0] != "trafgen":
            return
        ifname, frames = argv[argv.index("--dev") + 1], int(argv[argv.index("-n") + 1])
        self.tx[ifname] += frames
        peer = next(p.ifname for p in PORTS if p.ifname != ifname)
        slots = self.maps[self.attached[peer]]
        if self.vlan is None:
            slots[0] += frames - self.lost  # untagged
        else:
            slots[1 if self.vlan == 100 else 2] += frames - self.lost  # tagged: expected / another id
        log = proc.argv[4]
        self.ex.answers[("cat", "--", log)] = (0, f"  {frames} packets outgoing\n  0 sec, 250000 usec on CPU0 "
                                                  f"({frames} packets)\n")
        proc.exit(0)

    def trafgens(self) -> list[FakeProc]:
        return [p for p in self.ex.spawned if p.program[0] == "trafgen"]


def _started(tmp_path: Path, wire: Wire, ports: tuple[GenPort, ...] = PORTS) -> TrafgenTrafficGenerator:
    gen = _gen(tmp_path, wire.ex, TRAFFICGEN_RESIDUAL_WAIT_S=0.0, TRAFGEN_CPUS=[1, 3])
    gen.start(ports)
    return gen


def test_one_receive_agent_per_namespace_of_the_ports_and_stop_ends_them(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    wire = Wire(monkeypatch)
    gen = _started(tmp_path, wire)
    assert [(p.program[0], p.netns) for p in wire.ex.spawned] == [("python3", "ns0"), ("python3", "ns1")]
    assert [e.name for e in recorded(gen.host, "process")] == ["trafgen receive agent ns0",
                                                               "trafgen receive agent ns1"]
    gen.stop()
    assert all(p.returncode == 0 for p in wire.ex.spawned)  # they ended with their input
    assert recorded(gen.host, "process") == []
    same = Wire(monkeypatch)
    _started(tmp_path, same, tuple(GenPort(None, p.ifname, p.mac, p.ipv4) for p in PORTS)).stop()
    assert [p.netns for p in same.ex.spawned] == [None]  # a testbed host's own interfaces: one agent


def test_a_bidirectional_burst_is_split_and_counted_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wire = Wire(monkeypatch)
    gen = _started(tmp_path, wire)
    traffic = Traffic(bidir=True)
    result = gen.burst(traffic, 1001)
    # the faked trafgen sends ~4 kfps, far below line rate: flagged, not counted as the device's loss
    assert (result.kind, result.tx_frames, result.rx_frames, result.flags) == ("burst", 1001, 1001,
                                                                              (FLAG_UNDER_DELIVERY,))
    first, second = wire.trafgens()
    assert (first.program[2], first.program[6], first.netns) == ("g0", "501", "ns0")  # the remainder goes first
    assert (second.program[2], second.program[6], second.netns) == ("g1", "500", "ns1")
    assert "--qdisc-path" not in first.program  # a burst is not paced
    assert result.actual_tx_rate_fps == pytest.approx(501 / 0.25 + 500 / 0.25)  # trafgen's own clock
    # each direction's frames, written on the host; each sender pinned to its CPU
    conf = wire.ex.files["/tmp/vsperf-abc123-trafgen/port1.cfg"][0]
    assert conf == packet_config(traffic, directions(traffic, PORTS)[1])
    pins = [argv[-2:] for argv in wire.ex.commands("sh") if argv[-2:] in ([str(first.pid), "1"],
                                                                       [str(second.pid), "3"])]
    assert len(pins) == 2
    assert [e.name for e in recorded(gen.host, "process")] == ["trafgen receive agent ns0",
                                                               "trafgen receive agent ns1"]  # trafgens forgotten
    gen.stop()


def test_a_rate_trial_paces_each_port_and_counts_the_loss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wire = Wire(monkeypatch, lost=3)
    gen = _started(tmp_path, wire)
    result = gen.trial(Traffic(bidir=True, frame_size_bytes=64), 2000.0, 0.5)
    assert (result.kind, result.tx_frames, result.rx_frames) == ("rate", 1000, 994)
    assert [p.program[6] for p in wire.trafgens()] == ["500", "500"]
    paced = [(argv, netns) for argv, netns in wire.ex.runs if argv[:3] == ["tc", "qdisc", "replace"]]
    assert [(argv[4], argv[8], netns) for argv, netns in paced] == [("g0", "480000bit", "ns0"),
                                                                    ("g1", "480000bit", "ns1")]  # 1000 fps x 60 B
    assert [(e.name, e.netns, e.state["qdisc"]) for e in recorded(gen.host, "qdisc")] == [
        ("g1", "ns1", "clsact"), ("g0", "ns0", "clsact"), ("g0", "ns0", "root"), ("g1", "ns1", "root")]
    gen.stop()
    assert [argv for argv, _ in wire.ex.runs if argv[:3] == ["tc", "qdisc", "del"]] == [
        ["tc", "qdisc", "del", "dev", "g0", "root"], ["tc", "qdisc", "del", "dev", "g1", "root"]]


def test_frames_without_the_pushed_vlan_tag_are_flagged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pushed = (PORTS[0], GenPort("ns1", "g1", "02:00:00:00:00:02", "198.18.1.1", rx_vlan_id=100))
    untagged = Wire(monkeypatch)
    gen = _started(tmp_path, untagged, pushed)
    result = gen.burst(Traffic(bidir=False), 10)
    assert (result.tx_frames, result.rx_frames, result.flags) == (10, 0, (FLAG_UNDER_DELIVERY, FLAG_RX_UNTAGGED))
    gen.stop()
    other = Wire(monkeypatch, vlan=200)
    gen = _started(tmp_path, other, pushed)
    assert gen.burst(Traffic(bidir=False), 10).flags == (FLAG_UNDER_DELIVERY, FLAG_RX_WRONG_VLAN)
    gen.stop()
    expected = Wire(monkeypatch, vlan=100)
    gen = _started(tmp_path, expected, pushed)
    result = gen.burst(Traffic(bidir=False), 10)
    assert (result.rx_frames, result.flags) == (10, (FLAG_UNDER_DELIVERY,))
    gen.stop()


def test_a_failed_start_leaves_nothing_running(tmp_path: Path) -> None:
    ex = FakeGenHost(python3=False)
    gen = _gen(tmp_path, ex)
    with pytest.raises(PrerequisiteError, match="install python3 there"):
        gen.start(PORTS)
    assert [p.signals for p in ex.spawned] == [[signal.SIGTERM]]  # the first agent, stopped; no second
    assert recorded(gen.host, "process") == []

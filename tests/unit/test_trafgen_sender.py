"""trafgen on one port of the generator host: the pacer that spaces its frames evenly (journaled
before it is set), its configuration, command line and log in the run's directory there, its
process started and stopped through the host, and what it sent, timed on the wire."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from gen_host import recorded
from trafgen_host import FakeGenHost, host

from vsperf.errors import TrafficGenError
from vsperf.host.host import Host
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.trafgen import agent
from vsperf.trafficgen.trafgen.agent_client import AgentClient
from vsperf.trafficgen.trafgen.sender import PIN_SCRIPT, PortSender, SendResult, pacer_argv

DIR = "/tmp/vsperf-abc123-trafgen"
PORT = GenPort(netns="ns0", ifname="b0", mac="02:00:00:00:00:01", ipv4="198.18.0.1",
               peer_mac="02:00:00:00:00:02", peer_ipv4="198.18.0.2")
CONF = "{ fill(0x00, 60) }\n"
REPORT = ("     1 packets to schedule\nRunning! Hang up with ^C!\n\n       1000 packets outgoing\n"
          "       60000 bytes outgoing\n           0 sec, 500000 usec on CPU0 (1000 packets)\n")


def test_pacer_rate_is_frames_times_bytes() -> None:
    argv = pacer_argv("g0", 1_000, 60)
    assert argv[:7] == ["tc", "qdisc", "replace", "dev", "g0", "root", "tbf"]
    assert argv[argv.index("rate") + 1] == "480000bit"  # 1 kpps * 60 B * 8
    assert int(argv[argv.index("burst") + 1]) == 4 * 60  # small rates: a few frames


def test_pacer_burst_grows_with_the_rate() -> None:
    argv = pacer_argv("g0", 1_000_000, 60)
    assert int(argv[argv.index("burst") + 1]) == 500 * 60  # 0.5 ms of frames


def test_send_result_rate() -> None:
    assert SendResult(0, 1000, 1000, 0.5).rate_fps == 2000
    assert SendResult(0, 0, 0, 0.0).rate_fps == 0


class Wire:
    """The port's transmit counter as the agent reads it (tx_packets + tx_dropped)."""

    def __init__(self) -> None:
        self.count = 0


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> Wire:
    counter = Wire()
    monkeypatch.setattr(agent, "tx_frames", lambda _text, ifname: counter.count)
    monkeypatch.setattr("socket.if_nametoindex", lambda name: 5)
    return counter


@pytest.fixture
def ex() -> FakeGenHost:
    return FakeGenHost(answers={("cat", "--", f"{DIR}/port0.log"): (0, REPORT)})


@pytest.fixture
def gen(ex: FakeGenHost, tmp_path: Path) -> Host:
    return host(ex, tmp_path)


@pytest.fixture
def sender(gen: Host, wire: Wire) -> Iterator[PortSender]:
    client = AgentClient(gen, PORT.netns)
    client.open()
    port = PortSender(gen, client, PORT, 0, 1)
    yield port
    port.stop()
    client.close()


def test_a_pacer_is_journaled_before_it_is_set(sender: PortSender, ex: FakeGenHost, gen: Host) -> None:
    journaled_when_set: list[bool] = []
    ex.on_run = lambda argv: journaled_when_set.append(bool(recorded(gen, "qdisc"))) if argv[:3] == [
        "tc", "qdisc", "replace"] else None
    sender.pace(1000.0, 60)
    assert journaled_when_set == [True]
    (entry,) = recorded(gen, "qdisc")
    assert (entry.host, entry.name, entry.netns, entry.state["qdisc"]) == ("gen", "b0", "ns0", "root")
    assert ex.agents[0].pacers == {"b0"}  # the agent deletes it if vsperf goes away
    (argv, netns), = [(a, n) for a, n in ex.runs if a[:3] == ["tc", "qdisc", "replace"]]
    assert argv == pacer_argv("b0", 1000.0, 60) and netns == "ns0"
    sender.pace(1000.0, 60)  # unchanged: nothing to do
    assert len([a for a, _ in ex.runs if a[:3] == ["tc", "qdisc", "replace"]]) == 1
    sender.pace(None, 60)  # unpaced (a burst): the pacer goes
    assert ex.runs[-1] == (["tc", "qdisc", "del", "dev", "b0", "root"], "ns0")


def test_trafgen_starts_through_the_host_in_the_runs_directory(sender: PortSender, ex: FakeGenHost,
                                                               gen: Host) -> None:
    sender.pace(1000.0, 60)
    sender.start(CONF, 1000, 1000.0, 60)
    assert ex.files[f"{DIR}/port0.cfg"] == (CONF, 0o600)
    assert (["rm", "-f", "--", f"{DIR}/port0.log"], None) in ex.runs  # the last trial's log
    trafgen = ex.spawned[-1]
    assert trafgen.program == ["trafgen", "--dev", "b0", "--conf", f"{DIR}/port0.cfg", "-n", "1000", "-P", "1",
                               "--no-sock-mem", "--notouch-irq", "--qdisc-path", "-b", "1000000000pps"]
    assert trafgen.netns == "ns0" and trafgen.argv[4] == f"{DIR}/port0.log"  # its output, on the host
    assert [e.name for e in recorded(gen, "process")] == ["trafgen receive agent ns0", "trafgen port0"]
    # moved off CPU 0 by the pin script on the host: its PID and the CPU are arguments
    assert ["sh", "-c", PIN_SCRIPT, "sh", str(trafgen.pid), "1"] in ex.commands("sh")
    assert DIR in [e.name for e in recorded(gen, "dir")]


def test_jumbo_frames_need_jumbo_support(sender: PortSender, ex: FakeGenHost) -> None:
    sender.pace(None, 9000)
    sender.start(CONF, 10, None, 9000)
    assert ex.spawned[-1].program[-1] == "--jumbo-support" and "--qdisc-path" not in ex.spawned[-1].program


def test_an_overrunning_trafgen_is_interrupted_once(sender: PortSender, ex: FakeGenHost) -> None:
    sender.pace(1000.0, 60)
    sender.start(CONF, 1000, 1000.0, 60)
    for _ in range(3):  # run_senders asks at every poll until it has exited
        sender.interrupt()
    assert ex.spawned[-1].signals == [signal.SIGINT] and sender.interrupted


def test_what_was_sent_is_counted_on_the_wire_and_trafgen_is_forgotten(sender: PortSender, ex: FakeGenHost,
                                                                       gen: Host, wire: Wire) -> None:
    wire.count = 7  # frames of an earlier trial
    sender.pace(None, 60)
    sender.start(CONF, 1000, None, 60)
    trafgen = ex.spawned[-1]
    wire.count = 507
    sender.poll()
    assert sender.started and not sender.done
    wire.count = 1007
    trafgen.exit(0)
    sender.poll()
    assert sender.done
    result = sender.result()
    # unpaced: trafgen bypasses the qdisc, and its own clock times the burst
    assert result == SendResult(0, trafgen_frames=1000, wire_frames=1000, wire_time_s=0.5)
    assert [e.name for e in recorded(gen, "process")] == ["trafgen receive agent ns0"]


def test_a_failed_trafgen_is_an_error_with_its_last_lines(sender: PortSender, ex: FakeGenHost, wire: Wire) -> None:
    ex.answers[("cat", "--", f"{DIR}/port0.log")] = (0, "Cannot open device b0\nNo such device\n")
    sender.pace(None, 60)
    sender.start(CONF, 1000, None, 60)
    ex.spawned[-1].exit(1)
    sender.poll()
    with pytest.raises(TrafficGenError, match=r"^trafgen on b0 failed \(exit 1\): Cannot open device b0 \| "
                                              r"No such device$"):
        sender.result()


def test_stop_stops_trafgen_by_its_pid_and_removes_the_pacer(sender: PortSender, ex: FakeGenHost,
                                                             gen: Host) -> None:
    sender.pace(1000.0, 60)
    sender.start(CONF, 1000, 1000.0, 60)
    trafgen = ex.spawned[-1]
    sender.stop()
    assert trafgen.signals == [signal.SIGTERM] and not sender.running()
    assert ex.runs[-1] == (["tc", "qdisc", "del", "dev", "b0", "root"], "ns0")
    assert [e.name for e in recorded(gen, "process")] == ["trafgen receive agent ns0"]

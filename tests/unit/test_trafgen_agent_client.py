"""The trafgen receive agent's client: the agent staged and started through the generator host (this
machine or a testbed's, the same way; one per namespace of the ports), its protocol, what it
journals, and the receive counters it holds."""

from __future__ import annotations

import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from gen_host import generator_host, recorded
from trafgen_host import FakeGenHost, host

from vsperf.errors import DeploymentError, PrerequisiteError, TrafficGenError
from vsperf.host.host import Host
from vsperf.host.journal import Entry
from vsperf.trafficgen.trafgen import agent, bpf
from vsperf.trafficgen.trafgen.agent_client import AGENT_LABEL, AgentClient, RxCounter, parse_answer
from vsperf.trafficgen.trafgen.rxcount import SLOTS, RxCounts, counter_program

FILES = "/tmp/vsperf-abc123-files"


class FakeMap:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def values(self) -> list[int]:
        return [5, 0, 1, 9]

    def close(self) -> None:
        pass


@pytest.fixture
def fake_bpf(monkeypatch: pytest.MonkeyPatch) -> list[list[Any]]:
    """The agent's maps and programs without the kernel: map FD 40 + slots, programs loaded as FD 77."""
    loaded: list[list[Any]] = []

    def load(insns: list[Any], name: str) -> int:
        loaded.append(insns)
        return 77

    # the agent in the package uses the package's bpf module (on a host: the copy beside it)
    monkeypatch.setattr(bpf, "ArrayMap", lambda slots: FakeMap(40 + slots))
    monkeypatch.setattr(bpf, "load_sched_cls", load)
    monkeypatch.setattr("socket.if_nametoindex", lambda name: 5)
    return loaded


def test_parse_answer() -> None:
    assert parse_answer("ok 1 2 3\n", "host gen: ") == ["1", "2", "3"] and parse_answer("ok\n", "") == []
    with pytest.raises(TrafficGenError, match=r"^host gen: trafgen receive agent: tx: no interface b9$"):
        parse_answer("error tx: no interface b9\n", "host gen: ")
    with pytest.raises(TrafficGenError, match=r"^the trafgen receive agent ended$"):
        parse_answer("", "")


def test_open_stages_the_agent_in_the_runs_directory_and_starts_it_through_the_host(tmp_path: Path) -> None:
    ex = FakeGenHost()
    gen = host(ex, tmp_path)
    client = AgentClient(gen, None)
    client.open()
    # the agent and the bpf module it imports, side by side in the run's directory (removed with the run)
    assert ex.commands("mkdir")[0] == ["mkdir", "-p", "-m", "700", "--", FILES]
    assert {path: mode for path, (_text, mode) in ex.files.items()} == {f"{FILES}/agent.py": 0o400,
                                                                        f"{FILES}/bpf.py": 0o400}
    assert FILES in [e.name for e in recorded(gen, "dir")]
    (proc,) = ex.spawned
    assert proc.program == ["python3", f"{FILES}/agent.py"] and proc.netns is None
    assert proc.argv[4] == "/tmp/vsperf-abc123-logs/trafgen-agent.log"  # its stderr
    (entry,) = recorded(gen, "process")
    assert (entry.name, entry.pid, entry.start_ticks) == (AGENT_LABEL, proc.pid, proc.start_ticks)
    assert proc.stdin.lines == ["read 0"]  # any answer proves that python3 runs it there
    client.close()
    assert proc.returncode == 0 and proc.signals == []  # it ended with its input, as the real one does
    assert recorded(gen, "process") == []
    client.close()  # twice is fine


def test_one_agent_in_a_namespace_of_this_machine(tmp_path: Path) -> None:
    ex = FakeGenHost("local")
    local = host(ex, tmp_path)
    client = AgentClient(local, "vspabc123g0")
    client.open()
    (proc,) = ex.spawned
    assert proc.netns == "vspabc123g0" and proc.argv[4] == "/tmp/vsperf-abc123-logs/trafgen-agent-vspabc123g0.log"
    assert proc.program == ["python3", agent.__file__]  # this machine: the package's own file, not a copy
    assert ex.files == {}
    (entry,) = recorded(local, "process")
    assert entry.name == f"{AGENT_LABEL} vspabc123g0"
    client.close()


def test_an_agent_that_does_not_answer_is_a_prerequisite_error_and_nothing_stays(tmp_path: Path) -> None:
    ex = FakeGenHost(python3=False)
    gen = host(ex, tmp_path)
    with pytest.raises(PrerequisiteError, match=r"^host gen: cannot run the trafgen receive agent \(host gen: the "
                                                r"trafgen receive agent ended\); install python3 there$"):
        AgentClient(gen, None).open()
    (proc,) = ex.spawned
    assert proc.signals == [signal.SIGTERM]  # stopped by its PID
    assert recorded(gen, "process") == []


def test_a_request_to_a_closed_agent_is_an_error(tmp_path: Path) -> None:
    client = AgentClient(host(FakeGenHost(), tmp_path), None)
    with pytest.raises(TrafficGenError, match=r"^host gen: the trafgen receive agent is not running$"):
        client.tx_frames("b0")


def test_receive_counter_sends_the_assembled_program_for_the_agents_map(
        tmp_path: Path, fake_bpf: list[list[Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    ex = FakeGenHost()
    gen = host(ex, tmp_path)
    client = AgentClient(gen, None)
    client.open()
    (ag,) = ex.agents
    journaled: list[tuple[Entry, bool]] = []  # each entry, and whether the agent had added the qdisc then
    assert gen.journal is not None
    record = gen.journal.record

    def spy(entry: Entry) -> Entry:
        journaled.append((entry, entry.name in ag.clsacts))
        return record(entry)

    monkeypatch.setattr(gen.journal, "record", spy)
    counter = RxCounter(client, "b0", 10)
    counter.attach()
    # the same program on every host, with the map descriptor the agent got
    (insns,) = fake_bpf
    assert insns == counter_program(40 + SLOTS, 10)
    assert counter.read() == RxCounts(5, 0, 1, 9)
    assert ag.clsacts == {"b0"} and ag.progs == [77]
    ((entry, added),) = journaled
    assert (entry.kind, entry.host, entry.name, entry.state["qdisc"]) == ("qdisc", "gen", "b0", "clsact")
    assert not added  # journaled before the agent added it
    assert ex.commands("tc") == [["tc", "-j", "qdisc", "show", "dev", "b0"]]  # the port's root qdisc before
    counter.detach()
    assert ag.clsacts == set()
    with pytest.raises(TrafficGenError, match=r"^host gen: receive counter on b0 is not attached$"):
        counter.read()
    counter.detach()  # twice is fine
    assert [line.split()[0] for line in ex.spawned[0].stdin.lines] == ["read", "map", "attach", "read", "detach"]
    client.close()


def test_a_refused_attach_names_the_port(tmp_path: Path, fake_bpf: list[list[Any]]) -> None:
    ex = FakeGenHost(make_agent=lambda: agent.Agent(lambda _request: 1))  # the kernel says EPERM
    client = AgentClient(host(ex, tmp_path), None)
    client.open()
    with pytest.raises(DeploymentError, match=r"^cannot attach the receive counter to b0: host gen: trafgen receive "
                                              r"agent: attach: .*Operation not permitted$"):
        RxCounter(client, "b0", 10).attach()
    client.close()


def test_a_pacer_is_journaled_before_the_agent_knows_of_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("socket.if_nametoindex", lambda name: 5)
    ex = FakeGenHost()
    gen = host(ex, tmp_path)
    client = AgentClient(gen, "ns0")
    client.open()
    client.paced("b0")
    (entry,) = recorded(gen, "qdisc")
    assert (entry.name, entry.netns, entry.state["qdisc"]) == ("b0", "ns0", "root")
    assert ex.agents[0].pacers == {"b0"}  # deleted by the agent when its input ends
    client.close()


# --- the real agent, run by this machine's python3 ----------------------------------------------


@pytest.fixture(params=["local", "gen"])
def real_host(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Host]:
    with generator_host(tmp_path, request.param) as h:
        yield h


def test_the_agent_runs_with_the_hosts_python3_and_ends_with_its_input(real_host: Host) -> None:
    client = AgentClient(real_host, None)
    client.open()
    (entry,) = recorded(real_host, "process")
    proc = psutil.Process(entry.pid)
    # on a testbed host, the copy in the run's directory runs alone (bpf.py beside it, no vsperf there)
    script = agent.__file__ if real_host.local else str(real_host.names.run_dir("files") / "agent.py")
    assert proc.cmdline()[-1] == script
    before = client.tx_frames("lo")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:  # the agent reads this machine's lo
        for _ in range(20):
            sender.sendto(b"x", ("127.0.0.1", 9))
    assert client.tx_frames("lo") - before >= 20
    where = "" if real_host.local else "host gen: "
    with pytest.raises(TrafficGenError, match=rf"^{where}trafgen receive agent: tx: no interface vsperf-none0$"):
        client.tx_frames("vsperf-none0")
    client.close()
    assert not psutil.pid_exists(entry.pid) or proc.status() == psutil.STATUS_ZOMBIE
    assert recorded(real_host, "process") == []

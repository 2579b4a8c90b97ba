"""trafgen on a generator host: the run's directory there, the agent's protocol, the journal."""

from __future__ import annotations

import io
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any, cast

import pytest

from vsperf.deploy.base import GenPort
from vsperf.errors import PrerequisiteError, TrafficGenError
from vsperf.executor import Executor, Process
from vsperf.trafficgen.trafgen import agent, bpf
from vsperf.trafficgen.trafgen.remote import (
    AGENT_LABEL,
    HostTrafgen,
    RemoteGenHost,
    RemoteRxCounter,
    parse_answer,
    remote_dir,
)
from vsperf.trafficgen.trafgen.rxcount import SLOTS, RxCounts, counter_program
from vsperf.trafficgen.trafgen.sender import PortSender


class AgentStdin(io.RawIOBase):
    """The agent's input: each line is answered by a real `agent.Agent` (netlink faked)."""

    def __init__(self, ag: agent.Agent, answers: io.BytesIO) -> None:
        self.agent, self.answers, self.lines = ag, answers, []  # type: ignore[var-annotated]
        self.buffer = b""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.buffer += bytes(data)
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            self.lines.append(line.decode())
            pos = self.answers.tell()
            self.answers.seek(0, io.SEEK_END)
            self.answers.write(self.agent.handle(line.decode()).encode() + b"\n")
            self.answers.seek(pos)
        return len(data)


class FakeProc:
    def __init__(self, pid: int, argv: Sequence[str]) -> None:
        self.pid, self.argv, self.host = pid, list(argv), "gen"
        self.stdin: Any = None
        self.stdout: Any = None
        self.stderr: Any = None
        self.returncode: int | None = None
        self.signals: list[int] = []

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            raise subprocess.TimeoutExpired("x", timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        self.signals.append(sig)


class FakeSession:
    """`HostProcesses`: what was spawned and stopped, as the journal would record it."""

    def __init__(self, ag: agent.Agent) -> None:
        self.agent = ag
        self.spawned: list[tuple[str, str, FakeProc]] = []
        self.stopped: list[int] = []
        # (host, interface, qdisc, whether the agent had already added it or knew of the pacer)
        self.qdiscs: list[tuple[str, str, str, bool]] = []

    def spawn(self, host: str, label: str, argv: Sequence[str], *, stdout: Any = subprocess.DEVNULL,
              stderr: Any = subprocess.DEVNULL, stdin: int | None = None) -> Process:
        proc = FakeProc(100 + len(self.spawned), argv)
        if label == AGENT_LABEL:
            answers = io.BytesIO()
            proc.stdin, proc.stdout = AgentStdin(self.agent, answers), answers
        self.spawned.append((host, label, proc))
        return cast(Process, proc)

    def stop_process(self, host: str, proc: Process, *, timeout_s: float = 5.0) -> int | None:
        self.stopped.append(proc.pid)
        return 0

    def record_qdisc(self, host: str, interface: str, qdisc: str) -> None:
        known = self.agent.pacers if qdisc == "root" else self.agent.clsacts
        self.qdiscs.append((host, interface, qdisc, interface in known))


class FakeExecutor:
    host = "gen"

    def __init__(self) -> None:
        self.runs: list[list[str]] = []
        self.puts: list[tuple[str, str, int | None]] = []

    def run(self, argv: Sequence[str], **_: Any) -> subprocess.CompletedProcess[str]:
        self.runs.append(list(argv))
        return subprocess.CompletedProcess(list(argv), 0, "", "")

    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        self.puts.append((Path(local).name, str(remote), mode))


class FakeMap:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def values(self) -> list[int]:
        return [5, 0, 1, 9]

    def close(self) -> None:
        pass


PORT = GenPort(netns=None, ifname="b0", mac="02:00:00:00:00:01", ipv4="198.18.0.1",
               peer_mac="02:00:00:00:00:02", peer_ipv4="198.18.0.2")


def _host(tmp_path: Path) -> tuple[RemoteGenHost, FakeExecutor, FakeSession, agent.Agent]:
    ag = agent.Agent(lambda _request: 0)
    ex, session = FakeExecutor(), FakeSession(ag)
    host = RemoteGenHost(cast(Executor, ex), session, "gen", "abc123", tmp_path)
    return host, ex, session, ag


def test_parse_answer() -> None:
    assert parse_answer("ok 1 2 3\n", "gen") == ["1", "2", "3"] and parse_answer("ok\n", "gen") == []
    with pytest.raises(TrafficGenError, match=r"^host gen: trafgen receive agent: tx: no interface b9$"):
        parse_answer("error tx: no interface b9\n", "gen")
    with pytest.raises(TrafficGenError, match=r"^host gen: the trafgen receive agent ended$"):
        parse_answer("", "gen")


def test_open_copies_the_agent_into_the_runs_directory_and_close_removes_it(tmp_path: Path) -> None:
    host, ex, session, _ag = _host(tmp_path)
    host.open()
    directory = "/tmp/vsperf-abc123-trafgen"
    assert remote_dir("abc123") == PurePosixPath(directory)
    assert ex.runs[0] == ["mkdir", "-p", "-m", "700", directory]
    assert ex.puts == [("agent.py", f"{directory}/agent.py", 0o600), ("bpf.py", f"{directory}/bpf.py", 0o600)]
    (_h, label, proc), = session.spawned
    assert label == AGENT_LABEL and proc.argv == ["python3", f"{directory}/agent.py"]
    assert host.config("port0.cfg", "{ fill(0x00, 10) }\n") == f"{directory}/port0.cfg"
    assert (tmp_path / "port0.cfg").read_text() == "{ fill(0x00, 10) }\n"
    host.close()
    assert session.stopped == [proc.pid]  # forgotten in the journal
    assert ex.runs[-1] == ["rm", "-rf", "--", directory]


def test_an_agent_that_does_not_answer_is_a_prerequisite_error_and_nothing_stays(tmp_path: Path) -> None:
    host, ex, session, _ag = _host(tmp_path)

    def silent(*args: Any, **kwargs: Any) -> Process:
        proc = FakeProc(7, args[2])
        proc.stdin, proc.stdout = io.BytesIO(), io.BytesIO()  # python3 missing: no answer, end of output
        session.spawned.append((args[0], args[1], proc))
        return cast(Process, proc)

    session.spawn = silent  # type: ignore[method-assign]
    with pytest.raises(PrerequisiteError, match=r"^host gen: cannot run the trafgen receive agent .*install python3"):
        host.open()
    assert session.stopped == [7] and ex.runs[-1][:2] == ["rm", "-rf"]


def test_receive_counter_sends_the_assembled_program_for_the_agents_map(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    host, _ex, session, ag = _host(tmp_path)
    loaded: list[tuple[int, list[Any]]] = []

    def load(insns: list[Any], name: str) -> int:
        loaded.append((len(insns), insns))
        return 77

    # the agent in the package uses the package's bpf module (on a host: the copy beside it)
    monkeypatch.setattr(bpf, "ArrayMap", lambda slots: FakeMap(40 + slots))
    monkeypatch.setattr(bpf, "load_sched_cls", load)
    monkeypatch.setattr("socket.if_nametoindex", lambda name: 5)
    host.open()
    counter = RemoteRxCounter(host, "b0", 10)
    counter.attach()
    # the same program as on the local lab, with the map descriptor the agent got
    (count, insns), = loaded
    assert insns == counter_program(40 + SLOTS, 10) and count == len(insns)
    assert counter.read() == RxCounts(5, 0, 1, 9)
    assert ag.clsacts == {"b0"} and ag.progs == [77]
    assert session.qdiscs == [("gen", "b0", "clsact", False)]  # journaled before the agent added it
    counter.detach()
    assert ag.clsacts == set()
    with pytest.raises(TrafficGenError, match="not attached"):
        counter.read()
    stdin = session.spawned[0][2].stdin
    assert [line.split()[0] for line in stdin.lines] == ["read", "map", "attach", "read", "detach"]
    host.close()


def test_trafgen_runs_through_the_session_and_is_forgotten_once(tmp_path: Path) -> None:
    host, ex, session, _ag = _host(tmp_path)
    proc = host.launch("trafgen port0", ["trafgen", "--dev", "b0"], None, tmp_path / "port0.log")
    assert isinstance(proc, HostTrafgen) and session.spawned[0][1] == "trafgen port0"
    fake = session.spawned[0][2]
    proc.interrupt()
    proc.interrupt()
    assert fake.signals == [signal.SIGINT]  # one command over SSH, not one per poll
    assert proc.alive() and proc.returncode() is None
    proc.stop()
    proc.stop()
    assert session.stopped == [fake.pid]
    with pytest.raises(TrafficGenError, match="namespace ns1"):
        host.launch("trafgen port0", ["trafgen"], "ns1", tmp_path / "port0.log")
    host.pin(proc, 1)
    assert ex.runs[-1][:2] == ["sh", "-c"] and ex.runs[-1][-2:] == [str(fake.pid), "1"]


def test_a_pacer_is_journaled_before_it_is_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host, ex, session, ag = _host(tmp_path)
    monkeypatch.setattr("socket.if_nametoindex", lambda name: 5)
    host.open()
    tc_before: list[list[list[str]]] = []
    record = session.record_qdisc

    def journal(host_name: str, interface: str, qdisc: str) -> None:
        tc_before.append([r for r in ex.runs if r[0] == "tc"])
        record(host_name, interface, qdisc)

    monkeypatch.setattr(session, "record_qdisc", journal)
    sender = PortSender(cast(Executor, ex), host, PORT, 0, tmp_path, None)
    sender.pace(1000.0, 60)
    assert session.qdiscs == [("gen", "b0", "root", False)] and tc_before == [[]]  # nothing set yet
    assert ex.runs[-1][:4] == ["tc", "qdisc", "replace", "dev"] and ag.pacers == {"b0"}
    host.close()

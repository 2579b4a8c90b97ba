"""A generator host for the trafgen backend's unit tests (no root): commands recorded, processes faked.

`FakeGenHost` is the executor of a testbed's generator host (or, named `local`, of this machine):
every command succeeds with no output unless `answers` says otherwise, and is kept with its
namespace (`runs`); files copied there are kept (`files`). A spawned receive agent is a real
`agent.Agent` (its netlink and BPF faked by the test) answering each line written to its stdin;
any other process (trafgen, the pin script's target) is a `FakeProc` that runs until signalled
or `exit`ed. `host(...)` wraps it in a `Host` with a journal under the test's directory.
"""

from __future__ import annotations

import io
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from vsperf.executor import Command, Executor, Process, Streams, TcpStream
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
from vsperf.trafficgen.trafgen import agent

RUN_ID = "abc123"
# Host.spawn's log wrapper: sh -c SCRIPT sh LOG PROGRAM...
_WRAPPED = 5


class AgentStdin(io.RawIOBase):
    """The agent's input: each line is answered by a real `agent.Agent` on its output; at the
    end of its input the agent cleans up and its process exits (0)."""

    def __init__(self, ag: agent.Agent, answers: io.BytesIO, proc: FakeProc) -> None:
        self.agent, self.answers, self.proc = ag, answers, proc
        self.lines: list[str] = []
        self.buffer = b""

    def close(self) -> None:
        if not self.closed:
            self.agent.close()
            self.proc.exit(0)
        super().close()

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
    """A process of the fake host: runs until a stopping signal or `exit`."""

    def __init__(self, pid: int, argv: list[str], netns: str | None, host: str) -> None:
        self.pid, self.argv, self.netns, self.host = pid, argv, netns, host
        self.start_ticks = 1000 + pid
        self.stdin: Any = None
        self.stdout: Any = None
        self.stderr: Any = None
        self.returncode: int | None = None
        self.signals: list[int] = []

    @property
    def program(self) -> list[str]:
        """The command without Host.spawn's log wrapper."""
        return self.argv[_WRAPPED:] if self.argv[:2] == ["sh", "-c"] else self.argv

    def exit(self, code: int) -> None:
        self.returncode = code

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            raise subprocess.TimeoutExpired(self.argv, timeout or 0)
        return self.returncode

    def communicate(self, input: bytes | None = None, timeout: float | None = None) -> tuple[Any, Any]:
        return None, None

    def send_signal(self, sig: int) -> None:
        self.signals.append(sig)
        if sig in (signal.SIGTERM, signal.SIGKILL) and self.returncode is None:
            self.returncode = -sig

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class FakeGenHost(Executor):
    """See the module docstring."""

    def __init__(self, name: str = "gen", make_agent: Callable[[], agent.Agent] | None = None,
                 answers: dict[tuple[str, ...], tuple[int, str]] | None = None, *, python3: bool = True) -> None:
        self.name = name
        self.python3 = python3  # False: the agent never answers (no python3 there)
        self.make_agent = make_agent or (lambda: agent.Agent(lambda _request: 0))
        self.answers = answers or {}
        self.runs: list[tuple[list[str], str | None]] = []
        self.inputs: dict[tuple[str, ...], str] = {}  # what a command read on its stdin
        self.files: dict[str, tuple[str, int | None]] = {}  # path -> (text, mode)
        self.spawned: list[FakeProc] = []
        self.agents: list[agent.Agent] = []
        self.on_run: Callable[[list[str]], None] | None = None  # sees each command before it runs
        self.on_spawn: Callable[[FakeProc], None] | None = None  # sees each process once started

    @property
    def host(self) -> str:
        return self.name

    def commands(self, program: str) -> list[list[str]]:
        """The commands run so far whose program is `program`."""
        return [argv for argv, _ in self.runs if argv[0] == program]

    def _complete(self, cmd: Command, timeout_s: float | None,
                  input_text: str | None) -> subprocess.CompletedProcess[str]:
        argv = list(cmd.argv)
        if self.on_run is not None:
            self.on_run(argv)
        self.runs.append((argv, cmd.netns))
        if input_text is not None:
            self.inputs[cmd.argv] = input_text
        if cmd.argv in self.answers:
            code, out = self.answers[cmd.argv]
            return subprocess.CompletedProcess(argv, code, out, "" if code == 0 else out)
        if argv[0] == "cat" and argv[-1] in self.files:
            return subprocess.CompletedProcess(argv, 0, self.files[argv[-1]][0], "")
        if argv[0] == "cat" and argv[-1].startswith("/proc/"):  # a process's stat: the fake ones' only
            proc = next((p for p in self.spawned if argv[-1] == f"/proc/{p.pid}/stat"), None)
            if proc is None or proc.returncode is not None:
                return subprocess.CompletedProcess(argv, 1, "", "No such file or directory")
            stat = f"{proc.pid} (fake) S" + " 0" * 16 + f" 1 0 {proc.start_ticks} 0 0\n"
            return subprocess.CompletedProcess(argv, 0, stat, "")
        return subprocess.CompletedProcess(argv, 0, "", "")

    def _start(self, cmd: Command, streams: Streams) -> Process:
        proc = FakeProc(100 + len(self.spawned), list(cmd.argv), cmd.netns, self.name)
        if proc.program[:1] == ["python3"] and proc.program[1].endswith("/agent.py"):
            if not self.python3:
                proc.stdin, proc.stdout = io.BytesIO(), io.BytesIO()  # nothing answers: its output ends
            else:
                ag = self.make_agent()
                self.agents.append(ag)
                answers = io.BytesIO()
                proc.stdin, proc.stdout = AgentStdin(ag, answers, proc), answers
        self.spawned.append(proc)
        if self.on_spawn is not None:
            self.on_spawn(proc)
        return proc

    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        self.files[str(remote)] = (local.read_text(encoding="utf-8"), mode)

    def get(self, remote: PurePosixPath | str, local: Path) -> None:
        raise AssertionError("the trafgen backend copies nothing back")

    def open_tcp(self, port: int, *, netns: str | None = None, timeout_s: float = 5.0) -> TcpStream:
        raise AssertionError("the trafgen backend opens no TCP connection")


def host(executor: FakeGenHost, tmp_path: Path) -> Host:
    """The run's `Host` on `executor`, its journal under `tmp_path`."""
    return Host(executor.name, executor, RunNames(RUN_ID), Journal(RUN_ID, root=tmp_path))

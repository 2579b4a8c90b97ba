"""trafgen on a testbed's generator host, reached over SSH (`vsperf.remote`).

Everything runs through that host's executor, and every process is started through the run's
testbed session (`HostProcesses`), which journals it by PID and start time: a SIGKILLed vsperf
leaves the record, and the next run stops what is left. What the senders need there lives in
the run's directory on the host, /tmp/vsperf-RUNID-trafgen (removed at the end, and by the
next run after a kill): trafgen's packet configurations, and the receive agent
(`vsperf.trafficgen.trafgen.agent`, with a copy of `bpf.py`) that holds the counting tc
programs and reads the ports' transmit counters on the host itself. The agent ends with its
SSH channel (the end of its input) and takes its programs and pacers off the ports then; each
qdisc is in the run's journal before it is added (`HostProcesses.record_qdisc`), so the end of
the run, and the next run after a SIGKILL, delete one the agent left.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import IO

from vsperf.deployment import GenPort
from vsperf.errors import CommandError, PrerequisiteError, TrafficGenError
from vsperf.executor import Executor, Process
from vsperf.trafficgen.base import HostProcesses
from vsperf.trafficgen.trafgen import agent, bpf
from vsperf.trafficgen.trafgen.rxcount import SLOTS, RxCounts, counter_program
from vsperf.trafficgen.trafgen.sender import SenderProcess

log = logging.getLogger(__name__)

AGENT_LABEL = "trafgen receive agent"
_AGENT_FILES = (Path(agent.__file__), Path(bpf.__file__))
_AGENT_EXIT_S = 5.0
# trafgen forks its worker after it starts: wait for it (up to 1 s), then move it to the CPU.
# A fixed script: the PID and the CPU are its arguments.
PIN_SCRIPT = ('i=0; while [ $i -lt 100 ]; do k=$(cat /proc/$1/task/*/children 2>/dev/null); '
              'if [ -n "$k" ]; then for c in $k; do taskset -a -p -c "$2" "$c" >/dev/null; done; exit 0; fi; '
              'i=$((i+1)); sleep 0.01; done')


def remote_dir(run_id: str) -> PurePosixPath:
    """The run's directory on the generator host. Its name matches /tmp/vsperf-RUNID-*: after a
    killed run, the next run's testbed session removes it (`host_run_dirs_removal`)."""
    return PurePosixPath(f"/tmp/vsperf-{run_id}-trafgen")


def parse_answer(line: str, host: str) -> list[str]:
    """The words after `ok` of one answer of the agent; TrafficGenError for `error ...` or none."""
    if not line:
        raise TrafficGenError(f"host {host}: the trafgen receive agent ended")
    words = line.split()
    if not words or words[0] != "ok":
        raise TrafficGenError(f"host {host}: trafgen receive agent: {line.strip().removeprefix('error ')}")
    return words[1:]


class HostTrafgen:
    """A trafgen started on the generator host through the session (`SenderProcess`)."""

    def __init__(self, processes: HostProcesses, host: str, proc: Process, log_path: Path) -> None:
        self.processes = processes
        self.host = host
        self.proc = proc
        self.pid = proc.pid
        self.log_path: Path | None = log_path
        self._stopped = False
        self._interrupted = False

    def returncode(self) -> int | None:
        return self.proc.poll()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def interrupt(self) -> None:
        # Once: each signal is a command over SSH, and trafgen stops at the first.
        if not self._interrupted:
            self._interrupted = True
            self.proc.send_signal(signal.SIGINT)

    def stop(self, timeout_s: float = 5.0) -> None:
        if not self._stopped:
            self._stopped = True
            self.processes.stop_process(self.host, self.proc, timeout_s=timeout_s)


class RemoteGenHost:
    """The generator host (`SenderHost`): the run's directory there, its receive agent, trafgen."""

    def __init__(self, executor: Executor, processes: HostProcesses, host: str, run_id: str,
                 work_dir: Path) -> None:
        self.executor = executor
        self.processes = processes
        self.host = host
        self.dir = remote_dir(run_id)
        self.work_dir = work_dir
        self._agent: Process | None = None
        self._agent_log: IO[bytes] | None = None

    def open(self) -> None:
        """Create the run's directory on the host, copy the agent there and start it."""
        try:
            self.executor.run(["mkdir", "-p", "-m", "700", str(self.dir)], timeout_s=10)
            for path in _AGENT_FILES:
                self.executor.put(path, self.dir / path.name, mode=0o600)
            self._agent_log = (self.work_dir / "agent.log").open("ab")
            self._agent = self.processes.spawn(
                self.host, AGENT_LABEL, ["python3", str(self.dir / Path(agent.__file__).name)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._agent_log)
            # Any answer (here: there is no map 0 yet) proves that the host's python3 runs the agent.
            self.request("read 0", check=False)
        except (CommandError, TrafficGenError) as exc:
            self.close()
            raise PrerequisiteError(f"host {self.host}: cannot run the trafgen receive agent ({exc}); "
                                    f"install python3 there") from exc

    def request(self, line: str, *, check: bool = True) -> list[str]:
        """Send one command to the agent; the words of its answer (see `agent`)."""
        proc = self._agent
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise TrafficGenError(f"host {self.host}: the trafgen receive agent is not running")
        try:
            proc.stdin.write(line.encode("ascii") + b"\n")
            proc.stdin.flush()
            answer = proc.stdout.readline().decode("ascii", errors="replace")
        except (OSError, EOFError) as exc:
            raise TrafficGenError(f"host {self.host}: trafgen receive agent: {exc}") from exc
        if not check and answer.startswith("error"):
            return []
        return parse_answer(answer, self.host)

    def close(self) -> None:
        """End the agent (the end of its input: it cleans the ports), remove the run's directory."""
        proc, self._agent = self._agent, None
        if proc is not None:
            if proc.stdin is not None:
                with contextlib.suppress(OSError, EOFError):
                    proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(_AGENT_EXIT_S)
            self.processes.stop_process(self.host, proc)
        if self._agent_log is not None:
            self._agent_log.close()
            self._agent_log = None
        try:
            self.executor.run(["rm", "-rf", "--", str(self.dir)], check=False, timeout_s=10)
        except CommandError as exc:
            log.warning("host %s: could not remove %s: %s", self.host, self.dir, exc)

    # --- SenderHost -----------------------------------------------------------------------

    def tx_frames(self, port: GenPort) -> int:
        return int(self.request(f"tx {port.ifname}")[0])

    def config(self, name: str, text: str) -> str:
        local = self.work_dir / name
        local.write_text(text, encoding="utf-8")
        target = self.dir / name
        self.executor.put(local, target, mode=0o600)
        return str(target)

    def launch(self, label: str, argv: Sequence[str], netns: str | None, log_path: Path) -> SenderProcess:
        if netns is not None:
            raise TrafficGenError(f"host {self.host}: a generator port in namespace {netns}: testbed ports are "
                                  f"the host's own interfaces")
        with log_path.open("ab") as out:
            proc = self.processes.spawn(self.host, label, argv, stdout=out, stderr=subprocess.STDOUT)
        return HostTrafgen(self.processes, self.host, proc, log_path)

    def pin(self, proc: SenderProcess, cpu: int) -> None:
        self.executor.run(["sh", "-c", PIN_SCRIPT, "sh", str(proc.pid), str(cpu)], check=False, timeout_s=10)

    def paced(self, port: GenPort) -> None:
        # In the journal first: after a SIGKILL the next run deletes the pacer, even if the agent
        # (which deletes it when its input ends) never got to.
        self.processes.record_qdisc(self.host, port.ifname, "root")
        self.request(f"paced {port.ifname}")

    def attaching(self, ifname: str) -> None:
        """A receive counter is about to add a clsact qdisc to `ifname`: journal it first."""
        self.processes.record_qdisc(self.host, ifname, "clsact")

    def release(self, port: GenPort) -> None:
        """Nothing to do: the agent reads the counters, it is closed with the generator."""


class RemoteRxCounter:
    """The receive counter (`vsperf.trafficgen.trafgen.rxcount.RxCounter`) of a port of the
    generator host: the same program, loaded and read by the agent there."""

    def __init__(self, host: RemoteGenHost, ifname: str, expected_vlan_id: int) -> None:
        self.host = host
        self.ifname = ifname
        self.expected_vlan_id = expected_vlan_id
        self._map_fd: int | None = None

    def attach(self) -> None:
        map_fd = int(self.host.request(f"map {SLOTS}")[0])
        code = b"".join(i.encode() for i in counter_program(map_fd, self.expected_vlan_id))
        self.host.attaching(self.ifname)
        self.host.request(f"attach {map_fd} {self.ifname} {code.hex()}")
        self._map_fd = map_fd

    def read(self) -> RxCounts:
        if self._map_fd is None:
            raise TrafficGenError(f"host {self.host.host}: receive counter on {self.ifname} is not attached")
        return RxCounts.from_slots([int(v) for v in self.host.request(f"read {self._map_fd}")])

    def detach(self) -> None:
        if self._map_fd is not None:
            self._map_fd = None
            with contextlib.suppress(TrafficGenError):
                self.host.request(f"detach {self.ifname}")

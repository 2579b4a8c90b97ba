"""The trafgen generator's receive agent on its host: one per network namespace of the ports.

A BPF program lives as long as the file descriptors of the process that loaded it, and `tc`
attaches only programs it loads from an object file; so the agent script
(`vsperf.trafficgen.trafgen.agent`, with `bpf.py` beside it) runs on the generator's host, in
the namespace of the ports it serves, with the host's python3 and its standard library only. It
holds the counting programs (`vsperf.trafficgen.trafgen.rxcount`) and their maps, reads the
ports' transmit counters, and answers one line per command on its standard input: pipes to
vsperf on this machine, the SSH channel on a testbed's generator host. It is started through the
host (in the run's journal, by PID and start time); at the end of its input (vsperf closed it,
or died, or lost the connection) it takes its programs and pacers off the ports and exits. Each
qdisc it or the senders add is in the run's journal before it is added, so the end of the run,
and the next run after a SIGKILL, delete one the agent left.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from vsperf.errors import DeploymentError, PrerequisiteError, TrafficGenError
from vsperf.host.host import Host
from vsperf.host.process import HostProcess
from vsperf.host.qdisc import record_qdisc
from vsperf.trafficgen.trafgen import agent, bpf
from vsperf.trafficgen.trafgen.rxcount import NO_VLAN, SLOTS, RxCounts, counter_program

AGENT_LABEL = "trafgen receive agent"
_AGENT_FILES = (Path(agent.__file__), Path(bpf.__file__))
_AGENT_EXIT_S = 5.0


def parse_answer(line: str, where: str) -> list[str]:
    """The words after `ok` of one answer of the agent; TrafficGenError for `error ...` or none."""
    if not line:
        raise TrafficGenError(f"{where}the trafgen receive agent ended")
    words = line.split()
    if not words or words[0] != "ok":
        raise TrafficGenError(f"{where}trafgen receive agent: {line.strip().removeprefix('error ')}")
    return words[1:]


class AgentClient:
    """One receive agent on `host`, in namespace `netns` (None: the host's own)."""

    def __init__(self, host: Host, netns: str | None) -> None:
        self.host = host
        self.netns = netns
        self.where = host.prefix
        self._proc: HostProcess | None = None

    def open(self) -> None:
        """Put the agent where the host's python3 runs it and start it there."""
        host = self.host
        try:
            files = [host.stage_file(path, path.name) for path in _AGENT_FILES]
            suffix = f" {self.netns}" if self.netns else ""
            log_path = host.log_path(f"trafgen-agent{suffix.replace(' ', '-')}.log")
            self._proc = host.spawn(AGENT_LABEL + suffix, ["python3", str(files[0])], netns=self.netns, pipes=True,
                                    log_path=log_path)
            # Any answer (here: there is no map 0 yet) proves that the host's python3 runs the agent.
            self.request("read 0", check=False)
        except (DeploymentError, TrafficGenError) as exc:
            self.close()
            raise PrerequisiteError(f"{self.where}cannot run the trafgen receive agent ({exc}); "
                                    f"install python3 there") from exc

    def request(self, line: str, *, check: bool = True) -> list[str]:
        """Send one command to the agent; the words of its answer (see `agent`)."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise TrafficGenError(f"{self.where}the trafgen receive agent is not running")
        try:
            proc.stdin.write(line.encode("ascii") + b"\n")
            proc.stdin.flush()
            answer = proc.stdout.readline().decode("ascii", errors="replace")
        except (OSError, EOFError, ValueError) as exc:
            raise TrafficGenError(f"{self.where}trafgen receive agent: {exc}") from exc
        if not check and answer.startswith("error"):
            return []
        return parse_answer(answer, self.where)

    def tx_frames(self, ifname: str) -> int:
        """Frames that left `ifname` so far (tx_packets + tx_dropped)."""
        return int(self.request(f"tx {ifname}")[0])

    def paced(self, ifname: str) -> None:
        """`ifname` gets vsperf's pacer as its root qdisc next: in the journal first (the next run
        deletes it after a SIGKILL), and the agent deletes it when its input ends."""
        record_qdisc(self.host, ifname, "root", netns=self.netns)
        self.request(f"paced {ifname}")

    def close(self) -> None:
        """End the agent (the end of its input: it cleans the ports) and forget it."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError, EOFError, ValueError):
                proc.stdin.close()
        proc.wait(_AGENT_EXIT_S)
        self.host.stop_process(proc)
        if proc.stdout is not None:
            with contextlib.suppress(OSError):
                proc.stdout.close()


class RxCounter:
    """The counting program (`vsperf.trafficgen.trafgen.rxcount`) at ingress of `ifname`,
    loaded, attached and read by the agent of its namespace."""

    def __init__(self, agent_client: AgentClient, ifname: str, expected_vlan_id: int = NO_VLAN) -> None:
        self.agent = agent_client
        self.ifname = ifname
        self.expected_vlan_id = expected_vlan_id
        self._map_fd: int | None = None

    def attach(self) -> None:
        """Load the program and attach it (a clsact qdisc is added to the interface, journaled first)."""
        map_fd = int(self.agent.request(f"map {SLOTS}")[0])
        code = b"".join(i.encode() for i in counter_program(map_fd, self.expected_vlan_id))
        record_qdisc(self.agent.host, self.ifname, "clsact", netns=self.agent.netns)
        try:
            self.agent.request(f"attach {map_fd} {self.ifname} {code.hex()}")
        except TrafficGenError as exc:
            raise DeploymentError(f"cannot attach the receive counter to {self.ifname}: {exc}") from exc
        self._map_fd = map_fd

    def read(self) -> RxCounts:
        """Current cumulative counts."""
        if self._map_fd is None:
            raise TrafficGenError(f"{self.agent.where}receive counter on {self.ifname} is not attached")
        return RxCounts.from_slots([int(v) for v in self.agent.request(f"read {self._map_fd}")])

    def detach(self) -> None:
        """Remove the program (tolerates the agent or the interface being gone already)."""
        if self._map_fd is not None:
            self._map_fd = None
            with contextlib.suppress(TrafficGenError):
                self.agent.request(f"detach {self.ifname}")


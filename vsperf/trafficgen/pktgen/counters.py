"""The transmit counters of the generator host's interfaces, read there on request.

One small shell loop per network namespace of the interfaces runs on the generator host (through
the host: in the run's journal, by PID and start time), reading the interfaces' counters with
shell builtins each time it reads a line on its standard input (pipes on this machine, the SSH
channel on a testbed's host), and ending with its input. `ip netns exec` gives a namespace its
own /sys, so the same loop serves the local lab's namespaced ports and a testbed's own interfaces.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from vsperf.errors import TrafficGenError
from vsperf.host.host import Host
from vsperf.host.process import HostProcess

_STOP_TIMEOUT_S = 5.0
# A fixed script: the counter files are its arguments. One line in, one count per file out.
COUNTERS_SCRIPT = 'while read -r _; do for f; do read -r n <"$f" || exit 1; echo "$n"; done; done'

Interface = tuple[str | None, str]  # (namespace, interface name)


class HostCounters:
    """tx_packets of `interfaces` of `host`, read together; `tx_packets` is called from one
    thread at a time (a trial's clock)."""

    def __init__(self, host: Host, interfaces: Sequence[Interface]) -> None:
        self.host = host
        self.where = host.prefix
        self.interfaces = list(dict.fromkeys(interfaces))
        self._loops: list[tuple[HostProcess, list[Interface]]] = []
        try:
            for netns in dict.fromkeys(ns for ns, _ in self.interfaces):
                members = [i for i in self.interfaces if i[0] == netns]
                paths = [f"/sys/class/net/{name}/statistics/tx_packets" for _, name in members]
                proc = host.spawn("pktgen transmit counters" + (f" {netns}" if netns else ""),
                                  ["sh", "-c", COUNTERS_SCRIPT, "sh", *paths], netns=netns, pipes=True)
                self._loops.append((proc, members))
        except BaseException:
            self.close()
            raise

    def tx_packets(self) -> dict[Interface, int]:
        """(namespace, interface) -> frames it sent, read on the host now."""
        counts: dict[Interface, int] = {}
        for proc, members in self._loops:
            stdin, stdout = proc.stdin, proc.stdout
            if stdin is None or stdout is None:
                raise TrafficGenError(f"{self.where}the transmit counter reader is closed")
            try:
                stdin.write(b"\n")
                stdin.flush()
                counts.update({member: int(stdout.readline()) for member in members})
            except (OSError, EOFError, ValueError) as exc:
                names = ", ".join(name for _, name in members)
                raise TrafficGenError(f"{self.where}cannot read the transmit counters of {names}: {exc}") from exc
        return counts

    def close(self) -> None:
        """End the loops (the end of their input) and forget them."""
        loops, self._loops = self._loops, []
        for proc, _ in loops:
            if proc.stdin is not None:
                with contextlib.suppress(OSError, EOFError, ValueError):
                    proc.stdin.close()
            proc.wait(_STOP_TIMEOUT_S)
            self.host.stop_process(proc)

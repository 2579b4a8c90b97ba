"""A testpmd on its host: launched non-interactively, watched, queried, stopped with SIGINT.

It runs on a `vsperf.host.Host` (this machine, or a testbed's DUT host): its process, log file,
telemetry commands and DPDK runtime directory are that host's. Used by the `none` switch (testpmd forwarding
between the veths), the netns VNF's testpmd loopback and the testpmd-vhost VNF (testpmd as the
guest of a PVP loop). Counters come from two places:
- while it runs, DPDK telemetry (`dpdk-telemetry.py -f <prefix>`, `/ethdev/stats,<port>`):
  what each port received, sent and missed;
- when it stops, testpmd's own "Forward statistics" (SIGINT makes it print them), which add
  the frames it could not transmit (TX-dropped) to the port counters.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import KW_ONLY, dataclass, field
from pathlib import PurePosixPath

from vsperf.dpdk.eal import (
    DPDK_RUNTIME_ROOT,
    TELEMETRY_CLIENT,
    TestpmdConfig,
    dpdk_version,
    runtime_dir,
    testpmd_argv,
)
from vsperf.errors import CommandError, DeploymentError
from vsperf.host.host import Host
from vsperf.host.process import HostProcess

log = logging.getLogger(__name__)

_KILL_AFTER_TERM_S = 2.0  # SIGTERM -> SIGKILL once SIGINT went unanswered
_POLL_S = 0.1  # between reads of its log (on a remote host each read is one command)
# Printed once forwarding has started ("io packet forwarding - ports=2 - cores=1 - ...").
_READY_RE = re.compile(r"packet forwarding - ports=\d+")
_FWD_BLOCK_RE = re.compile(
    r"Forward statistics for port (\d+)\s+-+\s*"
    r"RX-packets:\s*(\d+)\s+RX-dropped:\s*(\d+)\s+RX-total:\s*\d+\s*"
    r"TX-packets:\s*(\d+)\s+TX-dropped:\s*(\d+)"
)
_NIC_BLOCK_RE = re.compile(
    r"NIC statistics for port (\d+)\s+#+\s*"
    r"RX-packets:\s*(\d+)\s+RX-missed:\s*(\d+)\s+RX-bytes:\s*(\d+)\s*"
    r"RX-errors:\s*(\d+)\s*RX-nombuf:\s*(\d+)\s*"
    r"TX-packets:\s*(\d+)\s+TX-errors:\s*(\d+)\s+TX-bytes:\s*(\d+)"
)


@dataclass(frozen=True)
class PortCounters:
    """Counters of one testpmd port (cumulative since testpmd started)."""

    port: int  # DPDK port number (order of the --vdev arguments)
    rx_packets: int  # frames testpmd read from the port
    tx_packets: int  # frames the port accepted for transmission
    rx_missed: int = 0  # frames the port dropped because testpmd did not read them in time
    tx_dropped: int = 0  # frames testpmd could not transmit (ring full); forward stats only
    rx_errors: int = 0  # erroneous frames received
    tx_errors: int = 0  # failed transmissions reported by the driver
    rx_nombuf: int = 0  # receive attempts that found no free mbuf
    rx_bytes: int = 0
    tx_bytes: int = 0


def parse_forward_stats(text: str) -> dict[int, PortCounters]:
    """Per-port "Forward statistics" testpmd prints when forwarding stops (the last ones win).

    RX-dropped there is the port's missed count; TX-dropped the frames testpmd failed to send.
    """
    found: dict[int, PortCounters] = {}
    for m in _FWD_BLOCK_RE.finditer(text):
        port, rx, rx_dropped, tx, tx_dropped = (int(g) for g in m.groups())
        found[port] = PortCounters(port, rx, tx, rx_missed=rx_dropped, tx_dropped=tx_dropped)
    return found


def parse_nic_stats(text: str) -> dict[int, PortCounters]:
    """Per-port "NIC statistics" testpmd prints every --stats-period (the last ones win)."""
    found: dict[int, PortCounters] = {}
    for m in _NIC_BLOCK_RE.finditer(text):
        port, rx, missed, rx_bytes, rx_err, nombuf, tx, tx_err, tx_bytes = (int(g) for g in m.groups())
        found[port] = PortCounters(
            port, rx, tx, rx_missed=missed, rx_errors=rx_err, tx_errors=tx_err, rx_nombuf=nombuf,
            rx_bytes=rx_bytes, tx_bytes=tx_bytes,
        )
    return found


def parse_link_up(text: str) -> bool:
    """True when the answer to the telemetry command `/ethdev/link_status,<port>` says UP."""
    for line in reversed(text.splitlines()):
        if line.lstrip().startswith("{"):
            data = json.loads(line).get("/ethdev/link_status")
            return isinstance(data, dict) and data.get("status") == "UP"
    return False


def parse_telemetry_stats(text: str, port: int) -> PortCounters:
    """Counters from the JSON answer to the telemetry command `/ethdev/stats,<port>`."""
    lines = [line for line in text.splitlines() if line.lstrip().startswith("{")]
    if not lines:
        raise ValueError(f"no JSON in telemetry output: {text.strip()[:200]!r}")
    data = json.loads(lines[-1]).get("/ethdev/stats")
    if not isinstance(data, dict):
        raise ValueError(f"telemetry answered without /ethdev/stats for port {port}: {lines[-1][:200]!r}")
    return PortCounters(
        port,
        rx_packets=int(data["ipackets"]),
        tx_packets=int(data["opackets"]),
        rx_missed=int(data.get("imissed", 0)),
        rx_errors=int(data.get("ierrors", 0)),
        tx_errors=int(data.get("oerrors", 0)),
        rx_nombuf=int(data.get("rx_nombuf", 0)),
        rx_bytes=int(data.get("ibytes", 0)),
        tx_bytes=int(data.get("obytes", 0)),
    )


class TestpmdVersion:
    """`version()` of a component that is dpdk-testpmd (the `none` switch, the testpmd VNF):
    asked once, as the report shows it."""

    host: Host  # the component's (see vsperf.deploy.base.Component)
    _testpmd_version: str | None = None

    def version(self) -> str:
        if self._testpmd_version is None:
            self._testpmd_version = f"dpdk-testpmd (DPDK {dpdk_version(self.host.executor)})"
        return self._testpmd_version


@dataclass(eq=False)
class TestpmdProcess:
    """One testpmd forwarding between its ports (pairs 0<->1, 2<->3, ...), on `host`."""

    __test__ = False  # not a pytest test class despite the name

    host: Host
    label: str
    cfg: TestpmdConfig
    _: KW_ONLY
    log_path: PurePosixPath
    netns: str | None = None
    ready_timeout_s: float = 30.0
    runtime_root: PurePosixPath = DPDK_RUNTIME_ROOT
    proc: HostProcess | None = field(default=None, init=False)  # set by `start`
    final_counters: dict[int, PortCounters] = field(default_factory=dict, init=False)  # set by `stop`

    @property
    def file_prefix(self) -> str:
        return self.cfg.eal.file_prefix

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self) -> None:
        """Launch testpmd and wait until it forwards; DeploymentError (with its log) if it cannot."""
        # Its runtime directory was recorded with its file prefix (Host.dpdk_file_prefix).
        self.proc = self.host.spawn(
            self.label, testpmd_argv(self.cfg), netns=self.netns, log_path=self.log_path
        )
        deadline = time.monotonic() + self.ready_timeout_s
        while not _READY_RE.search(self._log_text()):
            if not self.proc.alive():
                raise DeploymentError(
                    f"{self.label} exited (code {self.proc.returncode()}) before forwarding: "
                    f"{self.proc.log_tail(3)}"
                )
            if time.monotonic() > deadline:
                raise DeploymentError(
                    f"{self.label} did not start forwarding within {self.ready_timeout_s:g} s: "
                    f"{self.proc.log_tail(3)}"
                )
            time.sleep(_POLL_S)
        log.info("%s forwarding (pid %d, %s)", self.label, self.proc.pid, self.cfg.fwd_mode)

    def wait_links_up(self, timeout_s: float = 10.0) -> None:
        """Return once DPDK reports every port's link up (telemetry `/ethdev/link_status`).

        testpmd prints that it forwards as soon as its lcores start; a port whose link is still
        down then drops what arrives. Callers whose ports are up by themselves (veths, not
        vhost-user servers waiting for the switch) wait here before any traffic is sent.
        """
        deadline = time.monotonic() + timeout_s
        pending = list(range(len(self.cfg.eal.vdevs)))
        while pending:
            self.check_alive()
            pending = [port for port in pending if not self._link_up(port)]
            if pending and time.monotonic() > deadline:
                raise DeploymentError(
                    f"{self.label}: link of port(s) {', '.join(map(str, pending))} still down after {timeout_s:g} s"
                )
            if pending:
                time.sleep(_POLL_S)

    def _telemetry(self, command: str) -> str:
        """The answer of testpmd's DPDK telemetry socket to `command`."""
        return self.host.executor.run(
            [TELEMETRY_CLIENT, "-f", self.file_prefix], input_text=f"{command}\n", timeout_s=10.0
        ).stdout

    def _link_up(self, port: int) -> bool:
        try:
            out = self._telemetry(f"/ethdev/link_status,{port}")
        except CommandError:
            return False
        return parse_link_up(out)

    def check_alive(self) -> None:
        """DeploymentError("<label> (pid N) died: ...") when testpmd has exited."""
        if self.proc is not None and not self.proc.alive():
            raise DeploymentError(f"{self.label} (pid {self.proc.pid}) died: {self.proc.log_tail(3)}")

    def counters(self, port: int) -> PortCounters:
        """Live counters of `port` through DPDK telemetry."""
        try:
            return parse_telemetry_stats(self._telemetry(f"/ethdev/stats,{port}"), port)
        except (CommandError, ValueError, KeyError) as exc:
            raise DeploymentError(f"cannot read {self.label} port {port} counters: {exc}") from exc

    def stop(self, timeout_s: float = 10.0) -> dict[int, PortCounters]:
        """Stop forwarding (SIGINT: testpmd prints its final statistics), reap, clean up.

        Falls back to SIGTERM, then SIGKILL: a testpmd still waiting for the switch to connect
        to its vhost-user server socket exits on neither (measured: it stays blocked in the
        device probe), so one that never forwarded gets a short grace instead of `timeout_s`.
        Returns the final forward statistics (empty when testpmd could not print them). Safe to
        call twice and before `start`.
        """
        proc, self.proc = self.proc, None
        if proc is not None:
            if proc.alive():
                forwarding = _READY_RE.search(self._log_text()) is not None
                proc.interrupt()
                proc.wait(timeout_s if forwarding else _KILL_AFTER_TERM_S)
            self.host.stop_process(proc, timeout_s=_KILL_AFTER_TERM_S)  # no-op when gone; forgets the record
            self.final_counters = parse_forward_stats(self._log_text())
            if self.final_counters:
                log.info("%s final counters: %s", self.label, self.final_counters)
        self.host.remove_dir(runtime_dir(self.file_prefix, self.runtime_root))
        return self.final_counters

    def _log_text(self) -> str:
        return self.host.read_text(self.log_path)

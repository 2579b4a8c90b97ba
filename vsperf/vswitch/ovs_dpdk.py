"""Open vSwitch with DPDK (VSPERF's OvsDpdkVhost), as a private instance without hugepages
(on a testbed's DUT host: with hugepages and PCI ports, see `use_hugepages`).

The DPDK build of ovs-vswitchd (`openvswitch-switch-dpdk`) runs directly, never through the
system's update-alternatives, with the private ovsdb of `OvsVSwitch` and:

- other_config `dpdk-init=true`, `dpdk-extra="--no-huge -m N --legacy-mem --file-prefix=P
  --no-pci"` (see vsperf.dpdk.eal), `pmd-cpu-mask` from VSWITCH_PMD_CPU_MASK, and whatever
  VSWITCHD_DPDK_CONFIG adds or overrides (dpdk-lcore-mask by default);
- veth ports as `type=dpdk options:dpdk-devargs=net_af_xdp<i>,iface=<veth>` (or
  net_af_packet with DPDK_PORT_DRIVER=af_packet); with LAB_PORT_QUEUES=N > 1,
  `net_af_packet<i>,iface=<veth>,qpairs=N` and `options:n_rxq=N`: N rx queues that the PMD
  threads of VSWITCH_PMD_CPU_MASK poll (net_af_xdp cannot open several queues of a veth:
  vsperf.dpdk.eal.check_veth_queues);
- vhost-user ports as `dpdkvhostuserclient` with the VNF's socket (the VNF's testpmd is the
  server), or `dpdkvhostuser` with VSWITCH_VHOSTUSER_SERVER_MODE (OVS is the server; the
  VNF's socket path becomes a symbolic link to the socket OVS creates).

Memory: without hugepages every mbuf takes a whole 4 KiB page. OVS's default shared mempool
starts at 262144 mbufs (1 GiB) and halves on ENOMEM; a half-populated failed attempt may
report ENOBUFS instead, which stops the halving and the port is not added (1 pvp deployment
in 10 at -m 128). With `per-port-memory=true` each port gets exactly the mbufs it needs
(~20500, ~80 MiB) at the first attempt, so `-m` (VSWITCH_DPDK_MEMORY_MB) is a ceiling: p2p
uses ~170 MiB, pvp ~340 MiB. PMD threads busy-poll every CPU of the mask.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any, ClassVar

from vsperf.dpdk.conf import DpdkLabConf
from vsperf.dpdk.eal import (
    MAX_VETH_FRAME_BYTES,
    HugepageMemory,
    check_veth_mtu,
    check_veth_queues,
    dpdk_version,
    ovs_dpdk_extra,
    ovs_dpdk_hugepage_config,
    parse_ovs_dpdk_version,
    require_port_driver,
    runtime_dir,
    veth_vdev,
)
from vsperf.errors import CommandError, DeploymentError, PrerequisiteError
from vsperf.host.host import Host
from vsperf.vswitch.base import ForwardingPlan, PortKind, SwitchPort
from vsperf.vswitch.ovs import OvsVSwitch

log = logging.getLogger(__name__)
_DPDK_INIT_TIMEOUT_S = 30.0
_READY_TIMEOUT_S = 30.0


def polled_rxqs(iface: str, pmd_rxq_show: str) -> set[int]:
    """The enabled rx queues of `iface` that `ovs-appctl dpif-netdev/pmd-rxq-show` lists."""
    found = re.findall(rf"port: {re.escape(iface)}\s+queue-id:\s+(\d+) \(enabled\)", pmd_rxq_show)
    return {int(q) for q in found}


def rx_queue_packets(statistics: str) -> dict[int, int]:
    """Per rx queue packets (DPDK's rx_q<N>_packets) of `ovs-vsctl get Interface X statistics`."""
    return {int(q): int(n) for q, n in re.findall(r"\brx_q(\d+)_packets=(\d+)", statistics)}


def dpdk_errors(log_lines: Sequence[str]) -> list[str]:
    """The messages of ovs-vswitchd's log lines (time|seq|module|level|message) that DPDK's
    modules logged as errors: by the module, as port names (dpdk0) have "dpdk" in them too."""
    fields = [line.split("|", 4) for line in log_lines]
    return [f[4] for f in fields if len(f) == 5 and f[3] == "ERR" and "dpdk" in f[2]]


def interface_type(port: SwitchPort, server_mode: bool) -> str:
    """The OVS Interface type of `port` (server_mode: VSWITCH_VHOSTUSER_SERVER_MODE)."""
    if port.kind in ("veth", "pci"):
        return "dpdk"
    return "dpdkvhostuser" if server_mode else "dpdkvhostuserclient"


def vsperf_names(ports: Sequence[SwitchPort], server_mode: bool) -> list[str]:
    """VSPERF's Interface names, which its integration tests' steps name: the n-th port of a type
    in `ports`' order is <type><n> (dpdk0, dpdk1, dpdkvhostuserclient0, ...)."""
    kinds = [interface_type(p, server_mode) for p in ports]
    return [f"{kind}{kinds[:i].count(kind)}" for i, kind in enumerate(kinds)]


def rxq_polled(iface: str, pmd_rxq_show: str) -> bool:
    """True when `ovs-appctl dpif-netdev/pmd-rxq-show` lists an enabled queue of `iface`."""
    return bool(polled_rxqs(iface, pmd_rxq_show))


class OvsDpdkVSwitch(OvsVSwitch):
    """Open vSwitch with DPDK: PMD threads, AF_XDP/AF_PACKET and vhost-user ports, no hugepages."""

    NAME: ClassVar[str] = "ovs-dpdk"
    ALIASES: ClassVar[tuple[str, ...]] = ("OvsDpdkVhost",)
    PORT_KINDS: ClassVar[frozenset[PortKind]] = frozenset({"veth", "vhostuser", "pci"})
    DEFAULT_VNF: ClassVar[str] = "testpmd-vhost"
    LAB_MAX_FRAME_BYTES: ClassVar[int | None] = MAX_VETH_FRAME_BYTES
    vswitchd_start_timeout_s: ClassVar[float] = 60.0

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        super().__init__(settings, host)
        self.conf = DpdkLabConf.from_settings(settings)
        # Private runtime directory /var/run/dpdk/<prefix>, carrying the run id.
        self.file_prefix = host.names.dpdk_prefix("o")
        self._links: list[PurePosixPath] = []
        self._plan: ForwardingPlan | None = None
        self.queues = int(settings["LAB_PORT_QUEUES"])  # rx queues (n_rxq) of each veth port
        self.rxq_show = ""  # pmd-rxq-show once every port's queues were polled (wait_ready)
        self.hugepages: HugepageMemory | None = None  # None: --no-huge --no-pci (see use_hugepages)

    def use_hugepages(self, memory: HugepageMemory) -> None:
        """Run the EAL on hugepages with `memory.allowed_pci` probed (a testbed's PCI ports),
        instead of --no-huge --no-pci; call before `start`. The hugepages must be free on the
        host and the devices bound to a DPDK driver (vsperf.deploy.hugepages does both)."""
        self.hugepages = memory

    # --- override points of OvsVSwitch -------------------------------------------------------

    def vswitchd_binary(self) -> str:
        return self.conf.ovs_dpdk_vswitchd

    def other_config(self) -> dict[str, str]:
        config = {
            "dpdk-init": "true",
            "dpdk-extra": ovs_dpdk_extra(self.conf.vswitch_memory_mb, self.file_prefix),
            "pmd-cpu-mask": self.conf.pmd_cpu_mask,
            # One exactly sized mempool per port instead of one shared pool that OVS shrinks
            # by halving from 262144 mbufs: see the module docstring.
            "per-port-memory": "true",
        }
        if self.hugepages is not None:
            config.update(ovs_dpdk_hugepage_config(self.hugepages, self.file_prefix))
        config.update(self.conf.vswitchd_dpdk_config)
        return config

    def iface_name(self, port: SwitchPort, index: int) -> str:
        """VSPERF's Interface names (see `vsperf_names`); a port outside the plan (a tunnel's) is
        numbered by `index`."""
        ports = self._plan.ports if self._plan else ()
        if index < len(ports) and ports[index] == port:
            return vsperf_names(ports, self.conf.vhostuser_server_mode)[index]
        return f"{interface_type(port, self.conf.vhostuser_server_mode)}{index}"

    def interface_config(self, port: SwitchPort, index: int) -> tuple[str, dict[str, str]]:
        if port.kind == "pci":  # a device bound to vfio-pci / uio_pci_generic, probed by the EAL
            if self.hugepages is None or port.pci not in self.hugepages.allowed_pci:
                raise DeploymentError(f"ovs-dpdk: PCI port {port.name} ({port.pci}) is not allowed to the EAL")
            return "dpdk", {"dpdk-devargs": port.pci}
        if port.kind == "veth":
            options = {"dpdk-devargs": veth_vdev(self.conf.port_driver, index, port.ifname, self.queues)}
            if self.queues > 1:
                options["n_rxq"] = str(self.queues)
            return "dpdk", options
        kind = interface_type(port, self.conf.vhostuser_server_mode)
        return kind, ({} if self.conf.vhostuser_server_mode else {"vhost-server-path": port.socket_path})

    # --- VSwitch -----------------------------------------------------------------------------

    def check_prerequisites(self) -> None:
        if not self.host.which(self.conf.ovs_dpdk_vswitchd):
            where = self.host.prefix
            raise PrerequisiteError(
                f"{where}OVS-DPDK is missing ({self.conf.ovs_dpdk_vswitchd}): "
                "apt-get install openvswitch-switch-dpdk" + ("" if self.host.local else " there")
            )
        if self.host.local:  # the PMDs of this machine's DPDK (a testbed host's: found when it starts)
            require_port_driver(self.conf.port_driver)
        check_veth_queues(self.conf.port_driver, self.queues, f"vswitch ovs-dpdk: LAB_PORT_QUEUES={self.queues}")
        super().check_prerequisites()

    def version(self) -> str:
        if self._version is None:
            argv = [self.vswitchd_binary(), "--version"]
            try:
                out = self.host.executor.run(argv, check=False, timeout_s=10).stdout
            except CommandError:  # binary missing: check_prerequisites says what to install
                return "unknown"
            ovs, dpdk = parse_ovs_dpdk_version(out)
            if not ovs:
                return "unknown"
            self._version = f"{ovs} (DPDK {dpdk or dpdk_version(self.host.executor)})"
        return self._version

    def details(self) -> dict[str, str]:
        return {
            "datapath": "netdev (userspace, DPDK)",
            "port_driver": f"net_{self.conf.port_driver}",
            "pmd_cpu_mask": self.conf.pmd_cpu_mask,
            "vhost_user": "dpdkvhostuser (OVS server)" if self.conf.vhostuser_server_mode
            else "dpdkvhostuserclient (OVS client)",
            "dpdk_memory_mb": str(self.conf.vswitch_memory_mb),
            "rx_queues_per_veth_port": str(self.queues),
            "hugepages": "no (--no-huge --legacy-mem)",
        } | self._hugepage_details()

    def _hugepage_details(self) -> dict[str, str]:
        if self.hugepages is None:
            return {}
        return {"hugepages": f"yes ({self.hugepages.huge_dir})",
                "dpdk_memory_mb": ",".join(map(str, self.hugepages.socket_mem_mb)) + " (per NUMA node)",
                "pci_devices": ", ".join(self.hugepages.allowed_pci) or "none"}

    def start(self, netns: str | None) -> None:
        # Recorded first: a killed run's leftover cleanup removes it after the daemon.
        self.host.dpdk_file_prefix("o")
        super().start(netns)
        self._wait_dpdk_initialized()

    def vswitchd_started(self) -> None:
        self._wait_dpdk_initialized()

    def _wait_dpdk_initialized(self) -> None:
        deadline = time.monotonic() + _DPDK_INIT_TIMEOUT_S
        while self.vsctl("get", "Open_vSwitch", ".", "dpdk_initialized").strip() != "true":
            self.check_alive()
            if time.monotonic() > deadline:
                raise DeploymentError(
                    f"ovs-dpdk: DPDK not initialized after {_DPDK_INIT_TIMEOUT_S:g} s; see "
                    f"{self.rundir / 'ovs-vswitchd.log'}"
                )
            time.sleep(0.1)

    def configure(self, plan: ForwardingPlan) -> None:
        if any(port.kind == "veth" for port in plan.ports):
            check_veth_mtu(plan.mtu_bytes, "vswitch ovs-dpdk")
        self._plan = plan
        try:
            super().configure(plan)
        except DeploymentError as exc:
            # ovs-vsctl only says "Invalid argument"; the cause is in ovs-vswitchd's log.
            raise DeploymentError(f"{exc}{self._dpdk_error_hint()}") from exc
        if self.conf.vhostuser_server_mode:
            self._link_server_sockets(plan)

    def wait_ready(self, timeout_s: float = _READY_TIMEOUT_S) -> None:
        """Wait until PMD threads poll every port of the plan, each veth port's LAB_PORT_QUEUES
        rx queues (call after the VNFs started); logs what pmd-rxq-show shows then.

        A vhost-user port only becomes usable once its VNF has connected and OVS has created
        its mempool and re-assigned the PMD queues, up to a second after testpmd forwards;
        frames sent before are dropped at the port.
        """
        if self._plan is None or not self._plan.ports:  # `clean`: no datapath to show yet
            return
        wanted = {
            self.iface_name(port, index): set(range(self.queues if port.kind == "veth" else 1))
            for index, port in enumerate(self._plan.ports)
        }
        deadline = time.monotonic() + timeout_s
        while True:
            shown = self.appctl("ovs-vswitchd", "dpif-netdev/pmd-rxq-show")
            waiting = [n for n, queues in wanted.items() if not queues <= polled_rxqs(n, shown)]
            if not waiting:
                self.rxq_show = shown
                log.info("ovs-dpdk: PMD rx queues polled:\n%s", shown.rstrip())
                return
            self.check_alive()
            if time.monotonic() > deadline:
                raise DeploymentError(
                    f"ovs-dpdk: ports {', '.join(waiting)} not polled after {timeout_s:g} s "
                    "(VNF not connected?)"
                )
            time.sleep(0.05)

    def _dpdk_error_hint(self) -> str:
        """The last DPDK errors of ovs-vswitchd's log, and what to change for the usual one."""
        # Read on the switch's host (a testbed's DUT host, or this machine).
        try:
            tail = self.host.executor.run(["tail", "-n", "500", str(self.rundir / "ovs-vswitchd.log")],
                                          check=False, timeout_s=10.0)
        except CommandError:
            return ""
        errors = dpdk_errors(tail.stdout.splitlines())[-2:]
        if not errors:
            return ""
        hint = "; ".join(errors)
        if any("Cannot allocate memory" in e or "mempool" in e for e in errors):
            hint += f" (raise VSWITCH_DPDK_MEMORY_MB, now {self.conf.vswitch_memory_mb})"
        return f"; ovs-vswitchd: {hint}"

    def _link_server_sockets(self, plan: ForwardingPlan) -> None:
        """Point each VNF's socket path at the socket OVS created for its dpdkvhostuser port."""
        for index, port in enumerate(plan.ports):
            if port.kind != "vhostuser":
                continue
            # OVS names a dpdkvhostuser socket after its Interface, in its run directory.
            target = self.rundir / self.iface_name(port, index)
            if self.host.executor.run(["test", "-e", str(target)], check=False, timeout_s=10.0).returncode != 0:
                raise DeploymentError(f"ovs-dpdk: no vhost-user socket for {port.name} ({target})")
            link = PurePosixPath(port.socket_path)
            self._run(["ln", "-sfn", str(target), str(link)])
            self._links.append(link)

    def stop(self) -> None:
        started = self._started
        self._log_rx_queue_packets()
        try:
            super().stop()
        finally:
            if self._links:
                self._run_quietly(["rm", "-f", "--", *map(str, self._links)])
            self._links = []
            self._plan = None
            if started:
                # DPDK leaves config, fbarray files and sockets in its runtime directory on exit.
                self._run_quietly(["rm", "-rf", "--", str(runtime_dir(self.file_prefix))])

    def _log_rx_queue_packets(self) -> None:
        """Log what each rx queue of the veth ports received (DPDK's rx_q<N>_packets): with
        LAB_PORT_QUEUES > 1 it shows that every queue took frames, not only that it was polled."""
        if self._plan is None or self.queues < 2 or self._vswitchd is None or not self._vswitchd.alive():
            return
        for index, port in enumerate(self._plan.ports):
            if port.kind != "veth":
                continue
            name = self.iface_name(port, index)
            try:
                stats = self.vsctl("get", "Interface", name, "statistics", timeout_s=5.0)
            except DeploymentError as exc:
                log.warning("ovs-dpdk: no statistics of %s: %s", name, exc)
                continue
            counts = rx_queue_packets(stats)
            log.info("ovs-dpdk: %s rx packets per queue: %s", name,
                     ", ".join(f"q{q}={n}" for q, n in sorted(counts.items())) or "none reported")

    def _run_quietly(self, argv: list[str]) -> None:
        """A cleanup command on the switch's host; a failure is logged (the resource sweep retries)."""
        try:
            self._run(argv)
        except DeploymentError as exc:
            log.warning("%s", exc)

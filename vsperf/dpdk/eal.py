"""DPDK without hugepages or NICs: EAL arguments, device arguments, testpmd command lines,
testpmd and telemetry statistics, versions, prerequisites and runtime directories.

Everything here is a pure function of its arguments (or a single command through the
executor), so that OVS-DPDK, the `none` switch (testpmd as the switch) and the testpmd-vhost
VNF build their command lines the same way and the unit tests need no root.

Why these EAL arguments (measured with DPDK 22.11 on a 2-vCPU machine without hugepages):
- `--no-huge --legacy-mem`: no hugepages on these machines; the project's measurements found
  --legacy-mem required with --no-huge (vhost-user maps the guest's memory through the file
  descriptor of the one segment legacy mode allocates). Every mbuf then takes a 4 KiB page.
- `--no-pci`: keeps DPDK's probing away from the machine's own NIC.
- On a testbed's DUT host OVS-DPDK may run on hugepages instead, with its PCI ports allowed
  (`HugepageMemory`, `ovs_dpdk_hugepage_config`).
- `--file-prefix`: a private runtime directory (/var/run/dpdk/<prefix>) per process, carrying
  the run id; DPDK leaves it behind on exit, so the owner removes it at teardown.
"""

from __future__ import annotations

import re
import shutil
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from vsperf.config.schema_lab import FWD_MODES, PORT_DRIVERS, PortDriver
from vsperf.errors import CommandError, ConfigError, DeploymentError, PrerequisiteError
from vsperf.executor import Executor
from vsperf.host.host import Host

DPDK_RUNTIME_ROOT = PurePosixPath("/var/run/dpdk")  # where DPDK puts /<file-prefix> when run as root
TESTPMD_BINARY = "dpdk-testpmd"
TELEMETRY_CLIENT = "dpdk-telemetry.py"
UNIX_PATH_MAX_CHARS = 107  # sun_path is 108 bytes including the terminating NUL
MAX_VETH_MTU_BYTES = 1500  # largest IP MTU DPDK's veth drivers carry here (1518-byte frames)
MAX_VETH_FRAME_BYTES = MAX_VETH_MTU_BYTES + 18  # the same as a frame size, FCS included

_AF_XDP = 44  # AF_XDP address family (linux/socket.h); Python's socket module has no name for it


@dataclass(frozen=True)
class EalConfig:
    """EAL arguments of one DPDK process."""

    file_prefix: str  # private runtime directory name; carries the run id
    memory_mb: int  # -m: all the memory the process may use (no hugepages)
    lcores: str = ""  # --lcores mapping, e.g. "0@1,1@1" (empty: EAL's default, every CPU)
    vdevs: tuple[str, ...] = ()  # --vdev arguments, in port order

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", self.file_prefix):
            raise ValueError(f"DPDK file prefix {self.file_prefix!r} must be 1-64 of [A-Za-z0-9_.-]")
        if self.memory_mb <= 0:
            raise ValueError(f"DPDK memory must be > 0 MiB, got {self.memory_mb}")


def eal_memory_args(memory_mb: int, file_prefix: str) -> list[str]:
    """The memory and isolation arguments every vsperf DPDK process gets (see module doc)."""
    return ["--no-huge", "-m", str(memory_mb), "--legacy-mem", f"--file-prefix={file_prefix}", "--no-pci"]


def eal_args(cfg: EalConfig) -> list[str]:
    """Full EAL argument list for `cfg` (before the application's `--`)."""
    args = eal_memory_args(cfg.memory_mb, cfg.file_prefix)
    if cfg.lcores:
        args += ["--lcores", cfg.lcores]
    for vdev in cfg.vdevs:
        args += ["--vdev", vdev]
    return args


def ovs_dpdk_extra(memory_mb: int, file_prefix: str) -> str:
    """Value of OVS's other_config:dpdk-extra (OVS splits it on blanks into EAL arguments)."""
    return " ".join(eal_memory_args(memory_mb, file_prefix))


@dataclass(frozen=True)
class HugepageMemory:
    """OVS-DPDK's EAL on hugepages (a testbed's DUT host; the local lab runs --no-huge)."""

    socket_mem_mb: tuple[int, ...]  # MiB per NUMA node (DPDK_SOCKET_MEM)
    huge_dir: str  # a hugetlbfs mount (HUGEPAGE_DIR)
    allowed_pci: tuple[str, ...] = ()  # PCI devices the EAL probes (none: --no-pci)

    def __post_init__(self) -> None:
        if not self.socket_mem_mb or not any(self.socket_mem_mb) or min(self.socket_mem_mb) < 0:
            raise ValueError(f"DPDK socket memory needs MiB >= 0 per NUMA node, some > 0: {self.socket_mem_mb}")
        for pci in self.allowed_pci:
            if not re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", pci):
                raise ValueError(f"PCI address {pci!r} is not of the form 0000:3b:00.0")


def ovs_dpdk_hugepage_config(memory: HugepageMemory, file_prefix: str) -> dict[str, str]:
    """OVS other_config keys for an EAL on hugepages: `dpdk-socket-mem` and `dpdk-hugepage-dir`
    (as VSPERF sets them), and in dpdk-extra the private `--file-prefix`, `--huge-unlink` (the
    hugepage files go at once: the pages return to the host when the process ends, even killed)
    and `-a PCI` for each allowed device (the EAL probes only those), or `--no-pci`."""
    extra = ["--huge-unlink", f"--file-prefix={file_prefix}"]
    extra += [arg for pci in memory.allowed_pci for arg in ("-a", pci)] or ["--no-pci"]
    return {"dpdk-socket-mem": ",".join(str(mb) for mb in memory.socket_mem_mb),
            "dpdk-hugepage-dir": memory.huge_dir, "dpdk-extra": " ".join(extra)}


def single_cpu_lcores(cpu: int) -> str:
    """--lcores putting the main lcore and one forwarding lcore on `cpu`.

    testpmd needs a forwarding lcore besides its main one; the main lcore only sleeps (it
    wakes once a second to check for a stop signal), so both can share a CPU and the process
    busy-polls exactly one CPU.
    """
    if cpu < 0:
        raise ValueError(f"CPU number must be >= 0, got {cpu}")
    return f"0@{cpu},1@{cpu}"


def check_veth_mtu(mtu_bytes: int, who: str) -> None:
    """DeploymentError when frames of IP MTU `mtu_bytes` cannot cross DPDK's veth ports.

    Measured with DPDK 22.11: net_af_xdp drops every frame above 1518 bytes (its umem chunks
    hold 2 KiB) and OVS refuses the port at MTU 3000; net_af_packet fails to configure.
    """
    if mtu_bytes > MAX_VETH_MTU_BYTES:
        raise DeploymentError(
            f"{who}: frames larger than {MAX_VETH_MTU_BYTES + 18} bytes cannot cross DPDK's veth ports "
            f"(net_af_xdp/net_af_packet) here; use vswitch ovs or linux-bridge for jumbo frames"
        )


def veth_vdev(driver: PortDriver, index: int, ifname: str, queues: int = 1) -> str:
    """The --vdev / dpdk-devargs attaching kernel interface `ifname` as DPDK port `index`
    with `queues` rx/tx queue pairs (see check_veth_queues)."""
    if driver not in PORT_DRIVERS:
        raise ValueError(f"unknown DPDK port driver {driver!r}; valid: {', '.join(PORT_DRIVERS)}")
    if not re.fullmatch(r"[A-Za-z0-9_.@-]{1,15}", ifname):
        raise ValueError(f"interface name {ifname!r} cannot be passed to DPDK")
    if queues < 1:
        raise ValueError(f"queues must be >= 1, got {queues}")
    if queues == 1:
        return f"net_{driver}{index},iface={ifname}"
    check_veth_queues(driver, queues, f"DPDK port {ifname}")
    # One AF_PACKET socket per queue pair in one PACKET_FANOUT group: the kernel spreads the
    # veth's frames over them by flow hash.
    return f"net_{driver}{index},iface={ifname},qpairs={queues}"


def check_veth_queues(driver: PortDriver, queues: int, who: str, setting: str = "DPDK_PORT_DRIVER") -> None:
    """ConfigError when DPDK's `driver` cannot open `queues` queues of a veth.

    net_af_xdp opens at most the device's combined ethtool channels (ETHTOOL_GCHANNELS
    combined_count; 1 when max_combined is 0). A veth reports separate rx/tx channels and no
    combined ones, and `ethtool -L VETH combined 2` is refused, so net_af_xdp with
    queue_count=2 fails to probe ("Specified queue count 2 is larger than combined queue count
    1", DPDK 22.11 and later) whatever numrxqueues/numtxqueues the veth has. net_af_packet's
    qpairs take any number.
    """
    if queues > 1 and driver == "af_xdp":
        raise ConfigError(
            f"{who}: {queues} queues need {setting}=af_packet (DPDK's net_af_xdp opens at most "
            "the device's combined ethtool channels and a veth has none, only separate rx/tx ones)"
        )


def virtio_user_vdev(index: int, socket_path: str, *, server: bool, queue_size: int) -> str:
    """The --vdev of a virtio-user port on vhost-user socket `socket_path`.

    `server`: testpmd creates the socket and the switch connects (OVS dpdkvhostuserclient).
    """
    if len(socket_path) > UNIX_PATH_MAX_CHARS:
        raise ValueError(
            f"vhost-user socket path is longer than {UNIX_PATH_MAX_CHARS} characters: {socket_path}"
        )
    if "," in socket_path:
        raise ValueError(f"vhost-user socket path must not contain ',': {socket_path}")
    return (
        f"net_virtio_user{index},path={socket_path},server={int(server)},queues=1,queue_size={queue_size}"
    )


@dataclass(frozen=True)
class TestpmdConfig:
    """A non-interactive testpmd forwarding between pairs of ports (0<->1, 2<->3, ...)."""

    __test__ = False  # not a pytest test class despite the name

    eal: EalConfig
    fwd_mode: str = "io"  # io | mac | macswap
    nb_mbufs: int = 16384  # --total-num-mbufs
    descriptors: int = 1024  # --rxd and --txd
    stats_period_s: int = 60  # keeps testpmd non-interactive; also its periodic log output
    # --max-pkt-len (and larger mbufs) for frames above 1518 bytes; 0: testpmd's default. Note
    # that DPDK 22.11's net_af_packet refuses more than 1518 ("device max frame size").
    max_pkt_len_bytes: int = 0
    extra_args: tuple[str, ...] = ()  # appended after vsperf's application arguments
    binary: str = TESTPMD_BINARY

    def __post_init__(self) -> None:
        if self.fwd_mode not in FWD_MODES:
            raise ValueError(f"testpmd forwarding mode {self.fwd_mode!r}; valid: {', '.join(FWD_MODES)}")
        if len(self.eal.vdevs) < 2 or len(self.eal.vdevs) % 2:
            raise ValueError(f"testpmd forwards between pairs of ports, got {len(self.eal.vdevs)} ports")
        if self.stats_period_s < 1:
            raise ValueError("stats_period_s must be >= 1: without it testpmd waits on its stdin")


# testpmd's default mbufs (2048 B of data after 128 B of headroom) hold 1518-byte frames.
_DEFAULT_MAX_PKT_LEN_BYTES = 1518
_MBUF_HEADROOM_BYTES = 128


def testpmd_argv(cfg: TestpmdConfig) -> list[str]:
    """The command line of a testpmd that starts forwarding at once and runs until SIGINT.

    Without `-i`, testpmd starts forwarding by itself; with `--stats-period` it never reads its
    stdin and loops until SIGINT/SIGTERM, on which it prints the final forward statistics.
    """
    app = [
        f"--forward-mode={cfg.fwd_mode}",
        "--port-topology=paired",
        "--nb-cores=1",  # one forwarding lcore serves every stream: one busy CPU
        "--rxq=1",
        "--txq=1",
        f"--rxd={cfg.descriptors}",
        f"--txd={cfg.descriptors}",
        f"--total-num-mbufs={cfg.nb_mbufs}",
        f"--stats-period={cfg.stats_period_s}",
    ]
    if cfg.max_pkt_len_bytes > _DEFAULT_MAX_PKT_LEN_BYTES:
        app += [
            f"--max-pkt-len={cfg.max_pkt_len_bytes}",
            f"--mbuf-size={cfg.max_pkt_len_bytes + _MBUF_HEADROOM_BYTES}",
        ]
    return [cfg.binary, *eal_args(cfg.eal), "--", *app, *cfg.extra_args]


# ---------------------------------------------------------------- versions and prerequisites

_OVS_VERSION_RE = re.compile(r"Open vSwitch\)\s+(\S+)")
_DPDK_VERSION_RE = re.compile(r"DPDK\s+(\d+\.\d+(?:\.\d+)?\S*)")


def parse_ovs_dpdk_version(text: str) -> tuple[str, str]:
    """(OVS version, DPDK version) from `ovs-vswitchd-dpdk --version`; "" for what is missing.

    The output reads "ovs-vswitchd-dpdk (Open vSwitch) 3.1.0" then "DPDK 22.11.11".
    """
    ovs = _OVS_VERSION_RE.search(text)
    dpdk = _DPDK_VERSION_RE.search(text)
    return (ovs.group(1) if ovs else "", dpdk.group(1) if dpdk else "")


def dpdk_version(executor: Executor) -> str:
    """Version of the installed DPDK libraries (what dpdk-testpmd links), e.g. "22.11.11".

    dpdk-testpmd has no --version option, and starting an EAL just to print it would create a
    runtime directory; pkg-config (libdpdk.pc ships with dpdk-dev, as testpmd does) answers.
    """
    try:
        out = executor.run(["pkg-config", "--modversion", "libdpdk"], timeout_s=10.0).stdout.strip()
    except CommandError:
        return "unknown"
    return out.splitlines()[0] if out else "unknown"


def require_testpmd(host: Host, binary: str = TESTPMD_BINARY) -> None:
    """PrerequisiteError saying how to install dpdk-testpmd when `host` lacks it, or the DPDK
    telemetry client vsperf reads a running testpmd's counters and links through (both dpdk-dev)."""
    host.require(binary, "apt-get install dpdk-dev")
    host.require(TELEMETRY_CLIENT, "apt-get install dpdk-dev")


def _pmd_present(driver: str, lib_roots: Sequence[Path]) -> bool:
    pattern = f"librte_net_{driver}.so*"
    return any(any(root.glob(f"*/dpdk/pmds-*/{pattern}")) or any(root.glob(f"dpdk/pmds-*/{pattern}"))
               for root in lib_roots)


_LIB_ROOTS = (Path("/usr/lib"), Path("/usr/local/lib"), Path("/usr/lib64"))


def require_port_driver(driver: PortDriver, lib_roots: Sequence[Path] = _LIB_ROOTS) -> None:
    """PrerequisiteError unless DPDK's `driver` PMD is installed and (AF_XDP) the kernel has it."""
    if not _pmd_present(driver, lib_roots):
        raise PrerequisiteError(
            f"DPDK's net_{driver} driver is not installed (librte_net_{driver}.so): apt-get install dpdk"
            + ("; or set DPDK_PORT_DRIVER=af_packet" if driver == "af_xdp" else "")
        )
    if driver == "af_xdp" and not af_xdp_supported():
        raise PrerequisiteError(
            "AF_XDP sockets are not supported by this kernel (CONFIG_XDP_SOCKETS): "
            "set DPDK_PORT_DRIVER=af_packet to attach the ports with net_af_packet instead"
        )


def af_xdp_supported() -> bool:
    """True when the kernel lets us open an AF_XDP socket (needs root and CONFIG_XDP_SOCKETS)."""
    try:
        sock = socket.socket(_AF_XDP, socket.SOCK_RAW, 0)
    except OSError:
        return False
    sock.close()
    return True


# ---------------------------------------------------------------- runtime directories


def runtime_dir(file_prefix: str, root: PurePosixPath = DPDK_RUNTIME_ROOT) -> PurePosixPath:
    """The runtime directory a DPDK process with `--file-prefix=file_prefix` creates."""
    if "/" in file_prefix or file_prefix in ("", ".", ".."):
        raise ValueError(f"bad DPDK file prefix {file_prefix!r}")
    return root / file_prefix


def remove_runtime_dir(file_prefix: str, root: Path = Path(DPDK_RUNTIME_ROOT)) -> bool:
    """Remove the runtime directory of `file_prefix` (call after its process exited).

    DPDK leaves config, fbarray files and sockets there on exit. Returns True if it existed.
    """
    path = Path(runtime_dir(file_prefix, PurePosixPath(root)))
    if not path.exists():
        return False
    shutil.rmtree(path, ignore_errors=True)
    return True

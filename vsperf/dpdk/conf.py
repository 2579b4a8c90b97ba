"""The settings of the DPDK backends (ovs-dpdk, none, testpmd-vhost), read once and typed.

Defaults live in conf/02_vswitch.yaml and conf/03_vnf.yaml; the schema validates types. This
object checks what the schema cannot (a CPU mask that parses) and names the setting at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vsperf.config.schema_lab import FWD_MODES, PORT_DRIVERS, PortDriver
from vsperf.dpdk.eal import EalConfig, TestpmdConfig, single_cpu_lcores
from vsperf.errors import ConfigError
from vsperf.host.cpus import parse_cpu_mask

# Setting names (VSPERF's where VSPERF had them).
PMD_CPU_MASK = "VSWITCH_PMD_CPU_MASK"
VSWITCHD_DPDK_CONFIG = "VSWITCHD_DPDK_CONFIG"
VSWITCH_MEMORY_MB = "VSWITCH_DPDK_MEMORY_MB"
OVS_DPDK_VSWITCHD = "OVS_DPDK_VSWITCHD"
PORT_DRIVER = "DPDK_PORT_DRIVER"
VHOSTUSER_SERVER_MODE = "VSWITCH_VHOSTUSER_SERVER_MODE"
TESTPMD_FWD_MODE = "TESTPMD_FWD_MODE"
TESTPMD_ARGS = "TESTPMD_ARGS"
GUEST_FWD_MODE = "GUEST_TESTPMD_FWD_MODE"
GUEST_CPU = "GUEST_TESTPMD_CPU"
GUEST_ARGS = "GUEST_TESTPMD_ARGS"
TESTPMD_MEMORY_MB = "TESTPMD_MEMORY_MB"
TESTPMD_NB_MBUFS = "TESTPMD_NB_MBUFS"
TESTPMD_DESCRIPTORS = "TESTPMD_DESCRIPTORS"

SETTING_NAMES = (
    PMD_CPU_MASK, VSWITCHD_DPDK_CONFIG, VSWITCH_MEMORY_MB, OVS_DPDK_VSWITCHD, PORT_DRIVER,
    VHOSTUSER_SERVER_MODE, TESTPMD_FWD_MODE, TESTPMD_ARGS, GUEST_FWD_MODE, GUEST_CPU, GUEST_ARGS,
    TESTPMD_MEMORY_MB, TESTPMD_NB_MBUFS, TESTPMD_DESCRIPTORS,
)


@dataclass(frozen=True)
class DpdkLabConf:
    """Typed view of the DPDK settings."""

    pmd_cpus: tuple[int, ...]  # CPUs of VSWITCH_PMD_CPU_MASK, ascending
    pmd_cpu_mask: str  # VSWITCH_PMD_CPU_MASK as given (OVS's other_config:pmd-cpu-mask)
    vswitchd_dpdk_config: dict[str, str] = field(default_factory=dict)  # extra OVS other_config
    vswitch_memory_mb: int = 1024  # ceiling of OVS-DPDK's EAL -m (MiB)
    ovs_dpdk_vswitchd: str = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
    port_driver: PortDriver = "af_xdp"  # DPDK driver of veth ports
    vhostuser_server_mode: bool = False  # True: OVS owns the vhost-user sockets
    testpmd_fwd_mode: str = "io"  # testpmd as the switch (`none`)
    testpmd_args: tuple[str, ...] = ()
    guest_fwd_mode: str = "io"  # testpmd-vhost VNF (the first VNF's, see guest_fwd_mode_for)
    guest_fwd_modes: tuple[str, ...] = ()  # one per VNF (GUEST_TESTPMD_FWD_MODE as a list)
    guest_cpu: int = 0  # CPU of the VNF's forwarding lcore
    guest_args: tuple[str, ...] = ()
    testpmd_memory_mb: int = 128  # each testpmd's EAL -m (MiB)
    testpmd_nb_mbufs: int = 16384
    testpmd_descriptors: int = 1024  # ring size per port and direction

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> DpdkLabConf:
        """Read every DPDK setting; ConfigError naming the setting that is missing or invalid."""
        missing = [name for name in SETTING_NAMES if name not in settings]
        if missing:
            raise ConfigError(f"DPDK settings missing from the configuration: {', '.join(missing)}")
        mask = str(settings[PMD_CPU_MASK])
        try:
            cpus = tuple(parse_cpu_mask(mask))
        except ValueError as exc:
            raise ConfigError(f"{PMD_CPU_MASK}: {exc}") from exc
        driver = str(settings[PORT_DRIVER])
        if driver not in PORT_DRIVERS:
            raise ConfigError(f"{PORT_DRIVER}: expected one of {', '.join(PORT_DRIVERS)}, got {driver!r}")
        guest_modes = settings[GUEST_FWD_MODE]
        guest_modes = [guest_modes] if isinstance(guest_modes, str) else list(guest_modes)
        for name, modes in ((TESTPMD_FWD_MODE, [settings[TESTPMD_FWD_MODE]]), (GUEST_FWD_MODE, guest_modes)):
            if not modes or any(mode not in FWD_MODES for mode in modes):
                raise ConfigError(f"{name}: expected one of {', '.join(FWD_MODES)}, got {settings[name]!r}")
        config = settings[VSWITCHD_DPDK_CONFIG] or {}
        if not isinstance(config, Mapping):
            raise ConfigError(f"{VSWITCHD_DPDK_CONFIG}: expected a mapping of other_config keys to strings")
        return cls(
            pmd_cpus=cpus,
            pmd_cpu_mask=mask,
            vswitchd_dpdk_config={str(k): str(v) for k, v in config.items()},
            vswitch_memory_mb=_positive(settings, VSWITCH_MEMORY_MB),
            ovs_dpdk_vswitchd=str(settings[OVS_DPDK_VSWITCHD]),
            port_driver=driver,
            vhostuser_server_mode=bool(settings[VHOSTUSER_SERVER_MODE]),
            testpmd_fwd_mode=str(settings[TESTPMD_FWD_MODE]),
            testpmd_args=tuple(str(a) for a in settings[TESTPMD_ARGS] or ()),
            guest_fwd_mode=str(guest_modes[0]),
            guest_fwd_modes=tuple(str(m) for m in guest_modes),
            guest_cpu=_non_negative(settings, GUEST_CPU),
            guest_args=tuple(str(a) for a in settings[GUEST_ARGS] or ()),
            testpmd_memory_mb=_positive(settings, TESTPMD_MEMORY_MB),
            testpmd_nb_mbufs=_positive(settings, TESTPMD_NB_MBUFS),
            testpmd_descriptors=_positive(settings, TESTPMD_DESCRIPTORS),
        )

    def guest_fwd_mode_for(self, vnf_index: int) -> str:
        """Forwarding mode of VNF `vnf_index`'s testpmd: entry `vnf_index` of a
        GUEST_TESTPMD_FWD_MODE list, the first entry past its end (VSPERF's rule)."""
        if vnf_index < len(self.guest_fwd_modes):
            return self.guest_fwd_modes[vnf_index]
        return self.guest_fwd_mode

    @property
    def switch_cpu(self) -> int:
        """CPU of testpmd's forwarding lcore when testpmd is the switch: the first PMD CPU."""
        return self.pmd_cpus[0]

    def testpmd(
        self,
        *,
        file_prefix: str,
        cpu: int,
        vdevs: tuple[str, ...],
        fwd_mode: str,
        extra_args: tuple[str, ...] | list[str],
        max_pkt_len_bytes: int | None = None,
    ) -> TestpmdConfig:
        """A testpmd with these settings' memory, mbufs and rings, forwarding on one `cpu`."""
        eal = EalConfig(file_prefix=file_prefix, memory_mb=self.testpmd_memory_mb,
                        lcores=single_cpu_lcores(cpu), vdevs=vdevs)
        extra: dict[str, Any] = {} if max_pkt_len_bytes is None else {"max_pkt_len_bytes": max_pkt_len_bytes}
        return TestpmdConfig(eal, fwd_mode=fwd_mode, nb_mbufs=self.testpmd_nb_mbufs,
                             descriptors=self.testpmd_descriptors, extra_args=tuple(extra_args), **extra)


def _positive(settings: Mapping[str, Any], name: str) -> int:
    value = settings[name]
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{name}: expected a positive integer, got {value!r}")
    return value


def _non_negative(settings: Mapping[str, Any], name: str) -> int:
    value = settings[name]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{name}: expected an integer >= 0, got {value!r}")
    return value

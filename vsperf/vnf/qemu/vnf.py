"""The QEMU VNF: one virtual machine per VNF of the topology, forwarding between its two NICs.

Subclasses decide how the NICs reach the switch (vhost_user.py: vhost-user sockets, OVS-DPDK;
virtio_net.py: tap devices, ovs or linux-bridge). This class resolves the per-VM GUEST_*
settings (vsperf.vnf.qemu.macros), the image (vsperf's own, vsperf.vnf.qemu.image, or the user's
GUEST_IMAGE), the accelerator (vsperf.vnf.qemu.accel), and drives the guest (guest.py).

The guest runs on the switch's host (`vsperf.host.Host`: this machine, or a testbed's DUT host).
The image is always
built (or found) on this machine; a testbed host gets a copy of it in the run's directory there
(SFTP), which a user's image boots with -snapshot: neither the original nor the copy changes.
"""

from __future__ import annotations

import logging
import os
import shlex
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from vsperf.errors import CommandError, ConfigError, DeploymentError, PrerequisiteError
from vsperf.executor import Executor, LocalExecutor
from vsperf.host.host import Host
from vsperf.host.names import TAG_PREFIX
from vsperf.host.workdir import work_dir_for
from vsperf.vnf.base import Vnf
from vsperf.vnf.qemu.accel import choose_accel
from vsperf.vnf.qemu.guest import GuestScript, LoginPrompts, QemuGuest, console_log_path
from vsperf.vnf.qemu.image import GuestImage, ImageBuilder, kernel_cmdline
from vsperf.vnf.qemu.init_script import READY_MARKER
from vsperf.vnf.qemu.macros import guest_setting
from vsperf.vnf.qemu.qemu import QEMU_BINARY, Accel, NicConfig, QemuConfig, parse_smp
from vsperf.vswitch.base import SwitchPort

log = logging.getLogger(__name__)

LOOPBACKS = ("testpmd", "linux_bridge", "buildin")
REFUSED_LOOPBACKS = {
    "l2fwd": "VSPERF's l2fwd is a kernel module built from source; use GUEST_LOOPBACK testpmd (DPDK) or "
             "linux_bridge (kernel) instead",
    "clean": "GUEST_LOOPBACK clean configures nothing, so the guest would not forward; use buildin for an "
             "image that forwards by itself",
}


@dataclass(frozen=True)
class GuestSpec:
    """The GUEST_* settings of one VM, resolved (list semantics, macros) and checked."""

    index: int
    image: str  # '' = vsperf's image
    memory_mb: int
    hugepages: int
    smp: str
    cpus: int
    core_binding: tuple[int, ...]
    nics: int
    loopback: str
    fwd_mode: str
    testpmd_params: str
    timeout_s: int
    prompts: LoginPrompts

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], index: int) -> GuestSpec:
        """VM `index`'s settings; ConfigError naming the setting when one is not usable."""

        def get(name: str) -> Any:
            return guest_setting(settings, name, index)

        def number(name: str, minimum: int) -> int:
            value = get(name)
            try:
                result = int(str(value).strip())
            except ValueError as exc:
                raise ConfigError(f"{name} of VM {index}: {value!r} is not an integer") from exc
            if result < minimum:
                raise ConfigError(f"{name} of VM {index}: {result} is below {minimum}")
            return result

        loopback = str(get("GUEST_LOOPBACK"))
        if loopback in REFUSED_LOOPBACKS:
            raise ConfigError(f"GUEST_LOOPBACK {loopback!r}: {REFUSED_LOOPBACKS[loopback]}")
        if loopback not in LOOPBACKS:
            raise ConfigError(f"GUEST_LOOPBACK {loopback!r} unknown for QEMU guests; valid: {', '.join(LOOPBACKS)}")
        nics = number("GUEST_NICS_NR", 1)
        if nics != 2:
            # VSPERF chained further NIC pairs of a guest through the switch (pvp: phy -> nic0,
            # nic1 -> nic2, nic3 -> phy); the deployments here connect one pair per VNF.
            raise ConfigError(f"GUEST_NICS_NR {nics} (VM {index}): vsperf's guests forward between exactly 2 NICs "
                              "(VSPERF's chaining of more NIC pairs is not supported); set GUEST_NICS_NR to [2]")
        smp = str(get("GUEST_SMP"))
        try:
            cpus = parse_smp(smp)
        except ValueError as exc:
            raise ConfigError(f"GUEST_SMP of VM {index}: {smp!r} is not a QEMU -smp value") from exc
        # Whether the CPUs exist is the guest's host's question (check_core_binding).
        binding = tuple(int(str(c)) for c in get("GUEST_CORE_BINDING"))
        mode = get("GUEST_TESTPMD_FWD_MODE")
        return cls(
            index=index,
            image=str(get("GUEST_IMAGE")),
            memory_mb=number("GUEST_MEMORY", 128),
            hugepages=number("GUEST_HUGEPAGES_NR", 0),
            smp=smp, cpus=cpus, core_binding=binding,
            nics=nics, loopback=loopback, fwd_mode=str(mode),
            testpmd_params=str(get("GUEST_TESTPMD_PARAMS")),
            timeout_s=number("GUEST_TIMEOUT", 1),
            prompts=LoginPrompts(str(get("GUEST_USERNAME")), str(get("GUEST_PASSWORD")),
                                 str(get("GUEST_PROMPT_LOGIN")), str(get("GUEST_PROMPT_PASSWORD")),
                                 str(get("GUEST_PROMPT"))),
        )

    def check_core_binding(self, host_cpus: int, host: str) -> None:
        """ConfigError when GUEST_CORE_BINDING names a CPU that the guest's host (`host`, with
        `host_cpus` online CPUs; "local": this machine) does not have."""
        wrong = [c for c in self.core_binding if c >= host_cpus]
        if wrong:
            where = "this host" if host == "local" else f"host {host}"
            raise ConfigError(f"GUEST_CORE_BINDING of VM {self.index}: CPU {wrong[0]} does not exist "
                              f"({where} has CPUs 0-{host_cpus - 1})")

    def testpmd_app_args(self) -> tuple[str, ...]:
        """The application part of GUEST_TESTPMD_PARAMS (after ' -- '), without VSPERF's -i."""
        text = self.testpmd_params.strip()
        if text == "--" or text.startswith("-- "):
            app = text[2:]
        elif " -- " in text:
            app = text.split(" -- ", 1)[1]
        else:
            app = text  # no EAL part: application arguments only
        return tuple(a for a in shlex.split(app) if a not in ("-i", "--interactive", "--"))


def user_image_script(spec: GuestSpec) -> GuestScript:
    """Commands that set up the loopback in a user's image (VSPERF's guest commands)."""
    if spec.loopback == "buildin":
        return GuestScript(())
    if spec.loopback == "linux_bridge":
        return GuestScript((
            # sysfs rather than `ip link set br0 type bridge ...`, which busybox's ip does not know.
            "ip link add br0 type bridge", "echo 0 > /sys/class/net/br0/bridge/forward_delay",
            "echo 0 > /sys/class/net/br0/bridge/ageing_time",
            "ip link set eth0 master br0", "ip link set eth1 master br0",
            "ip link set eth0 up", "ip link set eth1 up", "ip link set br0 up",
        ))
    params = spec.testpmd_params.replace(" -i", " ").strip()
    if " -- " not in f" {params} ":
        params = f"{params} --".strip()
    # In the background testpmd must not read the terminal (SIGTTIN): a pipe that never writes
    # feeds it; --stats-period flushes its log every second, which shows that it forwards.
    # The marker is assembled by the shell, so the echo of the typed command never matches it.
    return GuestScript((
        "modprobe uio_pci_generic",
        "for d in 0000:00:04.0 0000:00:05.0; do echo $d > /sys/bus/pci/devices/$d/driver/unbind; "
        "echo uio_pci_generic > /sys/bus/pci/devices/$d/driver_override; echo $d > /sys/bus/pci/drivers_probe; done",
        f"echo {spec.hugepages} > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
        f"(sleep 2147483647 | dpdk-testpmd {params} --forward-mode={spec.fwd_mode} --stats-period 1 "
        "> /tmp/testpmd.log 2>&1 &)",
        "for i in $(seq 60); do grep -q 'Port statistics' /tmp/testpmd.log && break; sleep 1; done; "
        "grep -q 'Port statistics' /tmp/testpmd.log && echo VSPERF-GUEST-$(echo FORWARDING) loopback=testpmd",
    ), ready_pattern=READY_MARKER + " loopback=testpmd")


class QemuVnf(Vnf):
    """A QEMU virtual machine forwarding between its two virtio-net NICs (see subclasses)."""

    NIC_TYPE: ClassVar[str] = ""  # for the report

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        super().__init__(settings, host)
        self._created = False
        self._switch_netns: str | None = None
        self._index = 0
        self._spec: GuestSpec | None = None
        self._ports: tuple[SwitchPort, ...] = ()
        self._image: GuestImage | None = None
        self._boot_files: tuple[PurePosixPath, ...] = ()  # the image's files where the host reads them
        self._accel: Accel = "tcg"
        self._guest: QemuGuest | None = None
        self._version: str | None = None
        self._console_log: Path | None = None
        self.boot_time_s = 0.0

    @property
    def label(self) -> str:
        return f"qemu vm{self._index}"

    # --- prerequisites, report ---------------------------------------------------------------

    def check_prerequisites(self) -> None:
        self.host.require(QEMU_BINARY, "apt-get install qemu-system-x86")
        raw = self.settings["GUEST_LOOPBACK"]
        count = max(1, len(raw) if isinstance(raw, list | tuple) else 1)
        try:
            specs = [GuestSpec.from_settings(self.settings, i) for i in range(count)]
            if self.host.local:  # a testbed host's CPUs are checked when the guest is created there
                for spec in specs:
                    spec.check_core_binding(os.cpu_count() or 1, "local")
        except ConfigError as exc:
            raise PrerequisiteError(str(exc)) from exc
        if any(not s.image for s in specs):  # the image is built on this machine
            ImageBuilder(self._controller(), self._cache_dir()).check_prerequisites()
        for spec in specs:
            if spec.image and not Path(spec.image).is_file():
                raise PrerequisiteError(f"GUEST_IMAGE of VM {spec.index}: {spec.image} does not exist")

    def version(self) -> str:
        if self._version is None:
            try:
                out = self.host.executor.run([QEMU_BINARY, "--version"], check=False, timeout_s=10).stdout
            except CommandError:
                return "unknown"
            first = out.strip().splitlines()[0] if out.strip() else "unknown"
            self._version = first.replace("QEMU emulator version ", "QEMU ")
        return self._version

    def details(self) -> dict[str, str]:
        spec = self._spec
        info = {
            "nic": self.NIC_TYPE,
            "accel": self._accel,
            "accel_note": ("TCG (software emulation): the numbers are functional, not performance"
                           if self._accel == "tcg" else "KVM"),
        }
        if spec is not None:
            info.update({
                "loopback": spec.loopback,
                "image": spec.image or (f"vsperf guest image {self._image.key} (kernel {self._image.kernel_release})"
                                        if self._image else "vsperf guest image"),
                "memory_mb": str(spec.memory_mb),
                "smp": spec.smp,
                "core_binding": ",".join(str(c) for c in spec.core_binding) or "unbound",
            })
            if spec.loopback == "testpmd":
                info["forwarding_mode"] = spec.fwd_mode
        if self.boot_time_s:
            info["boot_to_forwarding_s"] = f"{self.boot_time_s:.1f}"
        if self._console_log is not None:
            info["console_log"] = self._console_log.name
        return info

    @property
    def ports(self) -> tuple[SwitchPort, ...]:
        return self._ports

    def pids(self) -> dict[str, int]:
        pid = self._guest.pid if self._guest is not None else None
        return {self.label: pid} if pid is not None else {}

    # --- lifecycle ---------------------------------------------------------------------------

    def create(self, index: int, mtu_bytes: int, switch_netns: str | None) -> tuple[SwitchPort, SwitchPort]:
        host = self.host
        self._created, self._index, self._switch_netns = True, index, switch_netns
        spec = self._spec = GuestSpec.from_settings(self.settings, index)
        if spec.core_binding:  # QEMU's threads are pinned on `host`: its CPUs, not this machine's
            spec.check_core_binding(host.cpu_count(), host.name)
        if spec.image:
            self._boot_files = (host.stage_file(Path(spec.image), f"vm{index}-{Path(spec.image).name}"),)
        else:
            image = self._image = ImageBuilder(self._controller(), self._cache_dir(),
                                               metapackage=str(self.settings["GUEST_KERNEL_PACKAGE"])).get()
            self._boot_files = (host.stage_file(image.kernel_path, f"{image.key}-{image.kernel_path.name}"),
                                host.stage_file(image.initrd_path, f"{image.key}-{image.initrd_path.name}"))
        kernel, initrd = (self._boot_files * 2)[:2]
        self._accel = choose_accel(str(self.settings["GUEST_ACCEL"]), host, self._image, kernel, initrd,
                                   self._cache_dir(), work_dir_for(host.run_id) / f"kvm-probe{index}-console.log")
        ports = self.create_ports(index, mtu_bytes)
        self._ports = ports
        return ports

    @abstractmethod
    def create_ports(self, index: int, mtu_bytes: int) -> tuple[SwitchPort, SwitchPort]:
        """Create (or name) the two switch-side ports on the host, recording what exists there."""

    @abstractmethod
    def nic_configs(self) -> tuple[NicConfig, ...]:
        """The guest's NICs, in PCI order, matching `ports`."""

    def qemu_netns(self) -> str | None:
        """The namespace QEMU runs in (taps must be in it); None: the root namespace."""
        return None

    def start(self) -> None:
        spec = self._require()
        host = self.host
        self._console_log = console_log_path(host.results_dir or work_dir_for(host.run_id), self._index)
        name = f"{TAG_PREFIX}{host.run_id}-vm{self._index}"
        if self._image is not None:
            append = kernel_cmdline(loopback=spec.loopback, fwd_mode=spec.fwd_mode, nics=spec.nics, cpus=spec.cpus,
                                    hugepages=spec.hugepages, testpmd_args=spec.testpmd_app_args())
            kernel, initrd = self._boot_files
            cfg = QemuConfig(name=name, accel=self._accel, memory_mb=spec.memory_mb, smp=spec.smp,
                             nics=self.nic_configs(), cpu_binding=spec.core_binding,
                             kernel_path=str(kernel), initrd_path=str(initrd), append=append)
        else:
            cfg = QemuConfig(name=name, accel=self._accel, memory_mb=spec.memory_mb, smp=spec.smp,
                             nics=self.nic_configs(), cpu_binding=spec.core_binding,
                             disk_image=str(self._boot_files[0]))
        self._guest = QemuGuest(host, self.label, cfg, netns=self.qemu_netns(), console_log=self._console_log)
        self._guest.start()
        if self._image is not None:
            self._guest.wait_forwarding(spec.timeout_s)
        else:
            self._guest.login_and_run(spec.prompts, user_image_script(spec), spec.timeout_s)
        self.boot_time_s = self._guest.boot_time_s

    def check_alive(self) -> None:
        if self._guest is not None:
            self._guest.check_alive()

    def stop(self) -> None:
        if self._guest is not None:
            self._guest.stop()
            self._guest = None
        if self._created:
            self.remove_ports()
        self._created = False
        self._ports = ()

    def remove_ports(self) -> None:
        """Remove what `create_ports` made (the guest has stopped)."""

    # --- helpers -----------------------------------------------------------------------------

    def _cache_dir(self) -> Path:
        return Path(str(self.settings["GUEST_IMAGE_CACHE_DIR"])).expanduser()

    def _controller(self) -> Executor:
        """This machine's executor (the image is built here, whichever host runs the guest)."""
        executor = self.host.executor
        return executor if self.host.local else LocalExecutor(executor.command_log)

    def _require(self) -> GuestSpec:
        if not self._created or self._spec is None:
            raise DeploymentError(f"{self.NAME}: start() called before create()")
        return self._spec


class QemuPciPassthroughVnf(QemuVnf):
    """VSPERF's QemuPciPassthrough: refused (the local lab has no NIC to pass through)."""

    NAME: ClassVar[str] = "qemu-pci-passthrough"
    ALIASES: ClassVar[tuple[str, ...]] = ("QemuPciPassthrough",)
    NIC_TYPE: ClassVar[str] = "PCI passthrough"

    def check_prerequisites(self) -> None:
        which = ("the local lab has none of" if self.host.local
                 else f"vsperf does not pass through on host {self.host.name}")
        raise PrerequisiteError(f"VNF QemuPciPassthrough needs a physical NIC to pass to the guest, which {which}; "
                                "use --vnf QemuDpdkVhostUser or QemuVirtioNet")

    def create_ports(self, index: int, mtu_bytes: int) -> tuple[SwitchPort, SwitchPort]:
        self.check_prerequisites()
        raise AssertionError("unreachable")

    def nic_configs(self) -> tuple[NicConfig, ...]:
        return ()

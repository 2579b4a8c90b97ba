"""The QEMU command line of one guest, built from a frozen description (no shell, no templates).

Facts this encodes (measured on QEMU 7.2, see DESIGN.md):
- vhost-user needs the guest's memory shared with the switch: a memfd backend with share=on
  (no host hugepages), bound to the guest's only NUMA node;
- under TCG, QEMU 7.2 segfaults when the guest starts a vhost-user virtio-net device with MSI-X
  (vhost_net_start -> msix_set_vector_notifiers): such devices get `vectors=0` (INTx);
- TCG runs with `-cpu max` (Debian's DPDK needs SSE4.2); KVM with `-cpu host`;
- NICs sit at fixed PCI slots (0x04, 0x05, ...) so the guest finds them in a known order;
- the serial console is QEMU's stdio (`-chardev stdio`): the pipes of the process, which reach
  vsperf on this machine or over the SSH channel that started QEMU on a testbed host
  (vsperf.vnf.qemu.console).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

Accel = Literal["kvm", "tcg"]
NicKind = Literal["vhostuser", "tap"]
FIRST_NIC_SLOT = 4
QEMU_BINARY = "qemu-system-x86_64"


@dataclass(frozen=True)
class NicConfig:
    """One virtio-net-pci NIC of a guest.

    `vhostuser`: `socket_path` is the vhost-user socket, served by QEMU when `server` (else the
    switch serves it and QEMU connects). `tap`: `ifname` is an
    existing tap device (QEMU runs in its namespace); `vhost` turns on the vhost-net kernel
    accelerator (/dev/vhost-net must exist).
    """

    kind: NicKind
    mac: str
    socket_path: str = ""
    ifname: str = ""
    vhost: bool = False
    server: bool = True

    def __post_init__(self) -> None:
        if self.kind == "vhostuser" and not self.socket_path:
            raise ValueError("a vhost-user NIC needs a socket_path")
        if self.kind == "tap" and not self.ifname:
            raise ValueError("a tap NIC needs an ifname")


@dataclass(frozen=True)
class QemuConfig:
    """Everything one guest's command line depends on."""

    name: str
    accel: Accel
    memory_mb: int
    smp: str  # QEMU's -smp value: "1", "2", "sockets=1,cores=2"
    nics: tuple[NicConfig, ...]
    kernel_path: str = ""  # the built image: -kernel/-initrd/-append
    initrd_path: str = ""
    append: str = ""
    disk_image: str = ""  # a user's image (qcow2), booted with -snapshot: never modified
    binary: str = QEMU_BINARY
    cpu_binding: tuple[int, ...] = ()  # host CPUs for `taskset -c`; empty: unbound
    extra_args: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.memory_mb < 64:
            raise ValueError(f"guest memory {self.memory_mb} MB is too small")
        if bool(self.kernel_path) == bool(self.disk_image):
            raise ValueError("a guest boots either a kernel (+initrd) or a disk image")

    @property
    def shared_memory(self) -> bool:
        """vhost-user NICs need guest memory the switch can map."""
        return any(nic.kind == "vhostuser" for nic in self.nics)


def nic_args(index: int, nic: NicConfig, accel: Accel) -> list[str]:
    """-netdev/-device (and -chardev) arguments of NIC `index`."""
    slot = f"0x{FIRST_NIC_SLOT + index:x}.0"
    ident = f"net{index}"
    device = f"virtio-net-pci,netdev={ident},mac={nic.mac},addr={slot}"
    if nic.kind == "vhostuser":
        if accel == "tcg":
            device += ",vectors=0"  # see the module docstring: MSI-X + vhost-user + TCG segfaults
        # As the server QEMU still waits for the switch before the guest runs (vhost-user needs
        # its backend at start-up); wait=off only stops it from blocking the monitor meanwhile.
        chardev = f"socket,id=char{index},path={nic.socket_path}" + (",server=on,wait=off" if nic.server else "")
        return [
            "-chardev", chardev,
            "-netdev", f"vhost-user,id={ident},chardev=char{index}",
            "-device", device,
        ]
    vhost = "on" if nic.vhost else "off"
    return [
        "-netdev", f"tap,id={ident},ifname={nic.ifname},script=no,downscript=no,vhost={vhost}",
        "-device", device,
    ]


def qemu_argv(cfg: QemuConfig) -> list[str]:
    """The full command line of the guest `cfg` describes."""
    argv = ["taskset", "-c", ",".join(str(c) for c in cfg.cpu_binding)] if cfg.cpu_binding else []
    argv += [
        cfg.binary, "-name", cfg.name,
        "-accel", cfg.accel, "-cpu", "max" if cfg.accel == "tcg" else "host",
        "-smp", cfg.smp, "-m", str(cfg.memory_mb),
        "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
    ]
    if cfg.shared_memory:
        argv += [
            "-object", f"memory-backend-memfd,id=mem0,size={cfg.memory_mb}M,share=on",
            "-numa", "node,memdev=mem0",
        ]
    if cfg.kernel_path:
        argv += ["-kernel", cfg.kernel_path, "-initrd", cfg.initrd_path, "-append", cfg.append]
    else:
        argv += ["-drive", f"file={cfg.disk_image},if=virtio,media=disk", "-snapshot"]
    argv += [
        # signal=off: a byte typed on the console is the guest's, never a Ctrl-C for QEMU.
        "-chardev", "stdio,id=serial0,signal=off", "-serial", "chardev:serial0",
    ]
    for index, nic in enumerate(cfg.nics):
        argv += nic_args(index, nic, cfg.accel)
    argv += list(cfg.extra_args)
    return argv


def guest_mac(vm_index: int, nic_index: int) -> str:
    """A locally administered MAC for NIC `nic_index` of VM `vm_index` (52:54:00 is QEMU's OUI)."""
    return f"52:54:00:5e:{vm_index:02x}:{nic_index:02x}"


def parse_smp(value: str | int) -> int:
    """Number of vCPUs an -smp value gives ("2" -> 2, "sockets=1,cores=2" -> 2)."""
    text = str(value).strip()
    if text.isdigit():
        return int(text)
    fields = dict(part.split("=", 1) for part in text.split(",") if "=" in part)
    if "cpus" in fields:
        return int(fields["cpus"])
    total = 1
    for key in ("sockets", "dies", "cores", "threads"):
        total *= int(fields.get(key, "1"))
    return total


def short_cpu_list(cpus: Sequence[int]) -> str:
    """"0,1" for the report."""
    return ",".join(str(c) for c in cpus)

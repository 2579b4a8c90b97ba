"""vsperf.deploy.hugepages: OVS-DPDK on a testbed's PCI port, the whole command sequence on a DUT
host whose sysfs and procfs are a tree that acts like the kernel's (no hardware: binding real NICs
was not exercised): the preflight's refusals, hugepages reserved and the device bound (each
recorded first) before OVS starts, OVS's EAL on hugepages with the device allowed, the port as
`type=dpdk options:dpdk-devargs=PCI`, and everything put back."""

from __future__ import annotations

import os
import shlex
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from fake_machine import FakeMachine, FakeOvs, fake_hosts
from pci_tree import DEV, KernelTree
from settings_util import make_settings

from vsperf.backends import build_registries
from vsperf.config import traffic_from_settings
from vsperf.deploy.build import DeploymentSpec, build_deployment
from vsperf.deploy.deployment import HostDeployment
from vsperf.deploy.hugepages import HugepageConf, dpdk_ports, dut_problem, pci_unsupported, reserve_hugepages
from vsperf.deploy.support import deployment_problem
from vsperf.dpdk.eal import HugepageMemory, ovs_dpdk_hugepage_config
from vsperf.errors import ConfigError
from vsperf.host.hosts import RunHosts
from vsperf.host.ports import PortError
from vsperf.testbed.model import Cable, DutPort, GenPortSpec, Testbed, TestbedHost
from vsperf.vswitch.ovs_dpdk import OvsDpdkVSwitch

HUGE = "sys/kernel/mm/hugepages/hugepages-2048kB"
WRITE = 'printf "%s\\n" "$1" > "$2"'  # how a sysfs file is written on a host (vsperf.host.pci)
REGS = build_registries()


class HostTree(KernelTree):
    """The PCI tree plus 2 MiB hugepages (at most `capacity` pages), /proc/meminfo and /proc/mounts;
    a driver named by `refuses` is loaded but never takes the device (vfio-pci without an IOMMU)."""

    def __init__(self, root: Path, *, capacity: int = 1024, nr: int = 4, free: int = 4,
                 mounts: str = "nodev /dev/hugepages hugetlbfs rw 0 0\n", refuses: str | None = None,
                 **kw: Any) -> None:
        super().__init__(root, **kw)
        self.capacity = capacity
        self.refuses = refuses
        (root / HUGE).mkdir(parents=True)
        self._pages(nr, free)
        (root / "proc").mkdir()
        (root / "proc/meminfo").write_text("MemAvailable:    4194304 kB\nHugePages_Free:    4\n"
                                            "Hugepagesize:  2048 kB\n")
        (root / "proc/mounts").write_text("sysfs /sys sysfs rw 0 0\n" + mounts)

    def _pages(self, nr: int, free: int) -> None:
        (self.root / HUGE / "nr_hugepages").write_text(f"{nr}\n")
        (self.root / HUGE / "free_hugepages").write_text(f"{free}\n")

    def write(self, path: PurePosixPath, text: str) -> None:
        override = self.read(PurePosixPath(f"/sys/bus/pci/devices/{DEV}/driver_override"))
        if path.name == "drivers_probe" and self.refuses is not None and override == self.refuses:
            self.writes.append((str(path), text))  # probed: the driver does not take it
            return
        if path.name != "nr_hugepages":
            super().write(path, text)
            return
        self.writes.append((str(path), text))
        nr, free = (int(self.read(PurePosixPath(f"/{HUGE}/{n}")) or 0) for n in ("nr_hugepages", "free_hugepages"))
        wanted = min(int(text), self.capacity)  # the kernel gives what it can
        self._pages(wanted, max(free + wanted - nr, 0))


class TreeMachine(FakeMachine):
    """Host "dut": its files are a HostTree's (writes act as the kernel's), its interfaces and
    processes a FakeMachine's, with ens1f0 the PCI device's interface while its own driver has it
    (down, no addresses) and ens2 a kernel port. Every command is recorded."""

    def __init__(self, tree: HostTree) -> None:
        super().__init__("dut")
        self.tree = tree
        self.add_phys("ens1f0", "02:00:00:00:00:01")
        self.add_phys("ens2", "02:00:00:00:00:02")

    def _answer(self, argv: list[str], netns: str | None) -> tuple[int, str, str]:
        fs, path = self.tree, PurePosixPath(argv[-1])
        if argv[0] == "cat" and path.parts[1] in ("sys", "proc") and path.name != "stat":
            text = fs.read(path)
            return (1, "", "No such file") if text is None else (0, text + "\n", "")
        if argv[0] == "readlink":
            target = fs.root / str(path).lstrip("/")
            return (0, os.readlink(target) + "\n", "") if target.is_symlink() else (1, "", "")
        if argv[0] == "test" and str(path).startswith("/sys"):
            return (0 if fs.exists(path) else 1), "", ""
        if argv[:2] == ["ls", "-1"]:
            return 0, "\n".join(fs.listdir(path)), ""
        if argv[:2] == ["sh", "-c"] and argv[2].startswith("printf"):
            fs.write(PurePosixPath(argv[5]), argv[4])
            return 0, "", ""
        return super()._answer(argv, netns)


def _testbed() -> Testbed:
    cables = (Cable(DutPort(None, DEV, "vfio-pci"), GenPortSpec("p0", None)),  # port 0: the PCI device
              Cable(DutPort("ens2", None, "kernel"), GenPortSpec("p1", None)))  # port 1: a kernel interface
    return Testbed("lab.yaml", (TestbedHost("dut"), TestbedHost("gen")), "dut", "gen", cables)


def _hosts(tmp_path: Path, tree: HostTree) -> tuple[RunHosts, TreeMachine, FakeMachine]:
    dut, gen = TreeMachine(tree), FakeMachine("gen")
    gen.add_phys("p0", "02:00:00:00:01:01")
    gen.add_phys("p1", "02:00:00:00:01:02")
    return fake_hosts({"dut": dut, "gen": gen}, _testbed(), tmp_path), dut, gen


def _pci_spec(vswitch: str = "ovs-dpdk", **settings: Any) -> DeploymentSpec:
    return DeploymentSpec("p2p", vswitch, "auto", make_settings(settings))


def _problem(hosts: RunHosts, spec: DeploymentSpec) -> str:
    supports_match = REGS.vswitches.get(spec.vswitch).cls.SUPPORTS_MATCH
    traffic = traffic_from_settings(spec.settings, 64)
    return deployment_problem(spec, traffic, REGS.trafficgens.get("vsgen").cls, hosts, supports_match=supports_match)


def test_ovs_dpdk_takes_the_pci_port_over_and_everything_is_put_back(tmp_path: Path) -> None:
    tree = HostTree(tmp_path / "host")
    hosts, dut, gen = _hosts(tmp_path, tree)
    ovs = FakeOvs(dut, "ovs-vswitchd-dpdk (Open vSwitch) 3.1.0\nDPDK 22.11.11\n")
    hosts._check(hosts.testbed.cables[0])  # the preflight's check: device there, vfio-pci loaded, not in use
    spec = _pci_spec(DPDK_SOCKET_MEM=["512", "0"], HUGEPAGE_RAM_ALLOCATION=1048576)
    assert _problem(hosts, spec) == "" and dut_problem(hosts.dut, HugepageConf.from_settings(spec.settings)) is None
    dut.calls.clear()
    dut.journal_at.clear()
    deployment = build_deployment(spec, REGS, hosts, traffic_from_settings(spec.settings, 64))
    assert isinstance(deployment, HostDeployment) and isinstance(deployment.vswitch, OvsDpdkVSwitch)
    with deployment:
        commands = dut.commands()
        # 512 free pages wanted (1 GiB), 4 free: nr_hugepages raised by the missing 508, from 4 to 512
        assert tree.read(PurePosixPath(f"/{HUGE}/nr_hugepages")) == "512"
        assert tree.read(PurePosixPath(f"/{HUGE}/free_hugepages")) == "512"
        assert [PurePosixPath(p).name for p, _ in tree.writes] == [
            "nr_hugepages", "driver_override", "unbind", "drivers_probe"]
        assert tree.link_name(PurePosixPath(f"/sys/bus/pci/devices/{DEV}/driver")) == "vfio-pci"
        # both changes recorded before they were made, and before OVS started
        knob = f"/{HUGE}/nr_hugepages"
        assert [(e.kind, e.host, e.name, dict(e.state)) for e in hosts.journal if e.kind in ("knob", "binding")] == [
            ("knob", "dut", knob, {"value": "4"}),
            ("binding", "dut", DEV, {"pci": DEV, "driver": "ixgbe", "override": None})]
        assert dut.recorded_before(shlex.join(["sh", "-c", WRITE, "sh", "512", knob]), "knob", knob)
        override = f"/sys/bus/pci/devices/{DEV}/driver_override"
        assert dut.recorded_before(shlex.join(["sh", "-c", WRITE, "sh", "vfio-pci", override]), "binding", DEV)
        first_ovs = dut.index("ovsdb-tool")
        last_write = max(i for i, c in enumerate(commands) if c.startswith("sh -c 'printf"))
        assert last_write < first_ovs
        config = next(c for c in commands if "other_config:dpdk-init=true" in c)
        assert "other_config:dpdk-socket-mem=512,0" in config
        assert "other_config:dpdk-hugepage-dir=/dev/hugepages" in config
        assert f"'other_config:dpdk-extra=--huge-unlink --file-prefix=vspabc123o -a {DEV}'" in config
        assert "--no-huge" not in " ".join(commands)
        add = next(c for c in commands if " add-br " in c)
        assert f"type=dpdk ofport_request=1 mtu_request=1500 options:dpdk-devargs={DEV}" in add
        assert "options:dpdk-devargs=net_af_xdp1,iface=ens2" in add  # the kernel port, as on the lab
        assert not any(c.startswith("ip link set dev") and DEV in c for c in commands)
        port0 = next(c for c in deployment.components() if c.name == "port 0")
        assert (port0.version, port0.details["bus-info"], port0.details["host"]) == ("vfio-pci", DEV, "dut")
        assert deployment.vswitch.details()["hugepages"] == "yes (/dev/hugepages)"
        assert ovs.running() == {"ovsdb-server", "ovs-vswitchd"}
    # the device back with its driver, the hugepages as they were, nothing recorded any more
    assert tree.link_name(PurePosixPath(f"/sys/bus/pci/devices/{DEV}/driver")) == "ixgbe"
    assert (tree.root / f"sys/bus/pci/devices/{DEV}/net/ens1f0").is_dir()
    assert tree.read(PurePosixPath(f"/{HUGE}/nr_hugepages")) == "4"
    assert not hosts.journal.path.exists() and ovs.running() == set()
    assert not gen.link("p0").up and not dut.link("ens2").up


def test_the_preflight_refuses_a_device_it_must_not_take(tmp_path: Path) -> None:
    # the driver is not loaded
    hosts, _dut, _gen = _hosts(tmp_path / "a", HostTree(tmp_path / "a/host", drivers=("ixgbe",)))
    with pytest.raises(PortError, match=r"^host dut: driver vfio-pci is not loaded; run modprobe vfio-pci there$"):
        hosts._check(hosts.testbed.cables[0])
    # another DPDK driver has it already (someone else's DPDK application)
    tree = HostTree(tmp_path / "b/host", native="uio_pci_generic", drivers=("uio_pci_generic", "vfio-pci"))
    hosts, _dut, _gen = _hosts(tmp_path / "b", tree)
    with pytest.raises(PortError, match=r"^host dut: PCI device 0000:3b:00\.0 is bound to uio_pci_generic already"):
        hosts._check(hosts.testbed.cables[0])
    # its interface has addresses (the host's own network?)
    hosts, dut, _gen = _hosts(tmp_path / "c", HostTree(tmp_path / "c/host"))
    dut.link("ens1f0").up = True
    dut.link("ens1f0").addresses.append("192.0.2.5/24")
    with pytest.raises(PortError, match=r"^host dut: PCI device 0000:3b:00.0 is interface ens1f0, which has "
                                        r"addresses \(in use by the host\?\); refusing to take it for DPDK$"):
        hosts._check(hosts.testbed.cables[0])
    assert not tree.writes and not dut.tree.writes  # nothing changed


def test_hugepages_the_host_cannot_give_are_refused_before_anything_is_created(tmp_path: Path) -> None:
    conf = HugepageConf.from_settings(make_settings())
    hosts, dut, _gen = _hosts(tmp_path / "a", HostTree(tmp_path / "a/host", mounts=""))
    assert dut_problem(hosts.dut, conf) == ("host dut: HUGEPAGE_DIR /dev/hugepages is not a hugetlbfs mount: "
                                            "mount -t hugetlbfs nodev /dev/hugepages there, or set HUGEPAGE_DIR")
    # the plan's check: ovs-dpdk with the PCI port (hugepages always), a switch that cannot attach it
    assert "not a hugetlbfs mount" in _problem(hosts, _pci_spec())
    assert _problem(hosts, _pci_spec("ovs")) == (
        "DUT port 0 is PCI device 0000:3b:00.0 for DPDK (driver vfio-pci): vswitch ovs cannot "
        "attach it (use --vswitch ovs-dpdk, or driver kernel with its interface)")
    big = HugepageConf.from_settings(make_settings({"HUGEPAGE_RAM_ALLOCATION": 8388608}))
    hosts, dut, _gen = _hosts(tmp_path / "b", HostTree(tmp_path / "b/host"))
    assert dut_problem(hosts.dut, big) == ("host dut: HUGEPAGE_RAM_ALLOCATION is 8388608 kB of hugepages, but only "
                                           "8192 kB are free and 4194304 kB available; lower it (and DPDK_SOCKET_MEM)")
    assert all(argv[0] in ("cat", "test") for argv, _ns in dut.calls)  # read only
    unwritable = HostTree(tmp_path / "c/host")
    (unwritable.root / HUGE / "nr_hugepages").unlink()
    hosts, _dut, _gen = _hosts(tmp_path / "c", unwritable)
    assert dut_problem(hosts.dut, conf) == (f"host dut: /{HUGE}/nr_hugepages is not writable (hugepages cannot be "
                                            "reserved there)")


def test_reserving_hugepages_the_kernel_cannot_give_is_an_error_and_is_put_back(tmp_path: Path) -> None:
    tree = HostTree(tmp_path / "host", capacity=100)
    hosts, _dut, _gen = _hosts(tmp_path, tree)
    reserve_hugepages(hosts.dut, 4)  # 4 free already: nothing written
    assert tree.writes == [] and len(hosts.journal) == 0
    with pytest.raises(PortError, match=r"^host dut: asked for 512 hugepages of 2048 kB, the kernel gave 100 "):
        reserve_hugepages(hosts.dut, 512)
    hosts.release()
    assert tree.read(PurePosixPath(f"/{HUGE}/nr_hugepages")) == "4" and not hosts.journal.path.exists()


def test_a_failed_binding_is_put_back_with_the_hugepages(tmp_path: Path) -> None:
    # vfio-pci is loaded but the device does not bind to it (no IOMMU): the deployment fails, and
    # the release gives the device its driver back and the hugepages their number
    tree = HostTree(tmp_path / "host", refuses="vfio-pci")
    hosts, dut, _gen = _hosts(tmp_path, tree)
    FakeOvs(dut)
    spec = _pci_spec(DPDK_SOCKET_MEM=["512", "0"], HUGEPAGE_RAM_ALLOCATION=1048576)
    with pytest.raises(PortError, match=rf"^host dut: PCI device {DEV} did not bind to vfio-pci \(bound to None\)"), \
            build_deployment(spec, REGS, hosts, traffic_from_settings(spec.settings, 64)):
        pass
    assert not any(argv[0].startswith("ovs") for argv, _ns in dut.calls)  # OVS never started
    assert tree.link_name(PurePosixPath(f"/sys/bus/pci/devices/{DEV}/driver")) == "ixgbe"
    assert tree.read(PurePosixPath(f"/{HUGE}/nr_hugepages")) == "4" and not hosts.journal.path.exists()


def test_the_dpdk_ports_of_the_cables() -> None:
    assert dpdk_ports(_testbed().cables) == [(0, DEV, "vfio-pci")]


def test_settings_and_refusals() -> None:
    conf = HugepageConf.from_settings(make_settings())
    assert (conf.socket_mem_mb, conf.reserve_kb, conf.huge_dir, conf.always) == ((1024, 0), 2097152,
                                                                                 "/dev/hugepages", False)
    assert conf.pages(2048) == 1024
    with pytest.raises(ConfigError, match=r"HUGEPAGE_RAM_ALLOCATION \(524288 kB\) must cover DPDK_SOCKET_MEM "
                                          r"\(1048576 kB in all\)"):
        HugepageConf.from_settings(make_settings({"HUGEPAGE_RAM_ALLOCATION": 524288}))
    with pytest.raises(ConfigError, match="DPDK_SOCKET_MEM: expected MiB per NUMA node"):
        HugepageConf.from_settings(make_settings({"DPDK_SOCKET_MEM": ["lots"]}))
    cables = _testbed().cables
    assert pci_unsupported("ovs-dpdk", cables) == "" and pci_unsupported("linux-bridge", cables[1:]) == ""
    assert "vswitch linux-bridge cannot attach it" in pci_unsupported("linux-bridge", cables)
    memory = HugepageMemory((128,), "/mnt/huge")
    assert ovs_dpdk_hugepage_config(memory, "p1") == {
        "dpdk-socket-mem": "128", "dpdk-hugepage-dir": "/mnt/huge",
        "dpdk-extra": "--huge-unlink --file-prefix=p1 --no-pci"}
    with pytest.raises(ValueError, match="not of the form"):
        HugepageMemory((128,), "/mnt/huge", ("3b:00.0",))

"""OVS-DPDK on a testbed's PCI port, the whole command sequence on a recorded DUT host whose sysfs
and procfs are a tree that acts like the kernel's (no hardware: binding real NICs was not
exercised): the preflight's refusals, hugepages reserved and the device bound (each recorded
first) before OVS starts, OVS's EAL on hugepages with the device allowed, the port as
`type=dpdk options:dpdk-devargs=PCI`, and everything put back."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, cast

import pytest
from pci_tree import DEV, KernelTree
from settings_util import make_settings
from test_testbed_deploy import FakeHost, _link, _pt

from vsperf.config import traffic_from_settings
from vsperf.host.workdir import RunContext
from vsperf.dpdk.eal import HugepageMemory, ovs_dpdk_hugepage_config
from vsperf.errors import ConfigError
from vsperf.executor import Executor
from vsperf.testbed.checks import dut_problems
from vsperf.testbed.deploy import TestbedDeployment
from vsperf.deploy.hugepages import HugepageConf, dut_problem, pci_unsupported
from vsperf.testbed.journal import PortJournal
from vsperf.testbed.model import Cable, DutPort, GenPortSpec, Testbed, TestbedHost
from vsperf.host.ports import PortError, read_port
from vsperf.testbed.session import TestbedSession
from vsperf.vswitch.ovs_dpdk import OvsDpdkVSwitch

HUGE = "sys/kernel/mm/hugepages/hugepages-2048kB"
PIDS = {"ovsdb-server": 4101, "ovs-vswitchd": 4102}


class HostTree(KernelTree):
    """The PCI tree plus 2 MiB hugepages (at most `capacity` pages), /proc/meminfo and /proc/mounts."""

    def __init__(self, root: Path, *, capacity: int = 1024, nr: int = 4, free: int = 4,
                 mounts: str = "nodev /dev/hugepages hugetlbfs rw 0 0\n", **kw: Any) -> None:
        super().__init__(root, **kw)
        self.capacity = capacity
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
        if path.name != "nr_hugepages":
            super().write(path, text)
            return
        self.writes.append((str(path), text))
        nr, free = (int(self.read(PurePosixPath(f"/{HUGE}/{n}")) or 0) for n in ("nr_hugepages", "free_hugepages"))
        wanted = min(int(text), self.capacity)  # the kernel gives what it can
        self._pages(wanted, max(free + wanted - nr, 0))


class DutHost(FakeHost):
    """Host "dut": files from a HostTree, a private OVS-DPDK that does what it is told, and its
    interfaces (FakeHost). Every command is recorded."""

    def __init__(self, tree: HostTree, calls: list[tuple[str, list[str]]]) -> None:
        # ens1f0: the PCI device's interface while its own driver has it (down, no addresses)
        super().__init__("dut", {"ens1f0": _link("ens1f0", "02:00:00:00:00:01"),
                                 "ens2": _link("ens2", "02:00:00:00:00:02")}, calls)
        self.tree = tree
        self.running: set[str] = set()
        self.ifaces: list[str] = []

    def run(self, argv: Sequence[str], *, netns: str | None = None, check: bool = True,
            timeout_s: float | None = 60.0, env: Mapping[str, str] | None = None,
            input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        args = list(argv)
        answer = self._file(args) if args[0] in ("cat", "readlink", "test", "ls", "sh") else self._ovs(args)
        if answer is None:
            return super().run(args, netns=netns, check=check, timeout_s=timeout_s, env=env)
        self.calls.append(("dut", args))
        code, out = answer
        return subprocess.CompletedProcess(args, code, out, "")

    def _file(self, args: list[str]) -> tuple[int, str] | None:
        fs, path = self.tree, PurePosixPath(args[-1])
        if args[0] == "cat":
            if path.name == "stat" and path.parent.name.isdigit():  # a daemon's /proc/PID/stat
                label = next((n for n, p in PIDS.items() if str(p) == path.parent.name), "")
                running = label in self.running
                return (0, f"{path.parent.name} ({label}) S" + " 0" * 18 + " 777 0\n") if running else (1, "")
            if path.suffix == ".pid":
                return 0, f"{PIDS[path.stem]}\n"
            text = fs.read(path)
            return (1, "") if text is None else (0, text + "\n")
        if args[0] == "readlink":
            target = fs.root / str(path).lstrip("/")
            return (0, os.readlink(target) + "\n") if target.is_symlink() else (1, "")
        if args[0] == "test":
            return (0 if fs.exists(path) else 1), ""
        if args[0] == "ls":
            return 0, "\n".join(fs.listdir(path))
        if args[:2] == ["sh", "-c"] and args[2].startswith("printf"):
            fs.write(PurePosixPath(args[5]), args[4])
            return 0, ""
        if args[:2] == ["sh", "-c"] and "kill" in args[2]:
            self.running.clear()
            return 0, ""
        return None

    def _ovs(self, args: list[str]) -> tuple[int, str] | None:
        name = PurePosixPath(args[0]).name
        if name in ("ovsdb-tool", "ovs-ofctl"):
            return 0, ""
        if name in ("ovsdb-server", "ovs-vswitchd-dpdk"):
            self.running.add("ovsdb-server" if name == "ovsdb-server" else "ovs-vswitchd")
            return 0, ""
        if name == "ovs-appctl":
            if args[-1] == "exit" or "exit" in args:
                self.running.discard(PurePosixPath(args[args.index("-t") + 1]).name.split(".")[0])
                return 0, ""
            shown = "".join(f"  port: {i}  queue-id:  0 (enabled)   pmd usage:  0 %\n" for i in self.ifaces)
            return 0, shown
        if name == "ovs-vsctl":
            if "add-br" in args:
                bridge = args[args.index("add-br") + 1]
                self.links[bridge] = _link(bridge, "02:00:00:00:00:0b", up=True)
                self.ifaces = [args[i + 2] for i, a in enumerate(args) if a == "add-port"]
            if args[-2:] == ["dpdk_initialized"] or "dpdk_initialized" in args:
                return 0, "true\n"
            if "list" in args and "Interface" in args:
                return 0, "".join(f"{n},{i + 1},\n" for i, n in enumerate(self.ifaces))
            return 0, ""
        return None

    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        self.calls.append(("dut", ["put", str(remote)]))


def _testbed() -> Testbed:
    cables = (Cable(DutPort(None, DEV, "vfio-pci"), GenPortSpec("p0", None)),  # port 0: the PCI device
              Cable(DutPort("ens2", None, "kernel"), GenPortSpec("p1", None)))  # port 1: a kernel interface
    return Testbed("lab.yaml", (TestbedHost("dut"), TestbedHost("gen")), "dut", "gen", cables)


def _session(tmp_path: Path, tree: HostTree) -> tuple[TestbedSession, list[tuple[str, list[str]]], DutHost]:
    calls: list[tuple[str, list[str]]] = []
    dut = DutHost(tree, calls)
    gen = FakeHost("gen", {"p0": _link("p0", "02:00:00:00:01:01"), "p1": _link("p1", "02:00:00:00:01:02")}, calls)
    executors = cast(dict[str, Executor], {"dut": dut, "gen": gen})
    session = TestbedSession(_testbed(), executors, PortJournal.create(tmp_path / "state", "abc123"))
    for host, ifname in (("dut", "ens2"), ("gen", "p0"), ("gen", "p1")):
        session.checked[(host, ifname)] = read_port(executors[host], ifname)
    calls.clear()
    return session, calls, dut


def test_ovs_dpdk_takes_the_pci_port_over_and_everything_is_put_back(tmp_path: Path) -> None:
    tree = HostTree(tmp_path / "host")
    session, calls, dut = _session(tmp_path, tree)
    session._check(session.testbed.cables[0])  # the preflight: device there, vfio-pci loaded, not in use
    settings = make_settings({"DPDK_SOCKET_MEM": ["512", "0"], "HUGEPAGE_RAM_ALLOCATION": 1048576})
    ctx = RunContext("abc123", tmp_path, tmp_path, session.dut)
    assert dut_problem(session, HugepageConf.from_settings(settings)) is None
    calls.clear()
    deployment = TestbedDeployment("p2p", session, run_id="abc123", traffic=traffic_from_settings(settings, 64),
                                   vswitch=OvsDpdkVSwitch(settings, ctx),
                                   hugepages=HugepageConf.from_settings(settings))
    with deployment:
        commands = [" ".join(argv) for host, argv in calls if host == "dut"]
        # 512 free pages wanted (1 GiB), 4 free: nr_hugepages raised by the missing 508, from 4 to 512
        assert tree.read(PurePosixPath(f"/{HUGE}/nr_hugepages")) == "512"
        assert tree.read(PurePosixPath(f"/{HUGE}/free_hugepages")) == "512"
        assert [PurePosixPath(p).name for p, _ in tree.writes] == [
            "nr_hugepages", "driver_override", "unbind", "drivers_probe"]
        assert tree.link_name(PurePosixPath(f"/sys/bus/pci/devices/{DEV}/driver")) == "vfio-pci"
        # both changes recorded before they were made, and before OVS started
        journal = session.journal
        assert [b.driver for _, b in journal.bindings] == ["ixgbe"]
        assert [(h, p, v) for h, p, v in journal.knobs] == [("dut", f"/{HUGE}/nr_hugepages", "4")]
        first_ovs = next(i for i, c in enumerate(commands) if c.startswith("ovsdb-tool"))
        last_write = max(i for i, c in enumerate(commands) if c.startswith("sh -c printf"))
        assert last_write < first_ovs
        config = next(c for c in commands if "other_config:dpdk-init=true" in c)
        assert "other_config:dpdk-socket-mem=512,0" in config
        assert "other_config:dpdk-hugepage-dir=/dev/hugepages" in config
        assert f"other_config:dpdk-extra=--huge-unlink --file-prefix=vspabc123o -a {DEV}" in config
        assert "--no-huge" not in " ".join(commands)
        add = next(c for c in commands if " add-br " in c)
        assert f"type=dpdk ofport_request=1 mtu_request=1500 options:dpdk-devargs={DEV}" in add
        assert "options:dpdk-devargs=net_af_xdp1,iface=ens2" in add  # the kernel port, as on the lab
        assert not any(argv[:4] == ["ip", "link", "set", "dev"] and DEV in argv for _, argv in calls)
        port0 = next(c for c in deployment.components() if c.name == "port 0")
        assert (port0.version, port0.details["bus-info"]) == ("vfio-pci", DEV)
        assert deployment.vswitch.details()["hugepages"] == "yes (/dev/hugepages)"
    # the device back with its driver, the hugepages as they were, nothing recorded any more
    assert tree.link_name(PurePosixPath(f"/sys/bus/pci/devices/{DEV}/driver")) == "ixgbe"
    assert (tree.root / f"sys/bus/pci/devices/{DEV}/net/ens1f0").is_dir()
    assert tree.read(PurePosixPath(f"/{HUGE}/nr_hugepages")) == "4"
    assert not session.journal.path.exists() and dut.running == set()


def test_the_preflight_refuses_a_device_it_must_not_take(tmp_path: Path) -> None:
    # the driver is not loaded
    session, _calls, _dut = _session(tmp_path / "a", HostTree(tmp_path / "a/host", drivers=("ixgbe",)))
    with pytest.raises(PortError, match=r"^host dut: driver vfio-pci is not loaded; run modprobe vfio-pci there$"):
        session._check(session.testbed.cables[0])
    # another DPDK driver has it already (someone else's DPDK application)
    tree = HostTree(tmp_path / "b/host", native="uio_pci_generic", drivers=("uio_pci_generic", "vfio-pci"))
    session, _calls, _dut = _session(tmp_path / "b", tree)
    with pytest.raises(PortError, match="bound to uio_pci_generic already"):
        session._check(session.testbed.cables[0])
    # its interface has addresses (the host's own network?)
    session, _calls, dut = _session(tmp_path / "c", HostTree(tmp_path / "c/host"))
    dut.links["ens1f0"] = _link("ens1f0", "02:00:00:00:00:01", up=True) | {
        "addr_info": [{"family": "inet", "local": "192.0.2.5", "prefixlen": 24}]}
    with pytest.raises(PortError, match=r"PCI device 0000:3b:00.0 is interface ens1f0, which has addresses"):
        session._check(session.testbed.cables[0])
    assert not tree.writes and not dut.tree.writes  # nothing changed


def test_hugepages_the_host_cannot_give_are_refused_before_anything_is_created(tmp_path: Path) -> None:
    conf = HugepageConf.from_settings(make_settings())
    session, calls, _dut = _session(tmp_path / "a", HostTree(tmp_path / "a/host", mounts=""))
    assert dut_problem(session, conf) == ("host dut: HUGEPAGE_DIR /dev/hugepages is not a hugetlbfs mount: "
                                          "mount -t hugetlbfs nodev /dev/hugepages there, or set HUGEPAGE_DIR")
    big = HugepageConf.from_settings(make_settings({"HUGEPAGE_RAM_ALLOCATION": 8388608}))
    session, calls, _dut = _session(tmp_path / "b", HostTree(tmp_path / "b/host"))
    assert dut_problem(session, big) == ("host dut: HUGEPAGE_RAM_ALLOCATION is 8388608 kB of hugepages, but only "
                                         "8192 kB are free and 4194304 kB available; lower it (and DPDK_SOCKET_MEM)")
    assert all(argv[0] in ("cat", "test") for _, argv in calls)  # read only
    # the plan's check: ovs-dpdk with the PCI port (hugepages always), a switch that cannot attach it
    tree = HostTree(tmp_path / "c/host", mounts="")
    session, _calls, _dut = _session(tmp_path / "c", tree)
    assert "not a hugetlbfs mount" in str(dut_problems(session, [_pt(vswitch="ovs-dpdk")]))
    assert dut_problems(session, [_pt(vswitch="ovs")]) == (
        "test phy2phy_tput: DUT port 0 is PCI device 0000:3b:00.0 for DPDK (driver vfio-pci): vswitch ovs cannot "
        "attach it (use --vswitch ovs-dpdk, or driver kernel with its interface)")


def test_reserving_hugepages_the_kernel_cannot_give_is_an_error_and_is_put_back(tmp_path: Path) -> None:
    tree = HostTree(tmp_path / "host", capacity=100)
    session, _calls, _dut = _session(tmp_path, tree)
    session.reserve_hugepages(4)  # 4 free already: nothing written
    assert tree.writes == []
    with pytest.raises(PortError, match=r"^host dut: asked for 512 hugepages of 2048 kB, the kernel gave 100 "):
        session.reserve_hugepages(512)
    session.restore()
    assert tree.read(PurePosixPath(f"/{HUGE}/nr_hugepages")) == "4"


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

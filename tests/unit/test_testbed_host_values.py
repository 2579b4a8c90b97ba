"""Values a testbed run reads on the host they belong to, through that host's executor, never on
the controller: the DUT host's CPUs (GUEST_CORE_BINDING), its kernel config (linux-bridge's VLAN
push), the generator host's CPUs and whether the switch's PMD CPUs are busy there, and whether
/dev/kvm can be opened on the guest's host (the KVM probe)."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest
from fake_host import RemoteMachine
from recorded_host import RecordedHost
from settings_util import make_settings

from vsperf.backends import build_registries
from vsperf.deploy.build import DeploymentSpec, build_deployment
from vsperf.errors import ConfigError, PrerequisiteError
from vsperf.executor import Executor
from vsperf.host.host import Host
from vsperf.host.hosts import RunHosts
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
from vsperf.testbed.model import Cable, DutPort, GenPortSpec, Testbed, TestbedHost
from vsperf.traffic import Traffic
from vsperf.trafficgen.trafgen.backend import TrafgenTrafficGenerator
from vsperf.trafficgen.vsgen.backend import VsgenTrafficGenerator
from vsperf.vnf.qemu.accel import KVM_OPEN_SCRIPT, probe_kvm
from vsperf.vnf.qemu.virtio_net import QemuVirtioNetVnf
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch

NPROC = ("getconf", "_NPROCESSORS_ONLN")
CPUS_ALLOWED = ("grep", "^Cpus_allowed_list:", "/proc/self/status")
RELEASE = "6.1.0-99-amd64"
NO_VLAN_FILTERING = "#\nCONFIG_BRIDGE=m\n# CONFIG_BRIDGE_VLAN_FILTERING is not set\n"


class Staged(Exception):
    """The guest got as far as copying its image to the host: its settings were accepted."""


def _host(tmp_path: Path, executor: Executor, name: str = "dut") -> Host:
    return Host(name, executor, RunNames("ab12"), Journal("ab12", root=tmp_path / "state"))


def _guest_host(tmp_path: Path, nproc: str) -> Host:
    host = _host(tmp_path, RecordedHost("dut", {NPROC: [nproc]}))

    def stage_file(local: Path, name: str) -> PurePosixPath:
        raise Staged(name)

    host.stage_file = stage_file  # type: ignore[method-assign]
    return host


def _qemu(tmp_path: Path, cpu: int, host: Host) -> QemuVirtioNetVnf:
    image = tmp_path / "guest.qcow2"
    image.write_text("image")
    settings = make_settings({"GUEST_CORE_BINDING": [[cpu]], "GUEST_IMAGE": [str(image)]})
    return QemuVirtioNetVnf(settings, host)


def test_guest_core_binding_is_checked_against_the_dut_hosts_cpus(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 64)  # the controller has CPU 3, the DUT host does not
    host = _guest_host(tmp_path, "2\n")
    with pytest.raises(ConfigError, match=r"VM 0: CPU 3 does not exist \(host dut has CPUs 0-1\)"):
        _qemu(tmp_path, 3, host).create(0, 1500, None)
    assert host.executor.commands == [(NPROC, None)]  # type: ignore[attr-defined]
    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # and the other way round: the DUT host has it
    with pytest.raises(Staged):
        _qemu(tmp_path, 3, _guest_host(tmp_path, "8\n")).create(0, 1500, None)


def _bridge(tmp_path: Path, executor: Executor) -> LinuxBridgeVSwitch:
    return LinuxBridgeVSwitch(make_settings(), _host(tmp_path, executor))


def test_linux_bridge_reads_the_switch_hosts_kernel_config(tmp_path: Path) -> None:
    boot = RecordedHost("dut", {("uname", "-r"): [RELEASE], ("cat", f"/boot/config-{RELEASE}"): [NO_VLAN_FILTERING]})
    with pytest.raises(PrerequisiteError, match=r"on the kernel of host dut \(CONFIG_BRIDGE_VLAN_FILTERING is off\)"):
        _bridge(tmp_path, boot).check_vlan_support()
    assert boot.commands == [(("uname", "-r"), None), (("cat", f"/boot/config-{RELEASE}"), None)]
    _bridge(tmp_path, boot).check_prerequisites()  # the bridge itself is there (a module)
    # no /boot/config there: the running kernel's own /proc/config.gz, unpacked on the host
    proc = RecordedHost("dut", {("uname", "-r"): [RELEASE], ("gzip", "-dc", "/proc/config.gz"): [NO_VLAN_FILTERING]})
    with pytest.raises(PrerequisiteError, match="CONFIG_BRIDGE_VLAN_FILTERING"):
        _bridge(tmp_path, proc).check_vlan_support()
    with_vlans = RecordedHost("dut", {("uname", "-r"): [RELEASE],
                                      ("cat", f"/boot/config-{RELEASE}"): ["\nCONFIG_BRIDGE_VLAN_FILTERING=y\n"]})
    _bridge(tmp_path, with_vlans).check_vlan_support()
    _bridge(tmp_path, RecordedHost("dut", {("uname", "-r"): [RELEASE]})).check_vlan_support()  # unreadable: allowed


def test_a_testbed_deployment_checks_the_vlan_push_on_the_dut_host(tmp_path: Path) -> None:
    dut = RecordedHost("dut", {("uname", "-r"): [RELEASE], ("cat", f"/boot/config-{RELEASE}"): [NO_VLAN_FILTERING]})
    gen = RecordedHost("gen", {})
    cables = tuple(Cable(DutPort(f"ens1f{i}", None, "kernel"), GenPortSpec(f"ens2f{i}", None)) for i in range(2))
    testbed = Testbed("lab.yaml", (TestbedHost("dut"), TestbedHost("gen")), "dut", "gen", cables)
    journal = Journal("abc123", root=tmp_path)
    names = RunNames("abc123")
    hosts = RunHosts(testbed, {"dut": Host("dut", dut, names, journal), "gen": Host("gen", gen, names, journal)},
                     journal)
    spec = DeploymentSpec("p2p", "linux-bridge", "auto", make_settings(), frame_modification="vlan")
    with pytest.raises(PrerequisiteError, match="kernel of host dut"):
        build_deployment(spec, build_registries(), hosts, Traffic())
    assert gen.commands == [] and len(journal) == 0  # refused before anything was made


PMD_ON_CPU_1 = {"VSWITCH": "ovs", "VSWITCH_PMD_CPU_MASK": "0x2"}


def _generator_host(tmp_path: Path) -> Host:
    """The generator host, with CPUs 0-3 (read there, not on this machine)."""
    return _host(tmp_path, RemoteMachine("tgen", answers={CPUS_ALLOWED: "Cpus_allowed_list:\t0-3\n"}), "tgen")


def test_vsgen_avoids_the_pmd_cpus_only_where_the_switch_runs(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0})  # this machine's: never asked
    gen = VsgenTrafficGenerator(make_settings(PMD_ON_CPU_1), _generator_host(tmp_path))
    assert gen._request("rate", (0, 1), 1000.0, (10, 10)).cpus == (0, 2)  # the local lab: beside the switch
    gen.switch_on_host = False  # a testbed whose DUT host is another machine
    assert gen._request("rate", (0, 1), 1000.0, (10, 10)).cpus == (0, 1)


def test_trafgen_avoids_the_pmd_cpus_only_where_the_switch_runs(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0})  # this machine's: never asked
    gen = TrafgenTrafficGenerator(make_settings(PMD_ON_CPU_1), _generator_host(tmp_path))
    assert [gen._cpu_for(i) for i in range(2)] == [0, 2]
    gen.switch_on_host = False
    assert [gen._cpu_for(i) for i in range(2)] == [0, 1]


@pytest.mark.parametrize("dut, gen, same", [("dut", "tgen", False), ("dut", "dut", True), ("local", "local", True),
                                            ("local", "tgen", False)])
def test_the_testbed_says_whether_the_generator_runs_beside_the_switch(dut: str, gen: str, same: bool) -> None:
    hosts = tuple(TestbedHost(name) for name in dict.fromkeys((dut, gen)))
    assert Testbed("lab.yaml", hosts, dut, gen, ()).generator_on_dut_host is same


class ProbeHost(RemoteMachine):
    """A guest's host: its /dev/kvm opens (or not); starting the probe guest is as far as it goes."""

    def __init__(self, openable: bool) -> None:
        super().__init__("dut", answers={("sh", "-c", KVM_OPEN_SCRIPT): ""} if openable else {
            ("test", "-r", "/dev/kvm", "-a", "-w", "/dev/kvm"): ""})  # root passes test -r/-w anyway
        self.spawned = False

    def _start(self, cmd: object, streams: object) -> object:  # type: ignore[override]
        self.spawned = True
        raise Staged("probe guest")


def test_no_kvm_probe_guest_where_dev_kvm_cannot_be_opened(tmp_path: Path) -> None:
    closed = ProbeHost(openable=False)
    kernel, initrd = PurePosixPath("/tmp/k"), PurePosixPath("/tmp/i")
    assert probe_kvm(_host(tmp_path, closed), kernel, initrd, tmp_path / "c.log") is False
    assert not closed.spawned and closed.commands == [(("sh", "-c", KVM_OPEN_SCRIPT), None)]
    openable = ProbeHost(openable=True)
    with pytest.raises(Staged):
        probe_kvm(_host(tmp_path, openable), kernel, initrd, tmp_path / "c.log")
    assert openable.spawned

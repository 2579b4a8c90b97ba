"""Values a testbed run reads on the host they belong to, through that host's executor, never on
the controller: the DUT host's CPUs (GUEST_CORE_BINDING), its kernel config (linux-bridge's VLAN
push), the generator host's CPUs and whether the switch's PMD CPUs are busy there, and whether
/dev/kvm can be opened on the guest's host (the KVM probe)."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from recorded_host import RecordedHost
from settings_util import make_settings
from test_testbed_extras import _mod_pt

from vsperf.backends import build_registries
from vsperf.host.workdir import RunContext
from vsperf.errors import ConfigError, PrerequisiteError
from vsperf.executor import Executor, LocalExecutor
from vsperf.testbed.deploy import build_testbed_deployment
from vsperf.testbed.journal import PortJournal
from vsperf.testbed.model import Testbed, TestbedHost
from vsperf.testbed.session import TestbedSession
from vsperf.trafficgen.trafgen.backend import TrafgenTrafficGenerator
from vsperf.trafficgen.vsgen.backend import VsgenTrafficGenerator
from vsperf.vnf.host import VnfHost
from vsperf.vnf.qemu.accel import KVM_OPEN_SCRIPT, probe_kvm
from vsperf.vnf.qemu.virtio_net import QemuVirtioNetVnf
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch

NPROC = ("getconf", "_NPROCESSORS_ONLN")
RELEASE = "6.1.0-99-amd64"
NO_VLAN_FILTERING = "#\nCONFIG_BRIDGE=m\n# CONFIG_BRIDGE_VLAN_FILTERING is not set\n"


class Staged(Exception):
    """The guest got as far as copying its image to the host: its settings were accepted."""


def _guest_host(nproc: str) -> VnfHost:
    def stage_file(local: Path, name: str) -> Path:
        raise Staged(name)

    host = SimpleNamespace(executor=RecordedHost("dut", {NPROC: [nproc]}), stage_file=stage_file)
    return cast(VnfHost, host)


def _qemu(tmp_path: Path, cpu: int) -> QemuVirtioNetVnf:
    image = tmp_path / "guest.qcow2"
    image.write_text("image")
    settings = make_settings({"GUEST_CORE_BINDING": [[cpu]], "GUEST_IMAGE": [str(image)]})
    return QemuVirtioNetVnf(settings, RunContext("ab12", tmp_path, tmp_path, LocalExecutor()))


def test_guest_core_binding_is_checked_against_the_dut_hosts_cpus(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 64)  # the controller has CPU 3, the DUT host does not
    with pytest.raises(ConfigError, match=r"VM 0: CPU 3 does not exist \(host dut has CPUs 0-1\)"):
        _qemu(tmp_path, 3).create_on(_guest_host("2\n"), 0, 1500)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # and the other way round: the DUT host has it
    with pytest.raises(Staged):
        _qemu(tmp_path, 3).create_on(_guest_host("8\n"), 0, 1500)


def _bridge(host: Executor) -> LinuxBridgeVSwitch:
    return LinuxBridgeVSwitch(make_settings(), RunContext("ab12", Path("/nonexistent"), Path("/nonexistent"), host))


def test_linux_bridge_reads_the_switch_hosts_kernel_config() -> None:
    boot = RecordedHost("dut", {("uname", "-r"): [RELEASE], ("cat", f"/boot/config-{RELEASE}"): [NO_VLAN_FILTERING]})
    with pytest.raises(PrerequisiteError, match=r"on the kernel of host dut \(CONFIG_BRIDGE_VLAN_FILTERING is off\)"):
        _bridge(boot).check_vlan_support()
    assert boot.commands == [(("uname", "-r"), None), (("cat", f"/boot/config-{RELEASE}"), None)]
    _bridge(boot).check_prerequisites()  # the bridge itself is there (a module)
    # no /boot/config there: the running kernel's own /proc/config.gz, unpacked on the host
    proc = RecordedHost("dut", {("uname", "-r"): [RELEASE], ("gzip", "-dc", "/proc/config.gz"): [NO_VLAN_FILTERING]})
    with pytest.raises(PrerequisiteError, match="CONFIG_BRIDGE_VLAN_FILTERING"):
        _bridge(proc).check_vlan_support()
    with_vlans = RecordedHost("dut", {("uname", "-r"): [RELEASE],
                                      ("cat", f"/boot/config-{RELEASE}"): ["\nCONFIG_BRIDGE_VLAN_FILTERING=y\n"]})
    _bridge(with_vlans).check_vlan_support()
    _bridge(RecordedHost("dut", {("uname", "-r"): [RELEASE]})).check_vlan_support()  # unreadable: not refused


def test_a_testbed_deployment_checks_the_vlan_push_on_the_dut_host(tmp_path: Path) -> None:
    dut = RecordedHost("dut", {("uname", "-r"): [RELEASE], ("cat", f"/boot/config-{RELEASE}"): [NO_VLAN_FILTERING]})
    testbed = Testbed("lab.yaml", (TestbedHost("dut"), TestbedHost("gen")), "dut", "gen", ())
    session = TestbedSession(testbed, {"dut": dut, "gen": RecordedHost("gen", {})},
                             PortJournal.create(tmp_path, "abc123"))
    ctx = RunContext("abc123", tmp_path, tmp_path, LocalExecutor())
    with pytest.raises(PrerequisiteError, match="kernel of host dut"):
        build_testbed_deployment(_mod_pt("vlan"), build_registries(), ctx, session, 64)


PMD_ON_CPU_1 = {"VSWITCH": "ovs", "VSWITCH_PMD_CPU_MASK": "0x2"}


def _generator_ctx(tmp_path: Path) -> RunContext:
    return RunContext("ab12", tmp_path, tmp_path, LocalExecutor())


def test_vsgen_avoids_the_pmd_cpus_only_where_the_switch_runs(tmp_path: Path) -> None:
    gen = VsgenTrafficGenerator(make_settings(PMD_ON_CPU_1), _generator_ctx(tmp_path))
    gen._host_cpus = [0, 1, 2, 3]  # the generator host's (read there when it starts)
    assert gen._request("rate", (0, 1), 1000.0, (10, 10)).cpus == (0, 2)  # the local lab: beside the switch
    gen.switch_on_host = False  # a testbed whose DUT host is another machine
    assert gen._request("rate", (0, 1), 1000.0, (10, 10)).cpus == (0, 1)


def test_trafgen_avoids_the_pmd_cpus_only_where_the_switch_runs(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3})
    gen = TrafgenTrafficGenerator(make_settings(PMD_ON_CPU_1), _generator_ctx(tmp_path))
    assert [gen._cpu_for(i) for i in range(2)] == [0, 2]
    gen.switch_on_host = False
    assert [gen._cpu_for(i) for i in range(2)] == [0, 1]


@pytest.mark.parametrize("dut, gen, same", [("dut", "tgen", False), ("dut", "dut", True), ("local", "local", True),
                                            ("local", "tgen", False)])
def test_the_testbed_says_whether_the_generator_runs_beside_the_switch(dut: str, gen: str, same: bool) -> None:
    hosts = tuple(TestbedHost(name) for name in dict.fromkeys((dut, gen)))
    assert Testbed("lab.yaml", hosts, dut, gen, ()).generator_on_dut_host is same


class ConsoleHost:
    """A guest's host whose executor answers from `answers`; records whether a guest started."""

    def __init__(self, answers: dict[tuple[str, ...], list[str]]) -> None:
        self.executor = RecordedHost("dut", answers)
        self.spawned = False

    def spawn_console(self, *args: Any, **kwargs: Any) -> Any:
        self.spawned = True
        raise Staged("probe guest")

    def log_path(self, name: str) -> Path:
        return Path("/tmp") / name


def test_no_kvm_probe_guest_where_dev_kvm_cannot_be_opened(tmp_path: Path) -> None:
    # root passes `test -r/-w` on a /dev/kvm whose open fails (no module, a device cgroup)
    closed = ConsoleHost({("test", "-r", "/dev/kvm", "-a", "-w", "/dev/kvm"): [""]})
    assert probe_kvm(cast(VnfHost, closed), tmp_path / "k", tmp_path / "i", tmp_path / "c.log") is False
    assert not closed.spawned and closed.executor.commands == [(("sh", "-c", KVM_OPEN_SCRIPT), None)]
    openable = ConsoleHost({("sh", "-c", KVM_OPEN_SCRIPT): [""]})
    with pytest.raises(Staged):
        probe_kvm(cast(VnfHost, openable), tmp_path / "k", tmp_path / "i", tmp_path / "c.log")
    assert openable.spawned

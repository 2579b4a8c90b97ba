"""vsperf.vswitch.ovs_dpdk: OVS-DPDK's configuration, ports, control socket, version, prerequisites."""

from __future__ import annotations

from pathlib import Path

import pytest
from dpdk_fixtures import dpdk_settings, make_host
from fake_machine import FakeMachine, FakeOvs

from vsperf.errors import ConfigError, DeploymentError, PrerequisiteError
from vsperf.vswitch.base import ForwardingPlan, ForwardRule, SwitchPort
from vsperf.vswitch.ovs_dpdk import (
    OvsDpdkVSwitch,
    dpdk_errors,
    polled_rxqs,
    rx_queue_packets,
    rxq_polled,
    vsperf_names,
)

BINARY = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
VERSION = "ovs-vswitchd-dpdk (Open vSwitch) 3.1.0\nDPDK 22.11.11\n"


def machine(version_text: str | None = None, name: str = "local") -> FakeMachine:
    """A host that records commands and answers `<binary> --version` (exit 127 without `version_text`)."""
    host = FakeMachine(name)
    host.handlers["ovs-vswitchd-dpdk"] = lambda argv: (0, version_text) if version_text is not None else (127, "")
    return host


def test_registry_facts() -> None:
    assert OvsDpdkVSwitch.NAME == "ovs-dpdk"
    assert "OvsDpdkVhost" in OvsDpdkVSwitch.ALIASES
    assert sorted(OvsDpdkVSwitch.PORT_KINDS) == ["pci", "veth", "vhostuser"]  # pci: a testbed's DPDK port
    assert OvsDpdkVSwitch.DEFAULT_VNF == "testpmd-vhost"


def test_other_config_enables_dpdk_privately(tmp_path: Path) -> None:
    switch = OvsDpdkVSwitch(dpdk_settings(VSWITCH_DPDK_MEMORY_MB=256), make_host(tmp_path))
    assert switch.vswitchd_binary() == BINARY
    assert switch.other_config() == {
        "dpdk-init": "true",
        "dpdk-extra": "--no-huge -m 256 --legacy-mem --file-prefix=vspab12o --no-pci",
        "pmd-cpu-mask": "0x2",
        "per-port-memory": "true",
        "dpdk-lcore-mask": "0x1",
    }


def test_vswitchd_dpdk_config_overrides_vsperf_values(tmp_path: Path) -> None:
    settings = dpdk_settings(VSWITCHD_DPDK_CONFIG={"pmd-cpu-mask": "0x1", "per-port-memory": "false"})
    config = OvsDpdkVSwitch(settings, make_host(tmp_path)).other_config()
    assert config["pmd-cpu-mask"] == "0x1" and config["per-port-memory"] == "false"
    assert "dpdk-lcore-mask" not in config


def test_interface_config_per_port_kind_and_mode(tmp_path: Path) -> None:
    phy = SwitchPort("phy1", "veth", "phy", ifname="vspab12p1")
    vhost = SwitchPort("vnf0.0", "vhostuser", "vnf", socket_path="/tmp/vsperf-ab12/vhost-ab12/v0p0.sock")
    host = make_host(tmp_path)
    client = OvsDpdkVSwitch(dpdk_settings(), host)
    assert client.interface_config(phy, 1) == ("dpdk", {"dpdk-devargs": "net_af_xdp1,iface=vspab12p1"})
    assert client.interface_config(vhost, 2) == (
        "dpdkvhostuserclient", {"vhost-server-path": "/tmp/vsperf-ab12/vhost-ab12/v0p0.sock"}
    )
    settings = dpdk_settings(VSWITCH_VHOSTUSER_SERVER_MODE=True, DPDK_PORT_DRIVER="af_packet")
    server = OvsDpdkVSwitch(settings, host)
    assert server.interface_config(vhost, 2) == ("dpdkvhostuser", {})
    assert server.interface_config(phy, 0) == ("dpdk", {"dpdk-devargs": "net_af_packet0,iface=vspab12p1"})


def test_two_queues_open_two_af_packet_queue_pairs_and_n_rxq(tmp_path: Path) -> None:
    phy = SwitchPort("phy1", "veth", "phy", ifname="vspab12p1")
    switch = OvsDpdkVSwitch(dpdk_settings(DPDK_PORT_DRIVER="af_packet", LAB_PORT_QUEUES=2), make_host(tmp_path))
    assert switch.interface_config(phy, 1) == (
        "dpdk", {"dpdk-devargs": "net_af_packet1,iface=vspab12p1,qpairs=2", "n_rxq": "2"})
    assert switch.details()["rx_queues_per_veth_port"] == "2"


def test_two_queues_on_af_xdp_are_refused_before_anything_starts(tmp_path: Path) -> None:
    switch = OvsDpdkVSwitch(dpdk_settings(LAB_PORT_QUEUES=2), make_host(tmp_path, machine(VERSION)))
    with pytest.raises(ConfigError, match=r"LAB_PORT_QUEUES=2: 2 queues need DPDK_PORT_DRIVER=af_packet"):
        switch.check_prerequisites()


def test_version_carries_ovs_and_dpdk(tmp_path: Path) -> None:
    assert OvsDpdkVSwitch(dpdk_settings(), make_host(tmp_path, machine(VERSION))).version() == "3.1.0 (DPDK 22.11.11)"
    assert OvsDpdkVSwitch(dpdk_settings(), make_host(tmp_path, machine())).version() == "unknown"


def test_details_for_the_report(tmp_path: Path) -> None:
    details = OvsDpdkVSwitch(dpdk_settings(), make_host(tmp_path)).details()
    assert details["port_driver"] == "net_af_xdp"
    assert details["pmd_cpu_mask"] == "0x2"
    assert details["vhost_user"].startswith("dpdkvhostuserclient")


@pytest.mark.parametrize(("name", "message"), [
    ("local", f"OVS-DPDK is missing ({BINARY}): apt-get install openvswitch-switch-dpdk"),
    ("dut", f"host dut: OVS-DPDK is missing ({BINARY}): apt-get install openvswitch-switch-dpdk there"),
])
def test_missing_ovs_dpdk_names_the_package_and_the_host(tmp_path: Path, name: str, message: str) -> None:
    host = machine(VERSION, name)
    host.absent.add(BINARY)
    switch = OvsDpdkVSwitch(dpdk_settings(), make_host(tmp_path, host, name=name))
    with pytest.raises(PrerequisiteError) as err:
        switch.check_prerequisites()
    assert str(err.value) == message


def test_stop_before_start_does_nothing(tmp_path: Path) -> None:
    executor = machine()
    switch = OvsDpdkVSwitch(dpdk_settings(), make_host(tmp_path, executor))
    switch.stop()
    assert executor.calls == [] and switch.pids() == {}


def test_refuses_jumbo_frames_on_veth_ports(tmp_path: Path) -> None:
    switch = OvsDpdkVSwitch(dpdk_settings(), make_host(tmp_path))
    phy = (SwitchPort("phy0", "veth", "phy", ifname="a"), SwitchPort("phy1", "veth", "phy", ifname="b"))
    plan = ForwardingPlan(phy, (ForwardRule("phy0", "phy1"),), mtu_bytes=9000)
    with pytest.raises(DeploymentError, match="ovs-dpdk: frames larger than 1518 bytes"):
        switch.configure(plan)


PMD_RXQ_SHOW = """\
Displaying last 60 seconds pmd usage %
pmd thread numa_id 0 core_id 1:
  isolated : false
  port: vspab12b0x2       queue-id:  0 (enabled)   pmd usage:  0 %
  port: vspab12b0x3       queue-id:  0 (disabled)  pmd usage:  0 %
  port: vspab12p0         queue-id:  0 (enabled)   pmd usage:  3 %
  overhead:  0 %
"""


PMD_RXQ_SHOW_2Q = """\
pmd thread numa_id 0 core_id 1:
  isolated : false
  port: vsp27951dp0       queue-id:  0 (enabled)   pmd usage: NOT AVAIL
  port: vsp27951dp0       queue-id:  1 (enabled)   pmd usage: NOT AVAIL
  port: vsp27951dp1       queue-id:  0 (enabled)   pmd usage: NOT AVAIL
  port: vsp27951dp1       queue-id:  1 (disabled)  pmd usage: NOT AVAIL
"""


def test_polled_rxqs_lists_the_enabled_queues_of_a_port() -> None:
    assert polled_rxqs("vsp27951dp0", PMD_RXQ_SHOW_2Q) == {0, 1}
    assert polled_rxqs("vsp27951dp1", PMD_RXQ_SHOW_2Q) == {0}
    assert polled_rxqs("vsp27951dp", PMD_RXQ_SHOW_2Q) == set()


def test_rx_queue_packets_from_interface_statistics() -> None:
    stats = '{rx_bytes=6840, rx_dropped=0, rx_q0_packets=53449, rx_q1_packets=53362, tx_q0_packets=7}'
    assert rx_queue_packets(stats) == {0: 53449, 1: 53362}
    assert rx_queue_packets("{rx_packets=3}") == {}


def test_rxq_polled_needs_an_enabled_queue() -> None:
    assert rxq_polled("vspab12p0", PMD_RXQ_SHOW)
    assert rxq_polled("vspab12b0x2", PMD_RXQ_SHOW)
    assert not rxq_polled("vspab12b0x3", PMD_RXQ_SHOW)  # vring not enabled yet
    assert not rxq_polled("vspab12p1", PMD_RXQ_SHOW)  # not assigned to a PMD yet
    assert not rxq_polled("vspab12p", PMD_RXQ_SHOW)


def test_a_private_ovs_dpdk_on_its_host_from_start_to_stop(tmp_path: Path) -> None:
    host = machine(VERSION)
    ovs = FakeOvs(host, VERSION)
    switch = OvsDpdkVSwitch(dpdk_settings(VSWITCH_VHOSTUSER_SERVER_MODE=True, VSWITCH_OVS_PORT_TYPE="afxdp",
                                          VSWITCH_FLOW_MODE="ports", OVS_VSWITCHD="ovs-vswitchd",
                                          VSWITCH_OVS_AFXDP_MODE="native"), make_host(tmp_path, host))
    journal = switch.host.journal
    assert journal is not None
    host.watch(journal)
    switch.start("vspab12s")
    # its DPDK runtime directory recorded before ovs-vswitchd starts; DPDK without hugepages or PCI
    assert host.recorded_before("[vspab12s] /usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk unix:", "dir",
                                "/var/run/dpdk/vspab12o")
    config = next(c for c in host.commands() if "other_config:dpdk-init=true" in c)
    assert "'other_config:dpdk-extra=--no-huge -m 1024 --legacy-mem --file-prefix=vspab12o --no-pci'" in config
    assert any(c.endswith("get Open_vSwitch . dpdk_initialized") for c in host.commands())  # waited for DPDK
    phy = SwitchPort("phy0", "veth", "phy", ifname="vspab12p0")
    vhost = SwitchPort("vnf0.0", "vhostuser", "vnf", socket_path="/tmp/vsperf-ab12-vhost/v0p0.sock")
    host.files["/tmp/vsperf-ab12-ovs/dpdkvhostuser0"] = ""  # the socket OVS serves for the dpdkvhostuser port
    switch.configure(ForwardingPlan((phy, vhost), (ForwardRule("phy0", "vnf0.0"), ForwardRule("vnf0.0", "phy0"))))
    # VSPERF's Interface names, which its integration tests' steps use
    add_br = next(c for c in host.commands() if " add-br " in c)
    assert "dpdk0 type=dpdk ofport_request=1 mtu_request=1500 options:dpdk-devargs=net_af_xdp0,iface=vspab12p0" \
        in add_br and "dpdkvhostuser0 type=dpdkvhostuser ofport_request=2" in add_br
    # VSWITCH_VHOSTUSER_SERVER_MODE: the VNF's socket path is a link to the socket OVS made
    assert "ln -sfn /tmp/vsperf-ab12-ovs/dpdkvhostuser0 /tmp/vsperf-ab12-vhost/v0p0.sock" in host.commands()
    switch.wait_ready()
    assert "port: dpdkvhostuser0" in switch.rxq_show
    switch.stop()
    assert ovs.running() == set()
    assert "rm -f -- /tmp/vsperf-ab12-vhost/v0p0.sock" in host.commands()
    assert host.commands()[-1] == "rm -rf -- /var/run/dpdk/vspab12o"



def test_interfaces_take_vsperfs_names_the_nth_of_a_type_in_the_plans_order() -> None:
    phy = [SwitchPort(f"phy{i}", "veth", "phy", ifname=f"vspab12p{i}") for i in (0, 1)]
    vhost = [SwitchPort(f"vnf{i // 2}.{i % 2}", "vhostuser", "vnf", socket_path=f"/s{i}") for i in range(4)]
    ports = (phy[0], vhost[0], vhost[1], phy[1], vhost[2], vhost[3])
    assert vsperf_names(ports, server_mode=False) == [
        "dpdk0", "dpdkvhostuserclient0", "dpdkvhostuserclient1", "dpdk1", "dpdkvhostuserclient2",
        "dpdkvhostuserclient3"]
    assert vsperf_names(ports[:3], server_mode=True) == ["dpdk0", "dpdkvhostuser0", "dpdkvhostuser1"]
    pci = SwitchPort("phy0", "pci", "phy", pci="0000:3b:00.0")
    assert vsperf_names((pci, phy[1]), server_mode=False) == ["dpdk0", "dpdk1"]


def test_dpdk_errors_are_chosen_by_the_logging_module_not_by_a_port_name() -> None:
    log = [
        "2026-11-28T23:10:55.101Z|00041|dpdk|INFO|EAL: Detected CPU lcores: 2",
        "2026-11-28T23:10:55.102Z|00042|netdev_dpdk|ERR|Failed to create memory pool for netdev dpdk0, with MTU "
        "1500 on socket 0: Cannot allocate memory",
        "2026-11-28T23:10:55.103Z|00043|dpif_netdev|ERR|Failed to set interface dpdk0 new configuration",
        "2026-11-28T23:10:55.104Z|00044|netdev_dpdk|WARN|dpdk0: rx queue 0 not polled",
        "a line of another shape",
    ]
    assert dpdk_errors(log) == ["Failed to create memory pool for netdev dpdk0, with MTU 1500 on socket 0: "
                                "Cannot allocate memory"]

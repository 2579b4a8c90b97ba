"""vsgen RFC 2889 address trials on the local lab's learning switches (root): every address
learned is filtered in the flood check, every address not learned is counted as flooded
(vsperf.trafficgen.vsgen.addresses)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import LabRun
from test_vsgen_wire import generator, vsgen_skip_reason

from vsperf.traffic import Traffic

pytestmark = [pytest.mark.root]

TRAFFIC = Traffic()


def _skip(vswitch: str) -> None:
    reason = vsgen_skip_reason()
    if reason:
        pytest.skip(reason)
    if vswitch == "ovs" and shutil.which("ovs-vswitchd") is None:
        pytest.skip("Open vSwitch missing: apt-get install openvswitch-switch")


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs"])
def test_learned_addresses_are_not_flooded(lab_run: LabRun, vswitch: str) -> None:
    _skip(vswitch)
    dep = lab_run.deployment("p2p", TRAFFIC, VSWITCH=vswitch, VSWITCH_FLOW_MODE="normal")
    with dep:
        gen = generator(lab_run.hosts.trafficgen)
        try:
            gen.start(dep.gen_ports)
            for _ in range(2):  # the second trial uses fresh addresses after the flush
                result = gen.address_trial(TRAFFIC, 1000, 20000.0, 20000.0, dep.forget_addresses)
                assert result.learning.tx_frames == result.learning.rx_frames == 1000
                assert result.test.tx_frames == result.test.rx_frames == 1000
                assert result.flooded_frames == 0
            # A regular trial still works after the address trials.
            regular = gen.trial(TRAFFIC, 2000.0, 0.5)
            assert regular.tx_frames == regular.rx_frames == 1000
        finally:
            gen.stop()


def test_addresses_a_bridge_port_does_not_learn_are_flooded(lab_run: LabRun) -> None:
    _skip("linux-bridge")
    dep = lab_run.deployment("p2p", TRAFFIC, VSWITCH="linux-bridge")
    with dep:
        port = dep.dut.names.phy_if(1)
        subprocess.run(["ip", "netns", "exec", dep.dut.names.switch_netns, "ip", "link", "set", "dev", port, "type",
                        "bridge_slave", "learning", "off"], check=True)
        gen = generator(lab_run.hosts.trafficgen)
        try:
            gen.start(dep.gen_ports)
            result = gen.address_trial(TRAFFIC, 500, 20000.0, 20000.0, dep.forget_addresses)
            assert result.flooded_frames == 500
            assert result.test.rx_frames == 500
        finally:
            gen.stop()


def test_ovs_mac_table_overflows_into_flooding(lab_run: LabRun) -> None:
    _skip("ovs")
    dep = lab_run.deployment("p2p", TRAFFIC, VSWITCH="ovs", VSWITCH_FLOW_MODE="normal")
    with dep:
        gen = generator(lab_run.hosts.trafficgen)
        try:
            gen.start(dep.gen_ports)
            result = gen.address_trial(TRAFFIC, 10000, 20000.0, 20000.0, dep.forget_addresses)
            print(f"ovs: 10000 addresses, {result.flooded_frames} flooded")
            # OVS keeps at most 8192 addresses (other_config:mac-table-size), evicting the oldest:
            # the addresses it evicted are flooded.
            assert 10000 - 8192 <= result.flooded_frames < 10000
            assert result.test.rx_frames == 10000
        finally:
            gen.stop()

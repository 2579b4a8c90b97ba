"""Real deployments passing real frames: p2p, pvp, pvvp, pvpv2, VLAN push, 1000 flows.

Each test deploys in namespaces tagged with a fresh run id, runs a short trial at a rate every
deployment forwards without loss here (a few kpps), checks that every frame sent arrived (as
the generator's receive counter saw it), and the `lab_run` fixture then checks that nothing of
the run is left. 2-6 s each.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import replace

import pytest
from conftest import LabRun

from vsperf.errors import PrerequisiteError
from vsperf.executor import LocalExecutor
from vsperf.host import netlink as netdev
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.vswitch.linux_bridge import host_kernel_config_option
from vsperf.vswitch.ovs import OvsVSwitch

pytestmark = [pytest.mark.root]
needs_ovs = pytest.mark.skipif(shutil.which("ovs-vswitchd") is None,
                               reason="Open vSwitch missing: apt-get install openvswitch-switch")
RATE_FPS = 4000
TRIAL_S = 1.0


def _lossless(run: LabRun, deployment: str, traffic: Traffic | None = None,
              frame_modification: str | None = None, **settings: object) -> None:
    traffic = traffic or Traffic()
    with run.deployment(deployment, traffic, frame_modification, **settings) as dep:
        gen = run.generator(**settings)
        gen.start(dep.gen_ports)
        result = gen.trial(traffic, RATE_FPS, TRIAL_S)
        dep.check_alive()
        assert result.tx_frames == round(RATE_FPS / traffic.tx_ports * TRIAL_S) * traffic.tx_ports
        assert result.rx_frames == result.tx_frames, result
        # The sender shares 2 CPUs with the switch: a stall of tens of ms (3,754 of 4,000 fps seen in
        # a CI run) must then be flagged as the generator's shortfall, never pass as the rate asked.
        assert result.actual_tx_rate_fps <= RATE_FPS * 1.05
        assert result.actual_tx_rate_fps == pytest.approx(RATE_FPS, rel=0.05) or result.under_delivered, result
        gen.stop()


@pytest.mark.parametrize("vswitch", [pytest.param("ovs", marks=needs_ovs), "linux-bridge"])
def test_p2p_passes_every_frame(lab_run: LabRun, vswitch: str) -> None:
    _lossless(lab_run, "p2p", VSWITCH=vswitch)


@needs_ovs
def test_p2p_ovs_af_packet_ports(lab_run: LabRun) -> None:
    _lossless(lab_run, "p2p", VSWITCH="ovs", VSWITCH_OVS_PORT_TYPE="system")


@pytest.mark.parametrize("vswitch", [pytest.param("ovs", marks=needs_ovs), "linux-bridge"])
def test_pvp_with_a_netns_vnf(lab_run: LabRun, vswitch: str) -> None:
    _lossless(lab_run, "pvp", VSWITCH=vswitch)


@needs_ovs
def test_pvvp_chain(lab_run: LabRun) -> None:
    _lossless(lab_run, "pvvp", VSWITCH="ovs")


@needs_ovs
@pytest.mark.skipif(shutil.which("dpdk-testpmd") is None,
                    reason="dpdk-testpmd missing: apt-get install dpdk-dev")
def test_pvp_with_testpmd_loopback(lab_run: LabRun) -> None:
    _lossless(lab_run, "pvp", VSWITCH="ovs", GUEST_LOOPBACK=["testpmd"])


@needs_ovs
def test_pvpv2_splits_streams_between_the_vnfs(lab_run: LabRun) -> None:
    traffic = Traffic(multistream=2, stream_type="L3")
    dep = lab_run.deployment("pvpv", traffic, VSWITCH="ovs")
    with dep:
        gen = lab_run.generator()
        gen.start(dep.gen_ports)
        result = gen.trial(traffic, RATE_FPS, TRIAL_S)
        assert result.rx_frames == result.tx_frames > 0
        # Each VNF got its half of each direction: the switch sent it a quarter of all frames
        # on each of its two ports.
        for vnf in dep.vnfs:
            for port in vnf.ports:
                sent = netdev.link_counters(port.ifname, dep.dut.names.switch_netns).tx_packets
                assert sent == pytest.approx(result.tx_frames / 4, abs=2), (port.ifname, sent)


@needs_ovs
def test_mod_vlan_frames_arrive_tagged(lab_run: LabRun) -> None:
    traffic = Traffic()
    with lab_run.deployment("p2p", traffic, "vlan", VSWITCH="ovs", VSWITCH_VLAN_ID=123) as dep:
        assert {getattr(p, "rx_vlan_id", None) for p in dep.gen_ports} == {123}
        gen = lab_run.generator()
        gen.start(dep.gen_ports)
        result = gen.trial(traffic, RATE_FPS, TRIAL_S)
        assert result.rx_frames == result.tx_frames > 0
        assert "rx_untagged_frames" not in result.flags
    # Without the push, the same expectation fails: frames arrive untagged and are not counted.
    with lab_run.deployment("p2p", traffic, VSWITCH="ovs") as dep:
        gen = lab_run.generator()
        gen.start([replace(p, rx_vlan_id=123) for p in dep.gen_ports if isinstance(p, GenPort)])
        result = gen.trial(traffic, RATE_FPS, TRIAL_S)
        assert result.rx_frames == 0 and "rx_untagged_frames" in result.flags


@pytest.mark.skipif(host_kernel_config_option(LocalExecutor(), "CONFIG_BRIDGE_VLAN_FILTERING") is not False,
                    reason="this kernel can tag in a bridge")
def test_mod_vlan_on_linux_bridge_without_vlan_filtering(lab_run: LabRun) -> None:
    with pytest.raises(PrerequisiteError, match="CONFIG_BRIDGE_VLAN_FILTERING"):
        lab_run.deployment("p2p", Traffic(), "vlan", VSWITCH="linux-bridge")


@needs_ovs
def test_1000_pre_installed_flows(lab_run: LabRun) -> None:
    traffic = Traffic(multistream=1000, stream_type="L4", pre_installed_flows=True)
    dep = lab_run.deployment("p2p", traffic, VSWITCH="ovs")
    with dep:
        assert isinstance(dep.vswitch, OvsVSwitch)
        flows = [line for line in dep.vswitch.dump_flows().splitlines() if "actions=" in line]
        assert len(flows) == 2000
        gen = lab_run.generator()
        gen.start(dep.gen_ports)
        result = gen.trial(traffic, RATE_FPS, TRIAL_S)
        assert result.rx_frames == result.tx_frames > 0
        used = [line for line in dep.vswitch.dump_flows().splitlines() if "n_packets=0," not in line
                and "actions=" in line]
        assert len(used) == 2000  # every stream of both directions hit its own flow


def test_work_dir_is_short_enough_for_sockets(lab_run: LabRun) -> None:
    assert len(str(lab_run.hosts.dut.names.run_dir("ovs") / "ovs-vswitchd.ctl")) < 100


def test_burst_sends_exactly_the_frames_asked(lab_run: LabRun) -> None:
    traffic = Traffic(traffic_type="rfc2544_back2back")
    with lab_run.deployment("p2p", traffic, VSWITCH="linux-bridge") as dep:
        gen = lab_run.generator()
        gen.start(dep.gen_ports)
        assert re.fullmatch(r"\d+\.\d+\.\d+", gen.version())
        result = gen.burst(traffic, 3001)
        assert result.kind == "burst"
        assert result.tx_frames == 3001 and result.rx_frames == 3001
        assert result.duration_s > 0 and result.actual_tx_rate_fps > 0


@pytest.mark.parametrize("vswitch", [pytest.param("ovs", marks=needs_ovs), "linux-bridge"])
def test_clean_starts_and_stops_the_switch_only(lab_run: LabRun, vswitch: str) -> None:
    dep = lab_run.deployment("clean", VSWITCH=vswitch)
    with dep:
        assert dep.gen_ports == ()
        assert netdev.netns_exists(dep.dut.names.switch_netns)
        assert not netdev.netns_exists(dep.dut.names.gen_netns(0))
        if vswitch == "ovs":
            assert set(dep.dut_pids()) == {"ovs-vswitchd", "ovsdb-server"}
        dep.check_alive()


@pytest.mark.parametrize("vswitch", [pytest.param("ovs", marks=needs_ovs), "linux-bridge"])
def test_jumbo_and_small_frames_in_one_deployment(lab_run: LabRun, vswitch: str) -> None:
    # The runner deploys once per test for its largest frame size.
    dep = lab_run.deployment("p2p", Traffic(frame_size_bytes=9018), VSWITCH=vswitch)
    with dep:
        gen = lab_run.generator()
        gen.start(dep.gen_ports)
        for size in (64, 9018):
            result = gen.trial(Traffic(frame_size_bytes=size), 1000, 0.5)
            assert result.rx_frames == result.tx_frames == 500, (size, result)

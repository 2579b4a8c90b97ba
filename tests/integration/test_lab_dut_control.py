"""The local lab's DutControl (root): restart the switch under test and flush its learned
addresses, and the switch forwards again as configured afterwards (vsperf.deploy.deployment,
vsperf.vswitch.{linux_bridge,ovs})."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from conftest import LabRun
from test_vsgen_wire import generator, vsgen_skip_reason

from vsperf.collectors.base import CollectorTarget
from vsperf.collectors.pidstat import PidstatCollector
from vsperf.errors import DeploymentError
from vsperf.search.measurer import DutControl
from vsperf.traffic import Traffic

pytestmark = [pytest.mark.root]

TRAFFIC = Traffic(bidir=True)
DPDK_VSWITCHD = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"


def _skip(vswitch: str) -> None:
    reason = vsgen_skip_reason()
    if reason:
        pytest.skip(reason)
    if vswitch == "ovs" and shutil.which("ovs-vswitchd") is None:
        pytest.skip("Open vSwitch missing: apt-get install openvswitch-switch")
    if vswitch == "ovs-dpdk" and not Path(DPDK_VSWITCHD).exists():
        pytest.skip("OVS-DPDK missing: apt-get install openvswitch-switch-dpdk")


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs", "ovs-dpdk"])
def test_restart_and_forget_leave_a_forwarding_switch(lab_run: LabRun, vswitch: str) -> None:
    _skip(vswitch)
    dep = lab_run.deployment("p2p", TRAFFIC, VSWITCH=vswitch)
    with dep:
        assert isinstance(dep, DutControl)
        gen = generator(lab_run.hosts.trafficgen)
        try:
            gen.start(dep.gen_ports)
            before = gen.trial(TRAFFIC, 2000.0, 0.5)
            assert before.tx_frames == before.rx_frames == 1000
            pids = dep.dut_pids()
            # pidstat watches the switch across the restart, as in a phy2phy_reset phase
            collector = PidstatCollector(lab_run.settings, lab_run.ctx(),
                                         CollectorTarget(pids, current_pids=dep.dut_pids))
            with collector:
                dep.restart()
            dep.check_alive()
            if vswitch != "linux-bridge":
                assert dep.dut_pids()["ovs-vswitchd"] != pids["ovs-vswitchd"]
                # it followed the new ovs-vswitchd: both processes have their statistics
                assert {f"Process: ovs-vswitchd (PID {pid})" for pid in (pids["ovs-vswitchd"],
                        dep.dut_pids()["ovs-vswitchd"])} <= set(collector.statistics())
                assert "actions=output:2" in dep.vswitch.dump_flows()  # type: ignore[attr-defined]
            after = gen.trial(TRAFFIC, 2000.0, 0.5)
            assert after.tx_frames == after.rx_frames == 1000
            dep.forget_addresses()
            again = gen.trial(TRAFFIC, 2000.0, 0.5)
            assert again.tx_frames == again.rx_frames == 1000
        finally:
            gen.stop()
    commands = (lab_run.work_dir / "commands.log").read_text()
    assert ("fdb_flush" in commands) if vswitch == "linux-bridge" else ("fdb/flush" in commands)


def _fdb_age_s(table: str, mac: str) -> int | None:
    """The age in seconds of `mac`'s entry in `ovs-appctl fdb/show` output (None: no entry)."""
    for line in table.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] == mac:
            return int(fields[3])
    return None


def test_ovs_normal_flow_mode_learns_addresses(lab_run: LabRun) -> None:
    _skip("ovs")
    dep = lab_run.deployment("p2p", TRAFFIC, VSWITCH="ovs", VSWITCH_FLOW_MODE="normal")
    with dep:
        gen = generator(lab_run.hosts.trafficgen)
        try:
            gen.start(dep.gen_ports)
            result = gen.trial(TRAFFIC, 2000.0, 0.5)
            assert result.tx_frames == result.rx_frames == 1000
            flows = dep.vswitch.dump_flows()  # type: ignore[attr-defined]
            assert "actions=NORMAL" in flows and "output:" not in flows
            time.sleep(1.2)  # the entries age: a relearned one is then told apart by its age
            table = dep.vswitch.appctl("ovs-vswitchd", "fdb/show", dep.dut.names.bridge(0))  # type: ignore[attr-defined]
            assert dep.gen_ports[0].mac in table and dep.gen_ports[1].mac in table
            before = _fdb_age_s(table, dep.gen_ports[0].mac)
            dep.forget_addresses()
            table = dep.vswitch.appctl("ovs-vswitchd", "fdb/show", dep.dut.names.bridge(0))  # type: ignore[attr-defined]
            # Gone, or learned again since the flush from a frame the port's kernel sent (its ICMP
            # answers to the frames the generator handed it arrive late): younger than before.
            after = _fdb_age_s(table, dep.gen_ports[0].mac)
            assert after is None or (before is not None and after < before), (before, table)
        finally:
            gen.stop()


def test_wire_has_no_switch_to_restart(lab_run: LabRun) -> None:
    _skip("linux-bridge")
    dep = lab_run.deployment("wire", TRAFFIC)
    with dep:
        with pytest.raises(DeploymentError, match="no switch"):
            dep.restart()
        with pytest.raises(DeploymentError, match="no switch"):
            dep.forget_addresses()

"""vsgen reset and recovery trials on the local lab (root): a real switch restarted while
frames flow leaves a real, positive gap at the receivers; an overload beyond the switch's
capacity followed by a low rate gives a measured recovery time (vsperf.trafficgen.vsgen.events)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import LabRun
from test_vsgen_wire import generator, vsgen_skip_reason

from vsperf.traffic import Traffic

pytestmark = [pytest.mark.root]


def _skip(vswitch: str) -> None:
    reason = vsgen_skip_reason()
    if reason:
        pytest.skip(reason)
    if vswitch == "ovs" and shutil.which("ovs-vswitchd") is None:
        pytest.skip("Open vSwitch missing: apt-get install openvswitch-switch")
    if vswitch == "ovs-dpdk" and not Path("/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk").exists():
        pytest.skip("OVS-DPDK missing: apt-get install openvswitch-switch-dpdk")


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs", "ovs-dpdk"])
def test_reset_gap_is_real_and_positive(lab_run: LabRun, vswitch: str) -> None:
    _skip(vswitch)
    traffic = Traffic(bidir=True)
    dep = lab_run.deployment("p2p", traffic, VSWITCH=vswitch)
    with dep:
        gen = generator(lab_run.hosts.trafficgen)
        try:
            gen.start(dep.gen_ports)
            # OVS-DPDK's restart (a new EAL) takes ~1 s here and nearly 2 s under CI's load: a longer
            # stream lets it recover before the stream ends.
            stream_s = 5.0 if vswitch == "ovs-dpdk" else 3.0
            result = gen.reset_trial(traffic, 40000.0, stream_s, 1.0, dep.restart)
            dep.check_alive()
            print(f"{vswitch}: reset gap {result.gap_s:.6f} s, lost {result.trial.loss_frames} of "
                  f"{result.trial.tx_frames}, reset at {result.reset_at_s:.3f} s")
            assert result.recovered
            assert result.resolution_s == pytest.approx(1 / 20000.0)
            assert result.trial.tx_frames == round(40000 * stream_s)
            # Frames were lost while the switch was down, and the gap covers at least them.
            assert result.trial.loss_frames > 0
            assert result.gap_s >= result.trial.loss_frames / 2 / 20000.0 * 0.5
            assert 2 * result.resolution_s < result.gap_s < stream_s - 1.0
            assert 0.9 <= result.reset_at_s <= 1.3
            # After the reset the switch forwards everything again.
            after = gen.trial(traffic, 4000.0, 0.5)
            assert after.tx_frames == after.rx_frames == 2000
        finally:
            gen.stop()


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs"])
def test_recovery_after_an_overload(lab_run: LabRun, vswitch: str) -> None:
    _skip(vswitch)
    traffic = Traffic(bidir=False)
    dep = lab_run.deployment("p2p", traffic, VSWITCH=vswitch)
    with dep:
        gen = generator(lab_run.hosts.trafficgen)
        try:
            gen.start(dep.gen_ports)
            result = gen.recovery_trial(traffic, 2_000_000.0, 1.0, 300_000.0, 1.0)
            print(f"{vswitch}: overload {result.overload.actual_tx_rate_fps:.0f} fps lost "
                  f"{result.overload.loss_percent:.1f} %, after the drop lost {result.recovery.loss_frames} of "
                  f"{result.recovery.tx_frames}, recovery {result.last_loss_after_drop_s:.6f} s")
            assert result.overload.tx_frames + result.recovery.tx_frames == gen.last_run.dirs[0].tx_frames  # type: ignore[union-attr]
            run = gen.last_run.dirs[0]  # type: ignore[union-attr]
            print(f"last lost index {run.last_lost_index}, change at {run.tx1_frames}")
            assert result.resolution_s == pytest.approx(1 / 300000.0)
            assert 0.0 <= result.last_loss_after_drop_s < 1.0
            if vswitch == "ovs":
                # OVS drops what it cannot forward: the overload loses frames, the generator keeps its rates.
                assert result.overload.loss_frames > 0
                assert result.recovery.tx_frames == 300000
            elif result.overload.loss_frames == 0:
                # The kernel bridge forwards in the sender's context: it slows the generator down
                # (flagged) instead of losing frames, so nothing is lost and nothing to recover from.
                assert result.overload.under_delivered
            # The last frame lost is found by its index: in the overload, or after the drop.
            if result.overload.loss_frames + result.recovery.loss_frames == 0:
                assert run.last_lost_index == -1 and result.last_loss_after_drop_s == 0.0
            elif result.recovery.loss_frames:
                assert run.tx1_frames <= run.last_lost_index < run.tx_frames
                assert result.last_loss_after_drop_s == pytest.approx(
                    (run.last_lost_index - run.tx1_frames) / 300000.0)
            else:
                assert 0 <= run.last_lost_index < run.tx1_frames and result.last_loss_after_drop_s == 0.0
        finally:
            gen.stop()

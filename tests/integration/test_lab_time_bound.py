"""A rate trial lasts its duration even when the generator cannot keep the rate."""

from __future__ import annotations

import time

from conftest import LabRun

from vsperf.search.measurer import FLAG_UNDER_DELIVERY
from vsperf.traffic import Traffic


def test_unreachable_rate_ends_on_time_and_is_flagged(lab_run: LabRun) -> None:
    traffic = Traffic(frame_size_bytes=64)
    with lab_run.deployment("p2p", traffic, VSWITCH="linux-bridge") as dep:
        gen = lab_run.generator()
        gen.start(dep.gen_ports)
        started = time.monotonic()
        result = gen.trial(traffic, traffic.line_rate_fps, 1.0)  # 29.8 Mfps: far beyond trafgen
        elapsed = time.monotonic() - started
    # 1 s of traffic, the overrun grace, the 0.2 s residual wait, process start and stop.
    assert elapsed < 4.0, f"the trial took {elapsed:.1f} s"
    assert FLAG_UNDER_DELIVERY in result.flags
    assert 0 < result.tx_frames < traffic.line_rate_fps * 0.5
    assert result.actual_tx_rate_fps < traffic.line_rate_fps
    assert result.rx_frames <= result.tx_frames

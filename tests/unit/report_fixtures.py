"""A results directory with known content, for the report, plots, anomalies and format tests.

Test 0 (phy2phy_tput): 64 B with three repetitions that spread 10 %, a verification trial that
lost frames, a trial the generator under-delivered, per-second rates, process, CPU and port
statistics; 1518 B clean. Test 1 (back2back): 64 B, clean. Test 2 (pvp_tput): failed.
A warning is logged during test 0 (overall.log), none during test 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vsperf.results.model import ComponentInfo
from vsperf.results.writer import ResultsWriter
from vsperf.search.measurer import FLAG_UNDER_DELIVERY, LatencyStats, TrialResult
from vsperf.search.outcome import SearchOutcome

LINE_64 = 29_761_904.761904761
LINE_1518 = 1_625_487.646293888
WARNING = "pidstat: ovsdb-server (PID 94616) exited during traffic"


def trial(
    size: int,
    rate: float,
    *,
    sent: float | None = None,
    loss: float = 0.0,
    purpose: str = "search",
    flags: tuple[str, ...] = (),
    per_second: tuple[dict[str, float], ...] = (),
) -> TrialResult:
    """A 10 s rate trial at `rate` fps (sending `sent` fps) losing the fraction `loss`."""
    line = LINE_64 if size == 64 else LINE_1518
    tx = int((sent if sent is not None else rate) * 10)
    return TrialResult(
        kind="rate",
        frame_size_bytes=size,
        requested_rate_fps=rate,
        duration_s=10.0,
        tx_frames=tx,
        rx_frames=round(tx * (1 - loss)),
        actual_tx_rate_fps=sent if sent is not None else rate,
        line_rate_fps=line,
        latency=LatencyStats(min_ns=5000.0, avg_ns=9000.0, max_ns=190000.0),
        flags=flags,
        per_second=per_second,
        purpose=purpose,
    )


PER_SECOND = tuple({"time_s": float(s), "tx_fps": 1.0e7, "rx_fps": 1.0e7 - 1000.0 * s} for s in range(1, 11))

THROUGHPUT_64 = SearchOutcome(
    metrics={
        "tx_rate_fps": 10_000_000.0,
        "throughput_rx_fps": 10_000_000.0,
        "tx_rate_mbps": 5120.0,
        "throughput_rx_mbps": 5120.0,
        "tx_rate_percent": 33.6,
        "throughput_rx_percent": 33.6,
        "frame_loss_percent": 0.0,
        "min_latency_ns": 5000.0,
        "max_latency_ns": 190000.0,
        "avg_latency_ns": 9000.0,
        "throughput_rx_fps_min": 9_500_000.0,
        "throughput_rx_fps_max": 10_500_000.0,
        "type": "rfc2544_throughput",
        "packet_size": 64,
        "traffic_type": "udp",
    },
    trials=(
        trial(64, LINE_64, sent=LINE_64 * 0.5, loss=0.6, flags=(FLAG_UNDER_DELIVERY,)),
        trial(64, 10_000_000.0),
        trial(64, 12_000_000.0, loss=0.1),
        trial(64, 10_000_000.0, loss=0.002, purpose="verification", per_second=PER_SECOND),
    ),
    details={
        "search": {"algorithm": "binary", "loss_rate_percent": 0.0},
        "repetitions": [{"repetition": r} for r in (1, 2, 3)],
    },
)
THROUGHPUT_1518 = SearchOutcome(
    metrics={"throughput_rx_fps": LINE_1518, "throughput_rx_percent": 100.0, "frame_loss_percent": 0.0},
    trials=(trial(1518, LINE_1518),),
    details={"search": {"algorithm": "binary", "loss_rate_percent": 0.0}},
)
B2B_64 = SearchOutcome(
    metrics={"b2b_frames": 21713, "b2b_frames_min": 21700, "b2b_frames_max": 21720, "b2b_frame_loss_percent": 0.0},
    trials=(
        TrialResult("burst", 64, LINE_64, 0.002, 40000, 30000, LINE_64, LINE_64, purpose="search"),
        TrialResult("burst", 64, LINE_64, 0.001, 21713, 21713, LINE_64, LINE_64, purpose="search"),
    ),
)
STATISTICS: dict[str, dict[str, Any]] = {
    "Process: ovs-vswitchd": {
        "UID": 0, "PID": 94617, "%usr": 199.93, "%system": 0.07, "%guest": 0.0, "%CPU": 200.0, "CPU": 3,
        "minflt/s": 28.32, "majflt/s": 0.0, "VSZ": 4143516, "RSS": 22709, "%MEM": 0.03, "kB_rd/s": 0.0,
        "kB_wr/s": 0.0, "kB_ccwr/s": 0.0,
    },
    "System CPU": {
        "all": {"%usr": 50.0, "%sys": 10.0, "%idle": 40.0},
        "0": {"%usr": 99.0, "%sys": 1.0, "%idle": 0.0},
        "1": {"%usr": 1.0, "%sys": 19.0, "%idle": 80.0},
    },
    "Interface counters": {
        "port 0 (g0 in ns0)": {"rx_packets": 100, "tx_packets": 120},
        "port 1 (g1 in ns1)": {"rx_packets": 120, "tx_packets": 100},
    },
}
SETTINGS: dict[str, Any] = {
    "TRAFFICGEN_LOSSRATE": 0.0,
    "TRAFFICGEN_PORT_SPEED_GBPS": 10.0,
    "REPORT_SPREAD_THRESHOLD_PERCENT": 5.0,
    "TRAFFIC": {"l3": {"proto": "udp"}},
}
OVERALL_LOG = f"""\
2026-01-01 10:00:00,000 INFO    vsperf.run.runner: vsperf run abc123: results in /tmp/r
2026-01-01 10:00:00,100 WARNING vsperf.run.runner: removed leftover of a killed run: netns vspdead
2026-01-01 10:00:01,000 INFO    vsperf.ui.progress: test phy2phy_tput (p2p): 2 frame size(s)
2026-01-01 10:00:02,000 WARNING vsperf.collectors.pidstat: {WARNING}
2026-01-01 10:00:03,000 INFO    vsperf.run.runner: test phy2phy_tput finished
2026-01-01 10:00:04,000 INFO    vsperf.ui.progress: test back2back (p2p): 1 frame size(s)
2026-01-01 10:00:05,000 INFO    vsperf.run.runner: test back2back finished
2026-01-01 10:00:06,000 INFO    vsperf.ui.progress: test pvp_tput (pvp): 1 frame size(s)
2026-01-01 10:00:07,000 ERROR   vsperf.run.runner: test pvp_tput failed: testpmd died
Traceback (most recent call last):
  File "x.py", line 1
"""


def make_run(results_dir: Path, *, settings: dict[str, Any] | None = None, log: bool = True) -> Path:
    """Write the run described in the module doc into `results_dir`; returns it."""
    writer = ResultsWriter(
        results_dir,
        run_id="abc123",
        command_line=["vsperf", "phy2phy_tput", "back2back", "pvp_tput"],
        simulated=False,
        environment={"os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0", "cpu_model": "EPYC"},
        settings=dict(SETTINGS if settings is None else settings),
        settings_sources={},
        clock=lambda: "2026-01-01T10:00:00+00:00",
    )
    components = [ComponentInfo("trafficgen", "xdpgen", "0.1"), ComponentInfo("vswitch", "ovs", "3.1.0")]

    def start(name: str, traffic_type: str, deployment: str = "p2p") -> int:
        return writer.start_test(
            name=name, description=f"LTD.{name}", deployment=deployment, traffic_type=traffic_type, bidir=True,
            frame_modification=None, parameters={}, components=components,
        )

    index = start("phy2phy_tput", "rfc2544_throughput")
    writer.add_frame_size(index, 64, THROUGHPUT_64, STATISTICS)
    writer.add_frame_size(index, 1518, THROUGHPUT_1518)
    writer.finish_test(index, "passed")
    index = start("back2back", "rfc2544_back2back")
    writer.add_frame_size(index, 64, B2B_64)
    writer.finish_test(index, "passed")
    index = start("pvp_tput", "rfc2544_throughput", "pvp")
    writer.finish_test(index, "failed", "testpmd died")
    writer.finish_run("finished")
    if log:
        (results_dir / "overall.log").write_text(OVERALL_LOG, encoding="utf-8")
    return results_dir

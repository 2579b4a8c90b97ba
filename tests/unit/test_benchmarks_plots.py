"""One plot per benchmark result: drawn from the details alone, captioned without drawing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vsperf.benchmarks.plots import benchmark_caption, benchmark_figure

POINT = {"flows": 1, "rx_tester_mpps": 0.5, "rx_dut_mpps": 0.6}
DETAILS: dict[str, dict[str, Any]] = {
    "sweep_bw": {"benchmark": "sweep_bw", "points": [POINT, {**POINT, "flows": 8, "rx_dut_mpps": None}]},
    "sweep_latency": {"benchmark": "sweep_latency",
                      "points": [{"size": 64, "p50_us": 2.0, "p90_us": 4.0, "p99_us": None}]},
    "udp_msg_loss": {"benchmark": "udp_msg_loss",
                     "rows": [{"loss_percent": 1.0, "data_mbps": 10.0, "wire_mbps": 16.0}]},
    "iperf3_udp": {"benchmark": "iperf3_udp", "runs": [
        {"stack": "kernel", "per_second": [{"end_s": 1.0, "sender_mbps": 9.0, "receiver_mbps": None}]},
        {"stack": "dmm", "per_second": [{"end_s": 1.0, "sender_mbps": 5.0, "receiver_mbps": 4.0}]}]},
}


@pytest.mark.parametrize("kind", sorted(DETAILS))
def test_each_benchmark_has_a_plot(kind: str, tmp_path: Path) -> None:
    drawn = benchmark_figure("t", "64 B", DETAILS[kind])
    assert drawn is not None
    fig, caption = drawn
    assert caption == benchmark_caption(DETAILS[kind])
    fig.savefig(tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 1000


def test_other_results_have_none() -> None:
    assert benchmark_caption({"trial_count": 2}) is None and benchmark_figure("t", "64 B", {}) is None
    assert benchmark_caption({"benchmark": "udp_msg_loss", "rows": []}) is None
    assert "kernel vs dmm" in str(benchmark_caption(DETAILS["iperf3_udp"]))

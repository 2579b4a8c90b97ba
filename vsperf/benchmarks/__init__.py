"""The seeds' other benchmarks as traffic types: measurements that run their own programs
between the deployment's two endpoints (udp_msg_loss, iperf3_*), or sweep the run's traffic
generator over flows and frame sizes (sweep_bw, sweep_latency), instead of an RFC search.

Each has a typed configuration built from the settings when the run is planned
(`UdpLossConfig`, `IperfConfig`, `SweepConfig`); vsperf.run.kinds's table of traffic types runs
them beside the RFC 2544 searches.
"""

from __future__ import annotations

from vsperf.benchmarks.env import BenchEnv, Endpoint
from vsperf.benchmarks.iperf import IperfConfig, run_iperf
from vsperf.benchmarks.sweep import SweepConfig, sweep_bw, sweep_latency
from vsperf.benchmarks.udploss import run_udp_loss
from vsperf.benchmarks.udploss.rows import UdpLossConfig

__all__ = [
    "BenchEnv", "Endpoint", "IperfConfig", "SweepConfig", "UdpLossConfig", "run_iperf", "run_udp_loss", "sweep_bw",
    "sweep_latency",
]

"""seeds/003's sweeps on the generator: rx on the DUT and on the tester per (flows, frame size),
and latency percentiles with loss per frame size (DPDK's perf_bw / perf_latency).

Each point is one trial of the run's traffic generator at SWEEP_RATE_PERCENT of line rate with
the point's number of flows (TRAFFIC multistream: addresses/ports vary, so a multi-queue DUT
spreads them). The DUT's count is its own: the packets its ports facing the generator received
(their kernel counters, read before and after the trial); the tester's is the generator's.
Gb/s count the frame plus preamble and inter-frame gap ((size + 20) * 8 bits), as the seed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from vsperf.benchmarks.env import BenchEnv
from vsperf.collectors.ifstats import parse_ip_link_stats
from vsperf.errors import CommandError, ConfigError, TrafficGenError
from vsperf.search.measurer import Measurer, TrialResult
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.search.trials import OnTrial
from vsperf.traffic import Traffic
from vsperf.units import ETHERNET_OVERHEAD_BYTES

LATENCY_PERCENTILES = ("p50", "p90", "p99")


@dataclass(frozen=True)
class SweepConfig:
    """What a sweep measures per frame size."""

    flows: tuple[int, ...]  # flows per direction, one point each
    duration_s: float  # trial length per point
    rate_percent: float  # offered load, % of line rate
    latency_rate_percent: float  # offered load of the latency test, % of line rate

    def __post_init__(self) -> None:
        if not self.flows or any(f < 1 for f in self.flows):
            raise ConfigError(f"SWEEP_FLOWS must be a non-empty list of flow counts >= 1, got {list(self.flows)}")
        if self.duration_s <= 0 or not 0 < self.rate_percent <= 100 or not 0 < self.latency_rate_percent <= 100:
            raise ConfigError("SWEEP_DURATION_S must be > 0 and the SWEEP_*RATE_PERCENT in (0, 100]")

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> SweepConfig:
        return cls(
            flows=tuple(int(f) for f in settings["SWEEP_FLOWS"]),
            duration_s=float(settings["SWEEP_DURATION_S"]),
            rate_percent=float(settings["SWEEP_RATE_PERCENT"]),
            latency_rate_percent=float(settings["SWEEP_LATENCY_RATE_PERCENT"]),
        )


def _rx_packets(env: BenchEnv) -> int | None:
    """Packets the DUT's ports received so far (None: the deployment exposes no DUT ports)."""
    if not env.dut_ports:
        return None
    total = 0
    for netns, ifname in env.dut_ports:
        try:
            out = env.executor.run(["ip", "-s", "-j", "link", "show", "dev", ifname], netns=netns)
            total += parse_ip_link_stats(out.stdout)["rx_packets"]
        except (CommandError, ValueError, json.JSONDecodeError) as exc:
            raise TrafficGenError(f"cannot read the DUT port {ifname}'s counters: {exc}") from exc
    return total


def queue_count(env: BenchEnv, netns: str | None, ifname: str, kind: str) -> int | None:
    """The interface's rx or tx queues as the kernel lists them in sysfs (None: unreadable)."""
    try:
        out = env.executor.run(["ls", f"/sys/class/net/{ifname}/queues"], netns=netns)
    except CommandError:
        return None
    return sum(1 for name in out.stdout.split() if name.startswith(f"{kind}-")) or None


def _queues_text(env: BenchEnv) -> str:
    dut = queue_count(env, *env.dut_ports[0], "rx") if env.dut_ports else None
    tester = queue_count(env, env.ports[0].netns, env.ports[0].ifname, "tx") if env.ports else None
    return f"{dut if dut is not None else 'n/a'} / {tester if tester is not None else 'n/a'}"


def _gbps(fps: float, size: int) -> float:
    return fps * (size + ETHERNET_OVERHEAD_BYTES) * 8 / 1e9


def _point(traffic: Traffic, flows: int, queues: str, trial: TrialResult, dut_frames: int | None) -> dict[str, Any]:
    size, seconds = traffic.frame_size_bytes, trial.duration_s
    tester_fps = trial.rx_frames / seconds
    dut_fps = dut_frames / seconds if dut_frames is not None else None
    return {
        "direction": "Tester <=> DUT" if traffic.bidir else "Tester => DUT",
        "size": size,
        "flows": flows,
        "queues": queues,
        "type": traffic.l3.proto,
        "rx_dut_gbps": _gbps(dut_fps, size) if dut_fps is not None else None,
        "rx_tester_gbps": _gbps(tester_fps, size),
        "rx_dut_mpps": dut_fps / 1e6 if dut_fps is not None else None,
        "rx_tester_mpps": tester_fps / 1e6,
        "tx_mpps": trial.tx_frames / seconds / 1e6,
        "loss_percent": trial.loss_percent,
        "flags": list(trial.flags),
    }


def sweep_bw(measurer: Measurer, env: BenchEnv, traffic: Traffic, cfg: SweepConfig,
             on_trial: OnTrial | None = None) -> SearchOutcome:
    """One trial per SWEEP_FLOWS value at this frame size; details.points is seed 003's table."""
    queues = _queues_text(env)
    points, trials = [], []
    for flows in cfg.flows:
        point_traffic = replace(traffic, multistream=flows)
        before = _rx_packets(env)
        trial = measurer.trial(point_traffic, point_traffic.line_rate_fps * cfg.rate_percent / 100, cfg.duration_s)
        after = _rx_packets(env)
        trial = replace(trial, purpose=f"sweep: {flows} flow(s)")
        if on_trial:
            on_trial(trial)
        trials.append(trial)
        dut = after - before if after is not None and before is not None else None
        points.append(_point(point_traffic, flows, queues, trial, dut))
    best = max(points, key=lambda p: float(p["rx_tester_mpps"]))
    metrics: dict[str, MetricValue] = {
        "throughput_rx_fps": best["rx_tester_mpps"] * 1e6,
        "rx_tester_mpps_max": best["rx_tester_mpps"],
        "rx_tester_gbps_max": best["rx_tester_gbps"],
        "rx_dut_mpps_max": max((float(p["rx_dut_mpps"]) for p in points if p["rx_dut_mpps"] is not None),
                               default=None),
        "flows_at_max": best["flows"],
    }
    details = {"benchmark": "sweep_bw", "path": env.where, "points": points,
               "rate_percent": cfg.rate_percent, "duration_s": cfg.duration_s}
    return SearchOutcome(metrics=metrics, trials=tuple(trials), details=details)


def sweep_latency(measurer: Measurer, env: BenchEnv, traffic: Traffic, cfg: SweepConfig,
                  on_trial: OnTrial | None = None) -> SearchOutcome:
    """One trial at SWEEP_LATENCY_RATE_PERCENT: p50, p90, p99 (us) and loss at this frame size."""
    trial = measurer.trial(traffic, traffic.line_rate_fps * cfg.latency_rate_percent / 100, cfg.duration_s)
    trial = replace(trial, purpose="latency")
    if on_trial:
        on_trial(trial)
    found = trial.latency.percentiles_ns if trial.latency else {}
    values = {p: (found[p] / 1e3 if p in found else None) for p in LATENCY_PERCENTILES}
    metrics: dict[str, MetricValue] = {f"latency_{p}_us": v for p, v in values.items()}
    metrics["frame_loss_percent"] = trial.loss_percent
    point = {"size": traffic.frame_size_bytes, **{f"{p}_us": v for p, v in values.items()},
             "loss_percent": trial.loss_percent, "samples": trial.latency.samples if trial.latency else 0}
    details = {"benchmark": "sweep_latency", "path": env.where, "points": [point],
               "rate_percent": cfg.latency_rate_percent}
    return SearchOutcome(metrics=metrics, trials=(trial,), details=details)


def points_of(details: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """The sweep points a result holds (empty for other results)."""
    points = details.get("points")
    return points if isinstance(points, list) else []

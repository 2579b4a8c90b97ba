"""Every traffic type in one table: how its configuration is built, how it runs, the metric the
run's summary shows, and the programs it runs instead of the traffic generator.

`TRAFFIC_KINDS` maps each traffic type (the `TrafficType` literal of vsperf.traffic, the schema's
list of valid types) to its `TrafficKind`. `configure_traffic` builds, and so validates, one frame
size of a test before anything is deployed: a `TrafficPlan` (vsperf.run.plan builds one per test
and frame size); `run_traffic` runs a plan: the runner and the searches get typed configurations
and never read the settings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, get_args

from vsperf.benchmarks import (
    BenchEnv,
    IperfConfig,
    SweepConfig,
    UdpLossConfig,
    run_iperf,
    run_udp_loss,
    sweep_bw,
    sweep_latency,
)
from vsperf.errors import ConfigError
from vsperf.search.at_throughput import AtThroughputTest
from vsperf.search.back2back import rfc2544_back2back
from vsperf.search.config import (
    back2back_config_from_settings,
    burst_config_from_settings,
    continuous_config_from_settings,
)
from vsperf.search.continuous import burst, rfc2544_continuous
from vsperf.search.frame_loss import frame_loss_config_from_settings, rfc2544_frame_loss
from vsperf.search.latency import latency_config_from_settings, rfc2544_latency
from vsperf.search.measurer import DutControl, Measurer
from vsperf.search.outcome import SearchOutcome
from vsperf.search.recovery import recovery_config_from_settings, rfc2544_recovery
from vsperf.search.reset import reset_config_from_settings, rfc2544_reset
from vsperf.search.rfc2889 import (
    address_config_from_settings,
    forwarding_config_from_settings,
    rfc2889_caching,
    rfc2889_forwarding,
    rfc2889_learning,
)
from vsperf.search.rfc9004 import rfc9004_back2back, rfc9004_config_from_settings
from vsperf.search.select import KnownThroughput, ThroughputSource, throughput_for
from vsperf.search.throughput_loads import ThroughputWithLoads, run_throughput_with_loads
from vsperf.search.trials import OnTrial
from vsperf.search.validate import check_loss_rates
from vsperf.traffic import Traffic, TrafficType

Settings = Mapping[str, Any]


@dataclass(frozen=True)
class TrafficPlan:
    """One frame size of a test, configured: its traffic, the configuration of what its traffic
    type runs, and, for a test run at the throughput, where that throughput comes from."""

    traffic: Traffic
    config: Any  # what the kind's `configure` built
    throughput: ThroughputSource | None = None  # tests that need a throughput only

    @property
    def kind(self) -> TrafficKind:
        return traffic_kind(self.traffic.traffic_type)


@dataclass(frozen=True)
class Job:
    """What one traffic phase runs with (see `run_traffic`)."""

    measurer: Measurer
    plan: TrafficPlan
    on_trial: OnTrial | None
    throughput_fps: float | None  # throughput measured earlier in the run, if any
    dut: DutControl | None  # restart / forget-addresses control of the DUT, if the deployment has one
    bench: BenchEnv | None  # endpoints of the seeds' benchmarks, if the deployment has them

    @property
    def traffic(self) -> Traffic:
        return self.plan.traffic

    def known_throughput(self) -> KnownThroughput:
        """The throughput a dependent test uses: given, configured, or measured first."""
        source = self.plan.throughput
        if source is None:
            raise ConfigError(f"traffic_type {self.traffic.traffic_type} was planned without a throughput source")
        return throughput_for(self.measurer, self.traffic, source, self.on_trial, self.throughput_fps)

    def bench_env(self) -> BenchEnv:
        """The benchmark's endpoints; a benchmark cannot run without them."""
        if self.bench is None:
            raise ConfigError(f"traffic_type {self.traffic.traffic_type} needs the run's endpoints (a deployment)")
        return self.bench


@dataclass(frozen=True)
class TrafficKind:
    """A traffic type: `configure` builds (and validates) its configuration from the settings and
    the traffic, `run` runs a job with it. `headline` is the metric the run's summary and
    history show. `needs_throughput`: the test runs at a throughput, measured first with
    TRAFFICGEN_SEARCH unless given. `benchmark`: one of the seeds' benchmarks (no VSPERF result
    keys; its tables are also written as CSV). `tool`: the programs a benchmark runs on the ports
    itself, where the traffic generator stays off them (None: it drives the generator). `no_mix`:
    why a frame mix does not apply to it (refused when the run is planned)."""

    configure: Callable[[Settings, Traffic], Any]
    run: Callable[[Job], SearchOutcome]
    headline: str
    needs_throughput: bool = False
    benchmark: bool = False
    tool: str | None = None
    no_mix: str = ""  # why it cannot send a frame mix (IMIX); "": it can


ConfigFromSettings = Callable[[Settings], Any]
Search = Callable[[Measurer, Traffic, Any, OnTrial | None], SearchOutcome]
SearchWithDut = Callable[[Measurer, Traffic, Any, OnTrial | None, DutControl | None], SearchOutcome]


def _search(configure: ConfigFromSettings, search: Search, headline: str) -> TrafficKind:
    """A search configured from the settings alone that runs with its config and `on_trial`."""
    return TrafficKind(
        lambda s, _t: configure(s),
        lambda job: search(job.measurer, job.traffic, job.plan.config, job.on_trial),
        headline,
    )


def _search_with_dut(configure: ConfigFromSettings, search: SearchWithDut, headline: str) -> TrafficKind:
    """As `_search`, for a search that also controls the DUT."""
    return TrafficKind(
        lambda s, _t: configure(s),
        lambda job: search(job.measurer, job.traffic, job.plan.config, job.on_trial, job.dut),
        headline,
    )


def _at_throughput(configure: ConfigFromSettings, search: AtThroughputTest[Any, Any], headline: str) -> TrafficKind:
    """As `_search_with_dut`, for a test run at the throughput (given, configured, or measured first)."""
    return TrafficKind(
        lambda s, _t: configure(s),
        lambda job: search(job.measurer, job.traffic, job.plan.config, job.known_throughput, job.on_trial, job.dut),
        headline,
        needs_throughput=True,
    )


def _typed(outcome: SearchOutcome, traffic: Traffic) -> SearchOutcome:
    """A benchmark's metrics carry VSPERF's `type` key."""
    return replace(outcome, metrics={"type": traffic.traffic_type, **outcome.metrics})


def _sweep(sweep: Callable[..., SearchOutcome], headline: str) -> TrafficKind:
    """One of seeds/003's sweeps: trials of the run's traffic generator."""
    return TrafficKind(
        lambda s, _t: SweepConfig.from_settings(s),
        lambda job: _typed(sweep(job.measurer, job.bench_env(), job.traffic, job.plan.config, job.on_trial),
                           job.traffic),
        headline, benchmark=True,
    )


def _own_programs(configure: ConfigFromSettings, run: Callable[[BenchEnv, Traffic, Any], SearchOutcome],
                  headline: str, tool: str) -> TrafficKind:
    """A benchmark that runs `tool` between the deployment's endpoints instead of the generator."""
    return TrafficKind(
        lambda s, _t: configure(s),
        lambda job: _typed(run(job.bench_env(), job.traffic, job.plan.config), job.traffic),
        headline, benchmark=True, tool=tool, no_mix=f"it sends the messages of {tool}, not the generator's frames",
    )


_ONE_FRAME_PER_ADDRESS = "its address frames are one frame per MAC address"

TRAFFIC_KINDS: dict[str, TrafficKind] = {
    "rfc2544_throughput": TrafficKind(
        lambda s, _t: ThroughputWithLoads.from_settings(s),
        lambda job: run_throughput_with_loads(job.measurer, job.traffic, job.plan.config, job.on_trial),
        "throughput_rx_fps",
    ),
    "rfc2544_back2back": TrafficKind(
        lambda s, _t: back2back_config_from_settings(s),
        lambda job: rfc2544_back2back(
            job.measurer, job.traffic, job.plan.config, job.on_trial, throughput_fps=job.throughput_fps
        ),
        "b2b_frames",
    ),
    "rfc2544_continuous": TrafficKind(
        continuous_config_from_settings,
        lambda job: rfc2544_continuous(job.measurer, job.traffic, job.plan.config, job.on_trial),
        "throughput_rx_fps",
    ),
    "burst": TrafficKind(
        lambda _s, t: burst_config_from_settings(t),
        lambda job: burst(job.measurer, job.traffic, job.plan.config.frames, job.on_trial),
        "throughput_rx_fps",
    ),
    "rfc2544_latency": _at_throughput(latency_config_from_settings, rfc2544_latency, "avg_latency_ns"),
    "rfc2544_frame_loss": _search(frame_loss_config_from_settings, rfc2544_frame_loss, "frame_loss_percent"),
    "rfc2544_recovery": _at_throughput(recovery_config_from_settings, rfc2544_recovery, "recovery_time_s"),
    "rfc2544_reset": _at_throughput(reset_config_from_settings, rfc2544_reset, "reset_time_s"),
    "rfc9004_back2back": _at_throughput(rfc9004_config_from_settings, rfc9004_back2back, "b2b_frames"),
    "rfc2889_forwarding": _search(forwarding_config_from_settings, rfc2889_forwarding, "max_forwarding_rate_fps"),
    "rfc2889_caching": replace(_search_with_dut(address_config_from_settings, rfc2889_caching,
                                                "caching_capacity_addresses"), no_mix=_ONE_FRAME_PER_ADDRESS),
    "rfc2889_learning": replace(_search_with_dut(address_config_from_settings, rfc2889_learning,
                                                 "address_learning_rate_fps"), no_mix=_ONE_FRAME_PER_ADDRESS),
    "sweep_bw": _sweep(sweep_bw, "rx_tester_mpps_max"),
    "sweep_latency": _sweep(sweep_latency, "latency_p99_us"),
    "udp_msg_loss": _own_programs(UdpLossConfig.from_settings, run_udp_loss, "frame_loss_percent",
                                  "udp_msg_sender/udp_msg_receiver (vsperf)"),
    "iperf3_tcp": _own_programs(lambda s: IperfConfig.from_settings(s, "tcp"), run_iperf, "receiver_mbps", "iperf3"),
    "iperf3_udp": _own_programs(lambda s: IperfConfig.from_settings(s, "udp"), run_iperf, "receiver_mbps", "iperf3"),
}

TRAFFIC_TYPES: tuple[str, ...] = get_args(TrafficType)  # every traffic type a test may ask for


def traffic_kind(traffic_type: str) -> TrafficKind:
    """The table entry of `traffic_type`; ConfigError naming the valid types otherwise."""
    try:
        return TRAFFIC_KINDS[traffic_type]
    except KeyError:
        raise ConfigError(f"unknown traffic_type {traffic_type!r}; valid: {', '.join(TRAFFIC_TYPES)}") from None


def configure_traffic(traffic: Traffic, settings: Settings) -> TrafficPlan:
    """Build everything a test of `traffic` runs with (its own configuration, then the throughput
    source of a test run at the throughput), raising a one-line ConfigError naming the first bad
    setting."""
    kind = traffic_kind(traffic.traffic_type)
    check_loss_rates(settings)
    config = kind.configure(settings, traffic)
    return TrafficPlan(traffic, config, ThroughputSource.from_settings(settings) if kind.needs_throughput else None)


def run_traffic(
    measurer: Measurer,
    plan: TrafficPlan,
    on_trial: OnTrial | None = None,
    *,
    throughput_fps: float | None = None,
    dut: DutControl | None = None,
    bench: BenchEnv | None = None,
) -> SearchOutcome:
    """Run what `plan.traffic.traffic_type` asks for, with the plan's configuration.

    `on_trial` is called after every trial. `throughput_fps`, when known (e.g. from an earlier
    throughput test of the run), is the throughput that back-to-back (RFC 9004's corrected buffer
    time), latency, recovery and reset use; without it they take the plan's throughput source
    (TRAFFICGEN_THROUGHPUT_PERCENT, or a search run first). `dut` lets rfc2544_reset restart the
    DUT and the RFC 2889 address tests make it forget learned addresses. `bench` is where the
    seeds' benchmarks (udp_msg_loss, iperf3_*, sweeps: vsperf.benchmarks) run.
    """
    return plan.kind.run(Job(measurer, plan, on_trial, throughput_fps, dut, bench))

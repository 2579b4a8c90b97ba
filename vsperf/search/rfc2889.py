"""RFC 2889 on any generator: forwarding rate (section 5.1's measurements), address caching
capacity (5.7) and address learning rate (5.8).

* `rfc2889_forwarding`: trials of TRAFFICGEN_DURATION from the maximum offered load (line rate,
  or what the generator delivers) down in steps of `step_percent`. The forwarding rate at maximum
  offered load (FRMOL) is the received rate of the first trial; the maximum forwarding rate (MFR)
  the highest received rate of any trial. The steps stop at the first trial without loss: below
  it a trial forwards at most what it is offered, which is less than that trial forwarded, so the
  MFR cannot be further down.
* `rfc2889_caching`: binary search on the number of addresses (1 .. `max_addresses`) the switch
  learns from one learning frame each at `address_rate_fps` and then forwards test frames to
  without flooding or losing any. Learned addresses are forgotten before every trial
  (`DutControl.forget_addresses`). If the largest number tried passes, it is reported as a lower
  bound (the largest tried), with an anomaly.
* `rfc2889_learning`: search, on a log scale to the relative width TRAFFICGEN_SEARCH_WIDTH_PERCENT,
  of the highest rate of learning frames from `learning_addresses` addresses (RFC 2889: at most
  the caching capacity) after which no test frame is flooded or lost; the first trial is at the
  maximum load, the lowest rate tried `min_learning_rate_fps`.

Caching and learning need a generator that sends from many source MACs and watches for flooded
frames (`AddressMeasurer`); any other fails the test with a TrafficGenError before a trial.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from vsperf.search.config import check, check_field, config_from_settings, from_setting, number
from vsperf.search.load_steps import LOWEST_LOAD_PERCENT, LoadSteps
from vsperf.search.measurer import (
    AddressMeasurer,
    AddressTrialResult,
    DutControl,
    Measurer,
    missing_capability,
)
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.search.outcome_build import keep_phase, row_keys
from vsperf.search.trials import Anomalies, OnTrial, TrialLog, percent_of
from vsperf.search.upper_bound import LoadCeiling, generator_limit_notes
from vsperf.traffic import Traffic

MAX_ADDRESS_TRIALS = 80  # a guard: both address searches end long before
_EPS = 1e-9


@dataclass(frozen=True)
class ForwardingConfig(LoadSteps):
    """Offered loads of the forwarding-rate test (RFC 2889: trials of 30 s by default)."""

    step_percent: float = field(metadata=from_setting("TRAFFICGEN_RFC2889_LOAD_STEP_PERCENT"))


@dataclass(frozen=True)
class AddressConfig:
    """The address caching and learning tests."""

    # most addresses the caching search tries
    max_addresses: int = field(metadata=from_setting("TRAFFICGEN_RFC2889_MAX_ADDRESSES"))
    # learning frames of the caching test; test frames of both
    address_rate_fps: float = field(metadata=from_setting("TRAFFICGEN_RFC2889_ADDRESS_RATE_FPS"))
    # addresses of the learning-rate test
    learning_addresses: int = field(metadata=from_setting("TRAFFICGEN_RFC2889_LEARNING_ADDRESSES"))
    # lowest learning rate tried
    min_learning_rate_fps: float = field(metadata=from_setting("TRAFFICGEN_RFC2889_MIN_LEARNING_RATE_FPS"))
    width: float  # relative width of the learning-rate search (TRAFFICGEN_SEARCH_WIDTH_PERCENT / 100)
    # highest learning rate tried, % of line rate
    max_rate_percent: float = field(metadata=from_setting("TRAFFICGEN_RFC2544_MAX_RATE_PERCENT"))

    def __post_init__(self) -> None:
        check_field(self, "max_addresses", self.max_addresses >= 1, ">= 1")
        check_field(self, "address_rate_fps", self.address_rate_fps > 0, "> 0")
        check_field(self, "learning_addresses", self.learning_addresses >= 1, ">= 1")
        check_field(self, "min_learning_rate_fps", self.min_learning_rate_fps > 0, "> 0")
        check(0 < self.width < 1, "TRAFFICGEN_SEARCH_WIDTH_PERCENT", 100 * self.width, "in (0, 100)")
        check_field(self, "max_rate_percent", 0 < self.max_rate_percent <= 100, "in (0, 100]")


def forwarding_config_from_settings(settings: Mapping[str, Any]) -> ForwardingConfig:
    return config_from_settings(ForwardingConfig, settings)


def address_config_from_settings(settings: Mapping[str, Any]) -> AddressConfig:
    width = number(settings, "TRAFFICGEN_SEARCH_WIDTH_PERCENT") / 100.0
    return config_from_settings(AddressConfig, settings, width=width)


def rfc2889_forwarding(
    measurer: Measurer, traffic: Traffic, cfg: ForwardingConfig, on_trial: OnTrial | None = None
) -> SearchOutcome:
    """Forwarding rate at maximum offered load and maximum forwarding rate."""
    log = TrialLog(measurer, on_trial)
    line = traffic.line_rate_fps
    ceiling = LoadCeiling(cfg.max_rate_percent * line / 100.0, measurer)
    curve: list[dict[str, Any]] = []
    step, percent = 0, cfg.max_rate_percent
    while percent > LOWEST_LOAD_PERCENT:
        trial = log.rate(traffic, ceiling.clamp(percent * line / 100.0), cfg.duration_s, f"{percent:g} % offered")
        offered = ceiling.observe(trial)
        curve.append({"offered_fps": offered, "offered_percent": percent_of(offered, line),
                      "forwarding_rate_fps": trial.rx_rate_fps, "frame_loss_percent": trial.loss_percent})
        if trial.tx_frames > 0 and trial.loss_frames == 0:
            break
        step, percent = cfg.next_step(step, percent_of(offered, line))
    best = max(curve, key=lambda p: p["forwarding_rate_fps"])
    first = curve[0]
    metrics: dict[str, MetricValue] = {
        "max_forwarding_rate_fps": best["forwarding_rate_fps"],
        "max_forwarding_rate_percent": percent_of(best["forwarding_rate_fps"], line),
        "offered_load_at_mfr_fps": best["offered_fps"],
        "offered_load_at_mfr_percent": best["offered_percent"],
        "forwarding_rate_at_max_offered_load_fps": first["forwarding_rate_fps"],
        "forwarding_rate_at_max_offered_load_percent": percent_of(first["forwarding_rate_fps"], line),
        "max_offered_load_fps": first["offered_fps"],
        "max_offered_load_percent": first["offered_percent"],
        "frame_loss_percent": first["frame_loss_percent"],
    }
    for point in curve:
        metrics[f"forwarding_rate_fps_at_{round(point['offered_percent'], 3):g}_percent"] = point["forwarding_rate_fps"]
    metrics.update(row_keys("rfc2889_forwarding", traffic))
    anomalies = generator_limit_notes(ceiling, log.trials, traffic, answered_at_max=False)
    return log.outcome(metrics, {"parameters": {**asdict(cfg), "line_rate_fps": line}, "curve": curve}, anomalies)


@dataclass
class _AddressSearch:
    """An address test as it runs: the generator's address trials, their log and notes, the anomalies."""

    measurer: AddressMeasurer
    traffic: Traffic
    dut: DutControl | None
    log: TrialLog
    anomalies: Anomalies = field(default_factory=Anomalies)
    notes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def more(self) -> bool:
        """A guard: both searches end long before MAX_ADDRESS_TRIALS."""
        return len(self.notes) < MAX_ADDRESS_TRIALS

    def trial(
        self, addresses: int, learning_fps: float, test_fps: float, purpose: str
    ) -> tuple[AddressTrialResult, bool]:
        """One address trial, its phases kept in the log and noted; passed: nothing flooded, nothing lost."""
        forget = self.dut.forget_addresses if self.dut is not None else None
        result = self.measurer.address_trial(self.traffic, addresses, learning_fps, test_fps, forget)
        keep_phase(self.log, result.learning, f"{purpose}: learning")
        test = keep_phase(self.log, result.test, f"{purpose}: test")
        passed = result.flooded_frames == 0 and test.tx_frames > 0 and test.loss_frames == 0
        self.notes.append({"addresses": result.addresses, "learning_rate_fps": result.learning.actual_tx_rate_fps,
                           "flooded_frames": result.flooded_frames, "test_lost_frames": result.test.loss_frames,
                           "passed": passed})
        return result, passed


AddressBody = Callable[[_AddressSearch, AddressConfig], tuple[dict[str, MetricValue], dict[str, Any]]]


@dataclass(frozen=True)
class AddressTest:
    """An RFC 2889 address test, called as `test(measurer, traffic, cfg, on_trial=None, dut=None)`:
    `body` searches with an `AddressMeasurer` (any other generator fails before a trial) and
    returns its metrics and details; the outcome adds VSPERF's row keys, the parameters and every
    address trial. `dut`, when given, makes the DUT forget its addresses before each trial."""

    traffic_type: str
    body: AddressBody

    def __call__(
        self, measurer: Measurer, traffic: Traffic, cfg: AddressConfig, on_trial: OnTrial | None = None,
        dut: DutControl | None = None,
    ) -> SearchOutcome:
        if not isinstance(measurer, AddressMeasurer):
            raise missing_capability(measurer, self.traffic_type, "address_trial")
        search = _AddressSearch(measurer, traffic, dut, TrialLog(measurer, on_trial))
        metrics, details = self.body(search, cfg)
        details = {"parameters": {**asdict(cfg), "line_rate_fps": traffic.line_rate_fps}, **details,
                   "address_trials": search.notes}
        metrics = {**metrics, **row_keys(self.traffic_type, traffic)}
        return search.log.outcome(metrics, details, search.anomalies.as_tuple())


def _caching(search: _AddressSearch, cfg: AddressConfig) -> tuple[dict[str, MetricValue], dict[str, Any]]:
    """Address caching capacity: the most addresses learned without flooding."""
    anomalies = search.anomalies
    lower, upper, addresses = 0, cfg.max_addresses + 1, cfg.max_addresses
    while search.more:
        result, passed = search.trial(addresses, cfg.address_rate_fps, cfg.address_rate_fps, f"{addresses} addresses")
        if passed:
            lower = addresses
        else:
            upper = addresses
            if result.flooded_frames == 0:
                anomalies.add(f"test frames were lost without flooding at {addresses} addresses: the address "
                              "rate (TRAFFICGEN_RFC2889_ADDRESS_RATE_FPS) may be above what the DUT forwards")
        if upper - lower <= 1:
            break
        addresses = (lower + upper) // 2
    if lower == cfg.max_addresses:
        anomalies.add(f"no limit found: the DUT learned all {cfg.max_addresses} addresses tried, so its capacity "
                      "is at least that (the largest tried; raise TRAFFICGEN_RFC2889_MAX_ADDRESSES)")
    elif lower == 0:
        anomalies.add("even a single address was not learned (or its test frame was lost)")
    metrics: dict[str, MetricValue] = {
        "caching_capacity_addresses": lower,
        "caching_max_tried_addresses": cfg.max_addresses,
        "address_rate_fps": cfg.address_rate_fps,
    }
    return metrics, {"limit_found": lower < cfg.max_addresses}


def _learning(search: _AddressSearch, cfg: AddressConfig) -> tuple[dict[str, MetricValue], dict[str, Any]]:
    """Address learning rate: the highest rate of learning frames fully learned."""
    line = search.traffic.line_rate_fps
    ceiling = LoadCeiling(cfg.max_rate_percent * line / 100.0, search.measurer)
    floor = min(cfg.min_learning_rate_fps, ceiling.max_load_fps)
    lower: float | None = None
    upper: float | None = None
    rate = ceiling.max_load_fps
    while search.more:
        result, passed = search.trial(cfg.learning_addresses, ceiling.clamp(rate), cfg.address_rate_fps,
                                      f"learning at {rate:.0f} fps")
        measured = ceiling.observe(result.learning)
        if passed:
            lower = measured if lower is None else max(lower, measured)
        else:
            upper = measured if upper is None else min(upper, measured)
        if lower is not None and (lower >= ceiling.max_load_fps * (1 - _EPS) or
                                  (upper is not None and (upper - lower) / upper <= cfg.width + _EPS)):
            break
        if lower is None and upper is not None and upper <= floor * (1 + _EPS):
            break
        low = lower if lower is not None else floor
        high = upper if upper is not None else ceiling.max_load_fps
        rate = floor if lower is None and (high - low) / high <= cfg.width else math.sqrt(low * high)
    if lower is None:
        search.anomalies.add(f"not all {cfg.learning_addresses} addresses were learned even at {floor:.0f} fps: is "
                             "TRAFFICGEN_RFC2889_LEARNING_ADDRESSES above the caching capacity?")
    elif upper is None:
        search.anomalies.add(
            "the DUT learned every address at the highest rate tried: the learning rate is at least that"
        )
    for note in generator_limit_notes(ceiling, search.log.trials, search.traffic, answered_at_max=upper is None):
        search.anomalies.add(note)
    found = lower or 0.0
    metrics: dict[str, MetricValue] = {
        "address_learning_rate_fps": found,
        "address_learning_rate_percent": percent_of(found, line),
        "address_learning_rate_upper_bound_fps": upper,
        "learning_addresses": cfg.learning_addresses,
        "address_rate_fps": cfg.address_rate_fps,
    }
    return metrics, {}


rfc2889_caching = AddressTest("rfc2889_caching", _caching)  # see `_caching`
rfc2889_learning = AddressTest("rfc2889_learning", _learning)  # see `_learning`

"""RFC 2889 forwarding rate, address caching capacity and address learning rate."""

from __future__ import annotations

import pytest
from dutsim import SimDut
from dutsim_events import EventDut, FakeDutControl
from search_shipped import shipped
from settings_util import make_settings

from vsperf.errors import ConfigError, TrafficGenError
from vsperf.search.rfc2889 import (
    AddressConfig,
    ForwardingConfig,
    address_config_from_settings,
    forwarding_config_from_settings,
    rfc2889_caching,
    rfc2889_forwarding,
    rfc2889_learning,
)
from vsperf.traffic import Traffic

T64 = Traffic(traffic_type="rfc2889_forwarding", frame_size_bytes=64)
LINE = T64.line_rate_fps


def test_forwarding_rate_at_max_offered_load_and_maximum() -> None:
    out = rfc2889_forwarding(SimDut(0.35 * LINE), T64, shipped(ForwardingConfig, duration_s=30))
    m = out.metrics
    assert m["forwarding_rate_at_max_offered_load_fps"] == pytest.approx(0.35 * LINE, rel=1e-6)
    assert m["max_forwarding_rate_fps"] == pytest.approx(0.35 * LINE, rel=1e-6)
    assert m["max_offered_load_percent"] == pytest.approx(100.0)
    # 100 % .. 30 %: the first lossless trial ends the steps (nothing lower can forward more)
    assert [round(p["offered_percent"]) for p in out.details["curve"]] == [100, 90, 80, 70, 60, 50, 40, 30]
    assert m["forwarding_rate_fps_at_30_percent"] == pytest.approx(0.3 * LINE)
    assert m["type"] == "rfc2889_forwarding"


def test_congestion_collapse_makes_mfr_differ_from_frmol() -> None:
    # Ramp loss 3x the overload: at 100 % it forwards nothing, its maximum is further down.
    out = rfc2889_forwarding(SimDut(0.4 * LINE, loss="ramp", ramp=3.0), T64, shipped(ForwardingConfig, duration_s=1))
    m = out.metrics
    assert m["forwarding_rate_at_max_offered_load_fps"] == 0.0
    assert m["max_forwarding_rate_fps"] == pytest.approx(0.4 * LINE, rel=1e-6)
    assert m["offered_load_at_mfr_percent"] == pytest.approx(40.0)


def test_forwarding_with_a_generator_short_of_line_rate() -> None:
    out = rfc2889_forwarding(SimDut(LINE, generator_max_fps=0.55 * LINE), T64, shipped(ForwardingConfig, duration_s=1))
    assert out.metrics["max_offered_load_percent"] == pytest.approx(55.0)
    assert len(out.details["curve"]) == 1 and any("under-delivered" in a for a in out.anomalies)


def test_caching_capacity_is_the_table_size() -> None:
    dut, control = EventDut(LINE, table_size=1000), FakeDutControl()
    out = rfc2889_caching(dut, T64, shipped(AddressConfig, max_addresses=4096), dut=control)
    assert out.metrics["caching_capacity_addresses"] == 1000
    assert control.forgets == len(out.details["address_trials"]) == len(out.trials) // 2
    assert out.details["limit_found"] is True and out.anomalies == ()
    assert out.trials[0].purpose == "4096 addresses: learning"


def test_caching_without_a_limit_reports_the_largest_tried() -> None:
    out = rfc2889_caching(EventDut(LINE, table_size=10**6), T64, shipped(AddressConfig, max_addresses=512))
    assert out.metrics["caching_capacity_addresses"] == 512 and len(out.details["address_trials"]) == 1
    assert any("no limit found" in a for a in out.anomalies)


def test_learning_rate_within_the_width() -> None:
    dut = EventDut(LINE, learn_fps=20_000.0, table_size=4096)
    out = rfc2889_learning(dut, T64, shipped(AddressConfig, learning_addresses=1024))
    found = out.metrics["address_learning_rate_fps"]
    assert isinstance(found, float) and 20_000 * 0.995 <= found <= 20_000
    upper = out.metrics["address_learning_rate_upper_bound_fps"]
    assert isinstance(upper, float) and (upper - found) / upper <= 0.005


def test_learning_more_addresses_than_the_table_fails_everywhere() -> None:
    out = rfc2889_learning(EventDut(LINE, table_size=100), T64, shipped(AddressConfig, learning_addresses=1024))
    assert out.metrics["address_learning_rate_fps"] == 0.0
    assert any("above the caching capacity" in a for a in out.anomalies)


def test_learning_at_line_rate_is_a_lower_bound() -> None:
    out = rfc2889_learning(EventDut(LINE, learn_fps=1e12, table_size=4096), T64, shipped(AddressConfig))
    assert out.metrics["address_learning_rate_fps"] == pytest.approx(LINE)
    assert len(out.details["address_trials"]) == 1


def test_address_tests_need_the_capability_and_valid_settings() -> None:
    for test in (rfc2889_caching, rfc2889_learning):
        with pytest.raises(TrafficGenError, match="cannot run rfc2889_"):
            test(SimDut(LINE), T64, shipped(AddressConfig))
    assert address_config_from_settings(make_settings({})).max_addresses == 16384
    assert forwarding_config_from_settings(make_settings({})).step_percent == 10.0
    with pytest.raises(ConfigError, match="TRAFFICGEN_RFC2889_LEARNING_ADDRESSES"):
        shipped(AddressConfig, learning_addresses=0)

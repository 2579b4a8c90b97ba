"""VSPERF's result keys beside vsperf's: type, RFC 2889, back-to-back, scalability, times."""

from __future__ import annotations

from vsperf.results.vsperf_keys import frame_size_keys, time_keys, vsperf_type, with_vsperf_keys
from vsperf.search.measurer import TrialResult
from vsperf.search.outcome import SearchOutcome
from vsperf.traffic import Traffic

LINE = 14_880_952.38


def burst(tx: int, rx: int) -> TrialResult:
    return TrialResult("burst", 64, LINE, tx / LINE, tx, rx, LINE * 0.9, LINE, purpose="search")


def test_vsperf_type_values() -> None:
    assert [vsperf_type(t) for t in ("rfc2544_throughput", "rfc2544_back2back", "burst", "rfc2544_continuous",
                                     "rfc2889_caching", "rfc9004_back2back", "iperf3_tcp")] == [
        "rfc2544", "rfc2544", "rfc2544", "rfc2544", "rfc2889", "rfc9004", "iperf3_tcp"]


def test_back2back_keys_come_from_the_longest_lossless_burst() -> None:
    trials = [burst(40_000, 30_000), burst(20_000, 20_000), burst(30_000, 29_000), burst(25_000, 25_000)]
    keys = frame_size_keys({"b2b_frames": 25_000, "type": "rfc2544_back2back"}, trials, Traffic())
    assert keys["type"] == "rfc2544" and keys["test_type"] == "rfc2544_back2back"
    assert keys["b2b_tx_count"] == 25_000 and keys["b2b_frame_loss_frames"] == 0
    assert keys["b2b_tx_fps"] == LINE * 0.9 and keys["b2b_rx_fps"] == LINE * 0.9
    assert abs(float(keys["b2b_tx_percent"] or 0) - 90.0) < 1e-9 and keys["b2b_rx_percent"] == keys["b2b_tx_percent"]
    # no lossless burst: the shortest one tried, with its loss
    keys = frame_size_keys({"b2b_frames": 0}, [burst(2_000, 1_500), burst(1_000, 900)], Traffic())
    assert (keys["b2b_tx_count"], keys["b2b_frame_loss_frames"]) == (0, 100)


def test_rfc2889_scalability_and_loopback_keys() -> None:
    metrics = {"max_forwarding_rate_fps": 5e6, "caching_capacity_addresses": 8192, "address_learning_rate_fps": 9e5}
    traffic = Traffic(traffic_type="rfc2889_caching", multistream=8000, stream_type="L4", pre_installed_flows=True)
    keys = frame_size_keys(metrics, [], traffic, guest_loopback="testpmd testpmd")
    assert keys["type"] == "rfc2889" and keys["test_type"] == "rfc2889_caching"
    assert (keys["forwarding_rate_fps"], keys["caching_capacity_addrs"], keys["optimal_learning_rate_fps"]) == (
        5e6, 8192, 9e5)
    assert keys["addr_learned_percent"] == 100.0
    assert (keys["stream_count"], keys["match_type"], keys["pre-installed_flows"]) == (8000, "L4", "Yes")
    assert keys["guest_loopback"] == "testpmd testpmd"
    plain = frame_size_keys({"throughput_rx_fps": 1.0}, [], Traffic())
    assert "stream_count" not in plain and "guest_loopback" not in plain and "b2b_tx_count" not in plain


def test_with_vsperf_keys_keeps_ours() -> None:
    outcome = SearchOutcome(metrics={"throughput_rx_fps": 1.0, "type": "rfc2544_throughput"}, trials=())
    assert with_vsperf_keys(outcome, Traffic()).metrics == {
        "throughput_rx_fps": 1.0, "type": "rfc2544", "test_type": "rfc2544_throughput"}


def test_time_keys() -> None:
    assert time_keys("2026-11-24T21:00:00+00:00", "2026-11-24T21:01:30+00:00") == {
        "test_execution_time": 90.0, "start_time": "2026-11-24 21:00:00", "stop_time": "2026-11-24 21:01:30"}
    assert time_keys("2026-11-24T21:00:00+00:00", None)["stop_time"] is None

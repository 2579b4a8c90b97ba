"""Anomalies, conclusions and rationale computed from the results."""

from __future__ import annotations

from typing import Any

from vsperf.report.analysis import anomalies_of, conclusions, is_simulated, rationale
from vsperf.results.model import ComponentInfo, FrameSizeResult, RunResults, TestResult
from vsperf.search.measurer import FLAG_RX_EXCEEDS_TX, FLAG_UNDER_DELIVERY, TrialResult


def _trial(requested: float, sent: float, flags: tuple[str, ...] = ()) -> TrialResult:
    return TrialResult(
        "rate", 64, requested, 60.0, 1000, 1000, sent, 29_761_904.76, flags=flags, purpose="search"
    )


def _test(status: str = "passed", error: str | None = None, **changes: Any) -> TestResult:
    fields: dict[str, Any] = {
        "index": 0,
        "name": "phy2phy_tput",
        "description": "",
        "deployment": "p2p",
        "traffic_type": "rfc2544_throughput",
        "bidir": True,
        "frame_modification": None,
        "components": (),
        "parameters": {},
        "status": status,
        "error": error,
        "started_at": "2024-05-11T07:36:56+00:00",
        "finished_at": None,
        "results": (
            FrameSizeResult(
                64, {"throughput_rx_fps": 2_000_000.0, "throughput_rx_percent": 6.72}, trials=(_trial(1, 1),)
            ),
            FrameSizeResult(1518, {"throughput_rx_fps": 1_625_470.0648, "throughput_rx_percent": 100.0}),
        ),
    }
    fields.update(changes)
    return TestResult(**fields)


def _run(
    *tests: TestResult, status: str = "finished", simulated: bool = False, **settings: Any
) -> RunResults:
    return RunResults(
        1, "0.1.0", "abc", status, "2024-05-11T07:36:56+00:00", None, (), simulated, {}, settings, {}, tests
    )


def test_a_clean_passed_test_has_no_anomaly() -> None:
    assert anomalies_of(_test()) == []


def test_errors_and_statuses_are_anomalies() -> None:
    assert anomalies_of(_test("failed", "ovs-vswitchd died")) == ["The test failed: ovs-vswitchd died."]
    (interrupted,) = anomalies_of(_test("interrupted", "Ctrl-C"))
    assert interrupted.startswith("The test was interrupted (Ctrl-C)")
    (running,) = anomalies_of(_test("running"))
    assert "had not finished" in running
    assert anomalies_of(_test(results=())) == ["The test passed but recorded no packet size."]


def test_search_findings_flags_and_missing_metrics() -> None:
    trials = (
        _trial(1_000_000, 1_000_000),
        _trial(1_000_000, 900_000, (FLAG_UNDER_DELIVERY,)),
        _trial(2_000_000, 1_500_000, (FLAG_UNDER_DELIVERY, FLAG_RX_EXCEEDS_TX)),
    )
    results = (
        FrameSizeResult(
            64, {"throughput_rx_fps": 1e6}, anomalies=("the search never saw loss",), trials=trials
        ),
        FrameSizeResult(128, {"throughput_rx_fps": None, "min_latency_ns": None}),
    )
    findings = anomalies_of(_test(results=results))
    assert findings[0] == "Packet size 64: the search never saw loss"
    assert findings[1].startswith(
        f"Packet size 64: 2 of 3 trials flagged {FLAG_UNDER_DELIVERY} (trials 2, 3 of"
    )
    assert findings[1].endswith("the lowest sent/offered rate was 75.000 %.")
    assert findings[2].startswith(f"Packet size 64: 1 of 3 trials flagged {FLAG_RX_EXCEEDS_TX} (trial 3 of")
    assert findings[3] == "Packet size 128: no metric could be measured."
    assert len(findings) == 4


def test_conclusions_are_computed() -> None:
    b2b = _test(
        name="back2back",
        traffic_type="rfc2544_back2back",
        index=1,
        results=(FrameSizeResult(64, {"b2b_frames": 21713}), FrameSizeResult(128, {"b2b_frames": 1696315})),
    )
    failed = _test("failed", "boom", name="pvp_tput", index=2, results=())
    lines = conclusions(_run(_test(), b2b, failed, status="interrupted"))
    assert lines[0] == "3 test(s) ran: 2 passed (phy2phy_tput, back2back); 1 failed (pvp_tput)."
    assert "status: interrupted" in lines[1]
    assert (
        "phy2phy_tput (p2p, rfc2544_throughput): throughput_rx_fps ranged from 1625470.065 fps "
        "(100.000 % of line rate) at 1518 B to 2000000.000 fps (6.720 % of line rate) at 64 B." in lines
    )
    assert (
        "back2back (p2p, rfc2544_back2back): b2b_frames ranged from 21713 frames at 64 B "
        "to 1696315 frames at 128 B." in lines
    )
    assert lines[-1].startswith("1 anomaly was recorded (0 flagged trial(s))")


def test_conclusions_of_a_clean_simulated_run() -> None:
    lines = conclusions(_run(_test(), simulated=True))
    assert any("simulated" in line for line in lines)
    assert lines[-1] == "No anomalies were recorded in any test."
    assert conclusions(_run())[0] == "No test was run."


def test_simulated_per_test() -> None:
    real = _run(_test())
    assert not is_simulated(real, real.tests[0])
    sim = _test(components=(ComponentInfo("vswitch", "simulated", "n/a"),))
    assert is_simulated(real, sim)
    assert is_simulated(_run(_test(), simulated=True), _test())


def test_rationale_quotes_the_settings() -> None:
    lines = rationale(_run(_test(), TRAFFICGEN_LOSSRATE=0.002, TRAFFICGEN_DURATION=60))
    assert any("did not exceed 0.002 % (TRAFFICGEN_LOSSRATE)" in line for line in lines)
    assert any("TRAFFICGEN_DURATION = 60 s" in line for line in lines)
    assert any("Rate trials in this run lasted 60.000 s" in line for line in lines)
    assert not any("Back-to-back" in line for line in lines)

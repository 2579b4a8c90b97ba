"""Steps run in order with VSPERF's rules: macros from earlier results and settings, the output
filter, checks unless '!', every step recorded, the first failure stops the test."""

from __future__ import annotations

from typing import Any

import pytest

from vsperf.config import load_settings
from vsperf.results.steps import StepRecord
from vsperf.steps.macros import StepError, expand, filter_output
from vsperf.steps.model import parse_steps
from vsperf.steps.runner import StepEnv, StepRunner
from vsperf.steps.tools import StepTools


def run(steps: list[Any], results: list[dict[str, Any]] | None = None, *,
        parameters: dict[str, Any] | None = None) -> tuple[list[StepRecord], StepRunner, list[Any]]:
    records: list[StepRecord] = []
    sent: list[Any] = []

    def send(settings: Any) -> list[dict[str, Any]]:
        sent.append(settings)
        return list(results if results is not None else [{"throughput_rx_fps": 10.0, "packet_size": 64}])

    env = StepEnv("t", load_settings(env={}), StepTools(None, None), send, records.append,
                  constants={"TOOLS": {"ovs-vsctl": "ovs-vsctl"}}, parameters=parameters or {})
    runner = StepRunner(env, parse_steps("t", steps))
    runner.run()
    return records, runner, sent


def test_results_settings_and_references() -> None:
    records, runner, sent = run([
        ["settings", "getValue", "TRAFFICGEN_DURATION"],
        ["settings", "setValue", "TRAFFICGEN_DURATION", 7],
        ["#dur", "settings", "getValue", "TRAFFICGEN_DURATION"],
        ["tools", "eval", "#STEP[dur] * 2"],
        ["tools", "assert", "#STEP[-1] == 14.0"],
        ["tools", "eval", "'$TOOLS[\"ovs-vsctl\"] $TRAFFIC[\"l3\"][\"dstip\"] $d'"],
        ["settings", "resetValue", "TRAFFICGEN_DURATION"],
        ["trafficgen", "send_traffic", {"traffic_type": "rfc2544_continuous"}],
        ["trafficgen", "get_results"],
        ["tools", "assert", "#STEP[-1][0]['throughput_rx_fps'] > 5"],
        ["log", "info", "done"],
    ])
    assert runner.results[0] == 30.0 and runner.results[2] == 7.0 and runner.results[3] == 14.0
    assert runner.results[5] == "ovs-vsctl 198.18.1.1 $d"  # an unknown $word stays as it is (VSPERF's rule)
    assert runner.env.settings["TRAFFICGEN_DURATION"] == 30.0
    assert sent[0]["TRAFFIC"]["traffic_type"] == "rfc2544_continuous"
    assert [r.status for r in records] == ["passed"] * 11
    assert records[3].result == "14.0" and records[0].step == '["settings", "getValue", "TRAFFICGEN_DURATION"]'


def test_a_failing_step_stops_the_test_and_is_recorded() -> None:
    with pytest.raises(StepError, match=r"step 1 \[\"tools\", \"assert\", \"1 > 2\"\]: condition '1 > 2' is not true"):
        run([["log", "info", "x"], ["tools", "assert", "1 > 2"], ["log", "info", "never"]])


def test_checks_and_the_exclamation_mark() -> None:
    zero = [{"throughput_rx_fps": 0, "packet_size": 64}]
    with pytest.raises(StepError, match="its check failed: throughput_rx_fps is 0"):
        run([["trafficgen", "send_traffic", {}]], zero)
    records, _, _ = run([["!trafficgen", "send_traffic", {}], ["trafficgen", "get_results"]], zero)
    assert [(r.status, r.checked) for r in records] == [("passed", False), ("passed", True)]


def test_steps_that_need_a_deployed_dut_say_so() -> None:
    with pytest.raises(StepError, match="the vswitch object needs the test's Open vSwitch"):
        run([["vswitch", "add_switch", "br0"]])
    with pytest.raises(StepError, match="no setting 'NICS'"):
        run([["settings", "getValue", "NICS"]])


def test_macros() -> None:
    results = [("p0", 1), {"a": [5]}]
    assert expand(["in_port=#STEP[0][1]", {"x": "#STEP[-1]['a'][0]"}], results, {}, lambda n: {}[n]) == [
        "in_port=1", {"x": "5"}]
    assert expand("#STEP[lbl][0]", results, {"lbl": 0}, lambda n: {}[n]) == "p0"
    with pytest.raises(StepError, match=r"#STEP\[0\]\[x\]: subscript \[x\] is neither a number nor a quoted string"):
        expand("#STEP[0][x]", results, {}, lambda n: {}[n])
    with pytest.raises(StepError, match=r"has no item \[7\]"):
        expand("#STEP[0][7]", results, {}, lambda n: {}[n])
    assert filter_output("a 1\nb 2\n", r"(\w) (\d)") == [("a", "1"), ("b", "2")]
    assert filter_output(["x1", "y"], r"\d") == [["1"], []]


def test_dropping_the_tests_parameters_as_upstream_does_to_get_its_nics_back() -> None:
    """`settings setValue TEST_PARAMS ''`: VSPERF drops the test's Parameters. Upstream's tests do
    it after `NICS: []`, settings vsperf does not use: nothing to restore, the steps go on. With a
    Parameter vsperf uses, or another value, it cannot be done mid-test: one line saying so."""
    records, _, _ = run([["settings", "setValue", "TEST_PARAMS", ""], ["log", "info", "on"]],
                        parameters={"NICS": [], "WHITELIST_NICS": []})
    assert [r.status for r in records] == ["passed", "passed"]
    with pytest.raises(StepError, match=r"vsperf cannot drop the test's Parameters mid-test \(TRAFFICGEN_DURATION\); "
                                        r"set each with settings setValue NAME VALUE instead$"):
        run([["settings", "setValue", "TEST_PARAMS", ""]], parameters={"NICS": [], "TRAFFICGEN_DURATION": 5})
    with pytest.raises(StepError, match=r"settings setValue TEST_PARAMS \{'NICS': \[\]\}: vsperf only drops the "
                                        r"test's Parameters"):
        run([["settings", "setValue", "TEST_PARAMS", {"NICS": []}]], parameters={"NICS": []})

"""The runner: results written as measured, interrupted runs keep them, failures stay per test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vsperf.backends import build_registries, register_builtin
from vsperf.catalog import Catalog
from vsperf.config import load_settings
from vsperf.errors import TrafficGenError
from vsperf.plan import plan_tests
from vsperf.registry import Registries
from vsperf.runner import Runner
from vsperf.search.measurer import TrialResult
from vsperf.traffic import Traffic
from vsperf.trafficgen.dummy.backend import DummyTrafficGenerator
from vsperf.ui.progress import Progress


class InterruptedDummy(DummyTrafficGenerator):
    """Ctrl-C arrives during the first trial at 128-byte frames."""

    NAME = "interrupted-dummy"

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        if traffic.frame_size_bytes == 128:
            raise KeyboardInterrupt
        return super().trial(traffic, rate_fps, duration_s)


class BrokenDummy(DummyTrafficGenerator):
    """The generator fails at 128-byte frames of throughput tests."""

    NAME = "broken-dummy"

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        if traffic.frame_size_bytes == 128:
            raise TrafficGenError("generator port went away")
        return super().trial(traffic, rate_fps, duration_s)


def registries() -> Registries:
    def builtin(regs: Registries) -> None:
        register_builtin(regs)
        regs.trafficgens.register(InterruptedDummy)
        regs.trafficgens.register(BrokenDummy)

    return build_registries(builtin)


def run(tmp_path: Path, gen: str, tests: list[str], params: str = "") -> tuple[Any, dict[str, Any]]:
    settings = load_settings(env={}, test_params=f"TRAFFICGEN={gen};TRAFFICGEN_PKT_SIZES=(64,128,256){params}")
    regs = registries()
    plan = plan_tests(Catalog.load().select(tests), settings, regs)
    out = tmp_path / "run"
    summary = Runner(plan, registries=regs, settings=settings, results_dir=out, run_id="abc123",
                     command_line=["vsperf"], progress=Progress()).run()
    return summary, json.loads((out / "results.json").read_text())


def test_interrupt_keeps_what_was_measured(tmp_path: Path) -> None:
    summary, data = run(tmp_path, "interrupted-dummy", ["phy2phy_tput", "back2back"])
    assert summary.interrupted and summary.failed
    assert data["status"] == "interrupted"
    assert len(data["tests"]) == 1, "the second test never started"
    test = data["tests"][0]
    assert test["status"] == "interrupted"
    assert [r["packet_size"] for r in test["results"]] == [64]
    assert test["results"][0]["metrics"]["throughput_rx_fps"] > 0
    assert (tmp_path / "run" / "report.rst").exists()
    assert not Path("/tmp/vsperf-abc123").exists(), "the work directory is removed"


def test_a_failed_test_does_not_stop_the_next(tmp_path: Path) -> None:
    summary, data = run(tmp_path, "broken-dummy", ["phy2phy_tput", "phy2phy_cont"])
    assert [t.status for t in summary.tests] == ["failed", "failed"]
    first = data["tests"][0]
    assert "generator port went away" in first["error"]
    assert [r["packet_size"] for r in first["results"]] == [64]
    assert data["status"] == "finished"
    assert summary.failed


@pytest.mark.parametrize("search", ["binary", "ndr_pdr", "mlr"])
def test_a_search_without_an_answer_fails_its_test_and_keeps_the_trials(tmp_path: Path, search: str) -> None:
    # The simulated DUT forwards 1 fps at every size: less than the lowest load a search tries.
    summary, data = run(tmp_path, "dummy", ["phy2phy_tput", "phy2phy_cont"],
                        f";TRAFFICGEN_SEARCH={search};TRAFFICGEN_DURATION=1;TRAFFICGEN_DUMMY_DUT={{'capacity_fps': 1}};"
                        "REPORT_FORMATS=[]")
    assert [t.status for t in summary.tests] == ["failed", "passed"]
    tput = data["tests"][0]
    assert tput["status"] == "failed"
    assert tput["error"].startswith("64 B: no ")
    assert "the DUT forwarded" in tput["error"] and "\n" not in tput["error"]
    assert [r["packet_size"] for r in tput["results"]] == [64], "the test stops at the size without an answer"
    assert tput["results"][0]["trials"], "what was measured is written"
    assert any(tput["error"][len("64 B: "):] in a for a in tput["results"][0]["anomalies"])
    assert summary.failed


@pytest.mark.parametrize("gen", ["dummy"])
def test_components_name_generator_and_simulated_switch(tmp_path: Path, gen: str) -> None:
    summary, data = run(tmp_path, gen, ["phy2phy_cont"])
    assert not summary.failed
    roles = {c["role"]: c for c in data["tests"][0]["components"]}
    assert roles["trafficgen"]["name"] == "dummy"
    assert "simulated" in roles["trafficgen"]["version"]
    assert roles["vswitch"]["name"] == "simulated"

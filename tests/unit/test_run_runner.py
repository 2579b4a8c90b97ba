"""The runner: results written as measured, interrupted runs keep them, failures stay per test; the
generator on the run's generator host; --mode trafficgen-off holds; the run's commands.log."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, cast

import pytest

from vsperf.backends import build_registries, register_builtin
from vsperf.catalog import Catalog
from vsperf.config import load_settings
from vsperf.errors import TrafficGenError
from vsperf.executor import CommandLog
from vsperf.host.host import Host
from vsperf.host.hosts import RunHosts
from vsperf.registry import Registries
from vsperf.run.plan import plan_tests
from vsperf.run.runner import ReportOptions, Runner
from vsperf.search.measurer import TrialResult
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
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


class RecordingDummy(DummyTrafficGenerator):
    """Records the host it was given and whether the switch runs there, when it starts."""

    NAME = "recording-dummy"
    started: ClassVar[list[tuple[Host, bool]]] = []

    def start(self, ports: Sequence[GenPort]) -> None:
        RecordingDummy.started.append((self.host, self.switch_on_host))
        super().start(ports)


def registries() -> Registries:
    def builtin(regs: Registries) -> None:
        register_builtin(regs)
        regs.trafficgens.register(InterruptedDummy)
        regs.trafficgens.register(BrokenDummy)
        regs.trafficgens.register(RecordingDummy)

    return build_registries(builtin)


def run(tmp_path: Path, gen: str, tests: list[str], *, params: str = ";TRAFFICGEN_PKT_SIZES=(64,128,256)",
        hold: str = "", hosts: Any = None, command_log: CommandLog | None = None,
        held: list[str] | None = None) -> tuple[Any, dict[str, Any]]:
    settings = load_settings(env={}, test_params=f"TRAFFICGEN={gen}{params}")
    regs = registries()
    plan = plan_tests(Catalog.load().select(tests), settings, regs, hold=hold)
    out = tmp_path / "run"
    summary = Runner(plan, registries=regs, settings=settings, results_dir=out, run_id="abc123",
                     command_line=["vsperf"], progress=Progress(),
                     report=ReportOptions.from_settings(settings), hosts=cast(RunHosts | None, hosts),
                     command_log=command_log, hold=held.append if held is not None else None).run()
    return summary, json.loads((out / "results.json").read_text())


@pytest.mark.parametrize("search", ["binary", "ndr_pdr", "mlr"])
def test_a_search_without_an_answer_fails_its_test_and_keeps_the_trials(tmp_path: Path, search: str) -> None:
    # The simulated DUT forwards 1 fps at every size: less than the lowest load a search tries.
    summary, data = run(tmp_path, "dummy", ["phy2phy_tput", "phy2phy_cont"],
                        params=f";TRAFFICGEN_PKT_SIZES=(64,128,256);TRAFFICGEN_SEARCH={search};TRAFFICGEN_DURATION=1;"
                        "TRAFFICGEN_DUMMY_DUT={'capacity_fps': 1};REPORT_FORMATS=[]")
    assert [t.status for t in summary.tests] == ["failed", "passed"]
    tput = data["tests"][0]
    assert tput["status"] == "failed"
    assert tput["error"].startswith("64 B: no ")
    assert "the DUT forwarded" in tput["error"] and "\n" not in tput["error"]
    assert [r["packet_size"] for r in tput["results"]] == [64], "the test stops at the size without an answer"
    assert tput["results"][0]["trials"], "what was measured is written"
    assert any(tput["error"][len("64 B: "):] in a for a in tput["results"][0]["anomalies"])
    assert summary.failed


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


@pytest.mark.parametrize("gen", ["dummy"])
def test_components_name_generator_and_simulated_switch(tmp_path: Path, gen: str) -> None:
    summary, data = run(tmp_path, gen, ["phy2phy_cont"])
    assert not summary.failed
    roles = {c["role"]: c for c in data["tests"][0]["components"]}
    assert roles["trafficgen"]["name"] == "dummy"
    assert "simulated" in roles["trafficgen"]["version"]
    assert roles["vswitch"]["name"] == "simulated"


QUICK = ";TRAFFICGEN_PKT_SIZES=(64,);REPORT_FORMATS=['rst'];COLLECTOR=[]"


class FakeHosts:
    """The run's hosts as the runner and the measurement see them (a simulated DUT: nothing is
    deployed on them)."""

    def __init__(self, dut: Host, trafficgen: Host, *, is_lab: bool) -> None:
        self.dut, self.trafficgen, self.is_lab = dut, trafficgen, is_lab

    def sweep(self) -> None:
        """Nothing killed left anything here."""

    def describe(self) -> list[dict[str, Any]]:
        return [{"name": self.dut.name, "roles": ["DUT"]},
                {"name": self.trafficgen.name, "roles": ["traffic generator"]}]


def _trafficgen(data: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in data["tests"][0]["components"] if c["role"] == "trafficgen")


def test_the_generator_runs_on_the_generator_host_beside_the_switch_or_not(tmp_path: Path) -> None:
    RecordingDummy.started.clear()
    local = Host.probe()
    summary, data = run(tmp_path / "lab", "recording-dummy", ["phy2phy_cont"], params=QUICK,
                        hosts=FakeHosts(local, local, is_lab=True))
    assert not summary.failed and RecordingDummy.started == [(local, True)]  # the lab: the switch is beside it
    assert _trafficgen(data)["details"] == {} and "testbed_hosts" not in data["environment"]
    dut, tgen = Host.probe(name="dut"), Host.probe(name="tgen")
    hosts = FakeHosts(dut, tgen, is_lab=False)
    summary, data = run(tmp_path / "testbed", "recording-dummy", ["phy2phy_cont"], params=QUICK, hosts=hosts)
    assert not summary.failed and RecordingDummy.started[-1] == (tgen, False)  # the switch's CPUs are the DUT host's
    assert _trafficgen(data)["details"] == {"host": "tgen"}  # the report names the generator's host
    assert data["environment"]["testbed_hosts"] == hosts.describe()


def test_with_nothing_deployed_the_generator_gets_a_probe_of_this_machine(tmp_path: Path) -> None:
    RecordingDummy.started.clear()
    summary, _data = run(tmp_path, "recording-dummy", ["phy2phy_cont"], params=QUICK)
    ((host, beside),) = RecordingDummy.started
    assert not summary.failed and host.local and host.journal is None and beside  # it may create nothing


def test_trafficgen_off_holds_with_the_generator_ports_and_sends_nothing(tmp_path: Path) -> None:
    held: list[str] = []
    summary, data = run(tmp_path, "dummy", ["phy2phy_cont"], params=QUICK, hold="off", held=held)
    assert held == ["phy2phy_cont: p2p is deployed; generator ports: none (the DUT is simulated). vsperf waits, "
                    "then tear it down."]
    assert not summary.failed and data["tests"][0]["results"] == []


def test_commands_logged_before_the_run_lead_its_commands_log(tmp_path: Path) -> None:
    commands = CommandLog(None)  # the checks before the run log here, before its directory exists
    commands.record(["ip", "-j", "link", "show"], None)
    run(tmp_path, "dummy", ["phy2phy_cont"], params=QUICK, command_log=commands)
    first = (tmp_path / "run" / "commands.log").read_text().splitlines()[0]
    assert first.endswith(" ip -j link show")

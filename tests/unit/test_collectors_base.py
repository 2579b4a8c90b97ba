"""Collectors around a traffic phase: built from COLLECTOR, and never fatal to a measurement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from settings_util import make_settings

from vsperf.backends import build_registries
from vsperf.catalog import Catalog
from vsperf.cli import main as cli_main
from vsperf.collectors.base import Collector, CollectorTarget, Statistics, build_collectors, collecting, collector_names
from vsperf.errors import UnknownNameError
from vsperf.executor import LocalExecutor
from vsperf.host.workdir import RunContext
from vsperf.run.plan import plan_tests

CTX = RunContext("t", Path("/nonexistent"), Path("/nonexistent"), LocalExecutor())


class Counting(Collector):
    """Counts its phases."""

    NAME = "counting"

    def __init__(self, settings: Any, ctx: RunContext, target: CollectorTarget) -> None:
        super().__init__(settings, ctx, target)
        self.events: list[str] = []

    def start(self) -> None:
        self.events.append("start")

    def stop(self) -> None:
        self.events.append("stop")

    def statistics(self) -> Statistics:
        return {"Counting": {"phases": self.events.count("stop")}}


class Broken(Counting):
    """Cannot start."""

    NAME = "broken"

    def start(self) -> None:
        raise OSError("no such file")


def test_collector_names_accepts_vsperf_spelling() -> None:
    assert collector_names("Pidstat") == ["Pidstat"]
    assert collector_names(["pidstat", "cpu"]) == ["pidstat", "cpu"]
    assert collector_names(None) == []


def _planned_collectors(collector: object) -> tuple[str, ...]:
    settings = make_settings(COLLECTOR=collector, TRAFFICGEN="dummy")
    (pt,) = plan_tests(Catalog.load().select(["phy2phy_tput"]), settings, build_registries())
    return pt.collectors


def test_build_from_the_setting() -> None:
    registries = build_registries()
    assert [e.name for e in registries.collectors] == ["cpu", "ifstats", "pidstat"]
    names = _planned_collectors(["Pidstat", "pidstat", "cpu"])
    assert names == ("pidstat", "cpu")  # the alias and the name run once
    built = build_collectors(names, make_settings(), registries.collectors, CTX, CollectorTarget())
    assert [c.NAME for c in built] == ["pidstat", "cpu"]
    with pytest.raises(UnknownNameError, match=r"unknown collector 'pidstats'.*did you mean 'pidstat'"):
        _planned_collectors("pidstats")


def test_phase_statistics_and_a_collector_that_cannot_start(caplog: pytest.LogCaptureFixture) -> None:
    good, broken = Counting({}, CTX, CollectorTarget()), Broken({}, CTX, CollectorTarget())
    with collecting([broken, good]) as phase:
        assert phase.statistics == {}  # filled when the phase ends
    assert phase.statistics == {"Counting": {"phases": 1}}
    assert good.events == ["start", "stop"]
    assert "collector broken could not start, its statistics are missing: no such file" in caplog.text


def test_collectors_stop_when_the_traffic_fails() -> None:
    good = Counting({}, CTX, CollectorTarget())
    with pytest.raises(RuntimeError, match="generator died"), collecting([good]):
        raise RuntimeError("generator died")
    assert good.events == ["start", "stop"]


def test_an_unknown_collector_stops_the_run_before_it_starts(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from vsperf.cli.main import main

    with pytest.raises(SystemExit) as exc:
        main(["phy2phy_tput", "--trafficgen", "dummy", "--results-dir", str(tmp_path / "r"),
              "--test-params", "COLLECTOR=['pidstatt']"])
    assert exc.value.code == 2
    assert "unknown collector 'pidstatt' (did you mean 'pidstat'?)" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_a_collector_that_reads_only_this_machine_is_refused_on_a_testbed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def with_counting(builtin: Any = None) -> Any:
        regs = build_registries(builtin)
        regs.collectors.register(Counting)  # REMOTE is False: it reads this machine
        return regs

    monkeypatch.setattr(cli_main, "build_registries", with_counting)
    out = tmp_path / "run"
    args = ["phy2phy_tput", "--trafficgen", "vsgen", "--testbed", str(tmp_path / "bed.yaml"), "--results-dir", str(out)]
    with pytest.raises(SystemExit) as exited:
        cli_main.main([*args, "--test-params", "COLLECTOR=['cpu','counting']"])
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 2 and len(err.splitlines()) == 1
    assert "collector counting reads only this machine" in err and "COLLECTOR" in err
    assert not out.exists()  # refused before the testbed is opened or anything deployed

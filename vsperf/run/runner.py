"""Run planned tests: measure each (vsperf.run.measure), write results as they come, report.

Only this module's per-test boundary catches broad exceptions: the error is logged with its
context, the test is marked failed, teardown still runs and the next test starts.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vsperf.config import Settings
from vsperf.deploy.base import Deployment
from vsperf.errors import VsperfError
from vsperf.executor import CommandLog, LocalExecutor
from vsperf.history.hook import RunRecorder
from vsperf.host.facts import collect_environment
from vsperf.host.hosts import RunHosts
from vsperf.host.workdir import RunContext, create_work_dir
from vsperf.registry import Registries
from vsperf.report.formats import report_after_run
from vsperf.results.writer import ResultsWriter
from vsperf.run.measure import Headline, Measurement, measure_test
from vsperf.run.plan import PlannedTest
from vsperf.signals import stop_reason, stop_signals_raise, stops_raised
from vsperf.ui.logsetup import add_file_log
from vsperf.ui.progress import Progress

log = logging.getLogger(__name__)

OVERALL_LOG = "overall.log"
COMMAND_LOG = "commands.log"


@dataclass
class TestOutcome:
    """How one test ended, for the summary, the exit code and xUnit."""

    __test__ = False  # not a pytest test class, despite its name

    name: str
    deployment: str
    status: str  # passed | failed | interrupted
    error: str | None = None
    duration_s: float = 0.0
    headline: list[Headline] = field(default_factory=list)


@dataclass
class RunSummary:
    """What the CLI needs after a run."""

    results_dir: Path
    tests: list[TestOutcome]
    interrupted: bool = False
    report_files: list[Path] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.interrupted or any(t.status != "passed" for t in self.tests)


@dataclass(frozen=True)
class ReportOptions:
    """The report written after the run: REPORT_FORMATS, with plots unless REPORT_PLOTS is off."""

    formats: tuple[str, ...]
    plots: bool

    @classmethod
    def from_settings(cls, settings: Settings) -> ReportOptions:
        return cls(tuple(str(f) for f in settings["REPORT_FORMATS"]), bool(settings["REPORT_PLOTS"]))


class Runner:
    """Runs a plan on the run's hosts and writes everything under one results directory."""

    def __init__(
        self,
        plan: Sequence[PlannedTest],
        *,
        registries: Registries,
        settings: Settings,
        results_dir: Path,
        run_id: str,
        command_line: list[str],
        progress: Progress,
        report: ReportOptions,
        hosts: RunHosts | None = None,
        command_log: CommandLog | None = None,
        hold: Callable[[str], None] | None = None,
        history: RunRecorder | None = None,
        testbed: dict[str, Any] | None = None,
    ) -> None:
        """`settings` are recorded in results.json as they are (the plan's tests carry what they
        run with); `report`: the report written after the run. `hosts`: where the plan deploys
        (opened, and closed, by the caller; None when nothing is deployed), their executors
        logging to `command_log` (written to the run's commands.log from the start of the run).
        `history` records the run into the results store after each test and at the end.
        `hold(message)` waits for the user in --mode trafficgen-off/-pause (the CLI's, never
        input() here); without it those modes do not wait. `testbed`: which testbed the run took
        (of its pool), what it skipped and why (vsperf.pool.claim), kept in results.json."""
        self.plan = list(plan)
        self.hold = hold
        self.registries = registries
        self.settings = settings
        self.results_dir = results_dir
        self.run_id = run_id
        self.command_line = command_line
        self.progress = progress
        self.hosts = hosts
        self.command_log = command_log or CommandLog(None)
        self.report = report
        self.history = history
        self.testbed = testbed

    def _environment(self, executor: LocalExecutor) -> dict[str, Any]:
        """This machine's facts, and each testbed host's when the run has a testbed."""
        environment = collect_environment(executor)
        if self.hosts is not None and not self.hosts.is_lab:
            environment["testbed_hosts"] = self.hosts.describe()
        if self.testbed is not None:
            environment["testbed"] = self.testbed
        return environment

    def run(self) -> RunSummary:
        self.results_dir.mkdir(parents=True, exist_ok=True)
        handler = add_file_log(self.results_dir / OVERALL_LOG)
        work_dir = create_work_dir(self.run_id)
        self.command_log.attach(self.results_dir / COMMAND_LOG)
        executor = LocalExecutor(self.command_log)
        summary = RunSummary(self.results_dir, [])
        try:
            log.info("vsperf run %s: results in %s", self.run_id, self.results_dir)
            if self.hosts is not None:
                self.hosts.sweep()
            writer = ResultsWriter(
                self.results_dir,
                run_id=self.run_id,
                command_line=self.command_line,
                simulated=all(pt.simulated for pt in self.plan),
                environment=self._environment(executor),
                settings=self.settings.as_dict(),
                settings_sources=self.settings.sources(),
            )
            measurement = Measurement(self.registries, self.hosts, RunContext(self.run_id, self.results_dir,
                                                                              work_dir, executor),
                                      writer, self.progress, hold=self._hold)
            with stop_signals_raise():
                before = stops_raised()
                try:
                    for pt in self.plan:
                        summary.tests.append(self._run_test(pt, measurement))
                        self._record()
                    if stops_raised() != before:  # its exception was lost (in a GC callback)
                        summary.interrupted = True
                        log.error("run stopped by a signal; results measured are in %s", self.results_dir)
                except KeyboardInterrupt as exc:
                    summary.interrupted = True
                    log.error("run stopped: %s; results measured so far are in %s", stop_reason(exc), self.results_dir)
            writer.finish_run("interrupted" if summary.interrupted else "finished")
            summary.report_files = self._report(summary)
            self._record()
        finally:
            shutil.rmtree(work_dir, ignore_errors=True)
            logging.getLogger().removeHandler(handler)
            handler.close()
        return summary

    def _record(self) -> None:
        if self.history is not None:
            self.history.record(self.results_dir)  # never fails the run

    def _report(self, summary: RunSummary) -> list[Path]:
        # Never raises: a report bug is logged, a signal or a full disk interrupts the run.
        files, stopped = report_after_run(self.results_dir, self.report.formats, plots=self.report.plots)
        summary.interrupted = summary.interrupted or stopped
        return files

    def _run_test(self, pt: PlannedTest, m: Measurement) -> TestOutcome:
        test = pt.test
        traffic0 = pt.traffic
        index = m.writer.start_test(
            name=test.name,
            description=test.description,
            deployment=test.deployment,
            traffic_type=traffic0.traffic_type,
            bidir=traffic0.bidir,
            frame_modification=test.frame_modification,
            # a --test-params sweep records each element under VSPERF's name for them
            parameters={**test.parameters, **({"TEST_PARAMS": pt.test_params} if pt.test_params else {})},
            components=[],
            headline_metric=pt.kind.headline,
        )
        outcome = TestOutcome(test.name, test.deployment, "passed")
        started = time.monotonic()
        self.progress.test_started(test.name, test.deployment, len(pt.frames))
        try:
            measure_test(pt, m, index, outcome.headline)
        except KeyboardInterrupt as exc:
            outcome.status, outcome.error = "interrupted", str(exc) or "interrupted by the user (Ctrl-C)"
            m.writer.finish_test(index, "interrupted", outcome.error)
            raise
        except Exception as exc:
            outcome.status, outcome.error = "failed", str(exc) or type(exc).__name__
            if isinstance(exc, VsperfError):
                log.error("test %s failed: %s", test.name, exc)
            else:
                log.exception("test %s failed with an internal error", test.name)
            m.writer.finish_test(index, "failed", outcome.error)
        else:
            m.writer.finish_test(index, "passed")
        finally:
            outcome.duration_s = time.monotonic() - started
        return outcome

    def _hold(self, pt: PlannedTest, deployment: Deployment) -> None:
        """--mode trafficgen-off/-pause: say where the generator ports are and wait for the user."""
        ports = "; ".join(f"{p.ifname} in netns {p.netns or '-'} ({p.mac}, {p.ipv4})"
                          for p in deployment.gen_ports) or "none (the DUT is simulated)"
        then = "then tear it down" if pt.hold == "off" else "then send the test's traffic"
        message = (f"{pt.test.name}: {pt.test.deployment} is deployed; generator ports: {ports}. "
                   f"vsperf waits, {then}.")
        log.info("%s", message)
        if self.hold is not None:
            self.hold(message)

"""Writes results.json (and the per-test CSV files) while a run goes on.

results.json is rewritten atomically after every change, so a crash or a Ctrl-C loses
nothing that was measured: the file on disk always holds every frame size finished so far.
A write that fails (a full disk) raises vsperf.outputs.OutputLost: the run stops as
interrupted; the writer then only tries its later writes, and closes results.json in the room
its reserve kept (vsperf.results.reserve), so the file never stays "running".
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vsperf import __version__
from vsperf.errors import ConfigError
from vsperf.outputs import lost
from vsperf.results.atomic import write_text_atomic
from vsperf.results.csvfile import write_test_csv
from vsperf.results.encode import ResultsEncoder
from vsperf.results.load import load_results
from vsperf.results.model import (
    RESULTS_FILENAME,
    SCHEMA_VERSION,
    ComponentInfo,
    FrameSizeResult,
    RunResults,
    TestResult,
    jsonable,
)
from vsperf.results.reserve import SpaceReserve
from vsperf.results.sizes import PacketSize
from vsperf.results.steps import StepRecord
from vsperf.search.outcome import SearchOutcome

log = logging.getLogger(__name__)
RESERVE_NAME = ".results.json.reserve"

FINAL_TEST_STATUSES = ("passed", "failed", "interrupted")
FINAL_RUN_STATUSES = ("finished", "interrupted", "failed")


def utc_now_iso() -> str:
    """The current time as ISO 8601 UTC, to the second (e.g. 2024-05-11T07:36:56+00:00)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class ResultsWriter:
    """Owns results.json of one run; the runner calls it as tests and frame sizes finish."""

    def __init__(
        self,
        results_dir: Path,
        *,
        run_id: str,
        command_line: list[str],
        simulated: bool,
        environment: dict[str, Any],
        settings: dict[str, Any],
        settings_sources: dict[str, str],
        clock: Callable[[], str] = utc_now_iso,
    ) -> None:
        """Create `results_dir` if needed and write results.json at once (status running)."""
        self._dir = results_dir
        self._clock = clock
        self._started: dict[int, float] = {}  # test index -> when it started (monotonic)
        self._lock = threading.Lock()
        self._encoder = ResultsEncoder()
        self._lost: OSError | None = None  # the failed write that stopped the run
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise lost(str(self._dir), exc) from None
        self._reserve = SpaceReserve(self._dir / RESERVE_NAME)
        self._run = RunResults(
            schema_version=SCHEMA_VERSION,
            vsperf_version=__version__,
            run_id=run_id,
            status="running",
            started_at=clock(),
            finished_at=None,
            command_line=tuple(command_line),
            simulated=simulated,
            environment=dict(jsonable(environment)),
            settings=dict(jsonable(settings)),
            settings_sources={str(k): str(v) for k, v in settings_sources.items()},
        )
        self._written = self._run  # the last state results.json holds
        self._write()

    @property
    def path(self) -> Path:
        """The results.json this writer keeps up to date."""
        return self._dir / RESULTS_FILENAME

    @property
    def results(self) -> RunResults:
        """What results.json holds now."""
        return self._run

    def start_test(
        self,
        *,
        name: str,
        description: str,
        deployment: str,
        traffic_type: str,
        bidir: bool,
        frame_modification: str | None,
        parameters: dict[str, Any],
        components: list[ComponentInfo],
        headline_metric: str = "",
    ) -> int:
        """Record a test as running; returns its 0-based index for the other calls."""
        with self._lock:
            index = len(self._run.tests)
            test = TestResult(
                index=index, name=name, description=description, deployment=deployment,
                traffic_type=traffic_type, bidir=bidir, frame_modification=frame_modification,
                components=tuple(components), parameters=dict(jsonable(parameters)),
                status="running", error=None, started_at=self._clock(), finished_at=None,
                headline_metric=headline_metric,
            )
            self._started[index] = time.monotonic()
            self._run = replace(self._run, tests=(*self._run.tests, test))
            self._write()
            return index

    def set_components(self, index: int, components: list[ComponentInfo]) -> None:
        """Replace the components of test `index` (known once its deployment is up)."""
        with self._lock:
            test = replace(self._test(index), components=tuple(components))
            self._put(test)
            self._write()
            if test.results:
                self._write_csv(test)

    def add_frame_size(
        self,
        index: int,
        packet_size: PacketSize,
        outcome: SearchOutcome,
        statistics: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """Record one frame size of test `index`; rewrites results.json and the test's CSV.

        `statistics`: what the collectors measured during the traffic phase, group ->
        statistic -> value (see `FrameSizeResult.statistics`).
        """
        with self._lock:
            test = self._test(index)
            if test.status != "running":
                raise ValueError(f"test {index} ({test.name}) is already {test.status}")
            result = FrameSizeResult.from_outcome(packet_size, outcome, statistics)
            test = replace(test, results=(*test.results, result))
            self._put(test)
            self._write()
            self._write_csv(test)

    def add_step(self, index: int, record: StepRecord) -> None:
        """Record one step of step-driven test `index` (TestSteps); rewrites results.json."""
        with self._lock:
            test = self._test(index)
            self._put(replace(test, steps=(*test.steps, record)))
            self._write()

    def finish_test(self, index: int, status: str, error: str | None = None) -> None:
        """Close test `index` with status passed, failed or interrupted (and why, if not passed)."""
        if status not in FINAL_TEST_STATUSES:
            allowed = ", ".join(FINAL_TEST_STATUSES)
            raise ValueError(f"a finished test's status is one of {allowed}, not {status!r}")
        with self._lock:
            started = self._started.pop(index, None)
            duration = round(time.monotonic() - started, 3) if started is not None else None
            test = replace(self._test(index), status=status, error=error, finished_at=self._clock(),
                           duration_s=duration)
            self._put(test)
            self._write()
            if test.results:
                self._write_csv(test)

    def finish_run(self, status: str) -> None:
        """Close the run (finished, interrupted or failed). A test still running is closed too:
        interrupted when the run was, failed otherwise, with the reason as its error."""
        if status not in FINAL_RUN_STATUSES:
            allowed = ", ".join(FINAL_RUN_STATUSES)
            raise ValueError(f"a finished run's status is one of {allowed}, not {status!r}")
        with self._lock:
            now = self._clock()
            self._run = _closed(self._run, status, now)
            self._reserve.release()  # its room is for this write
            try:
                write_text_atomic(self.path, self._encoder.encode(self._run) + "\n")
                return
            except OSError as exc:
                first = exc
            # A full disk: the state results.json holds, closed, fits in the reserve's room (the
            # frame size being written when the disk filled may not).
            try:
                write_text_atomic(self.path, self._encoder.encode(_closed(self._written, status, now)) + "\n")
                log.error("results.json: the last frame size measured could not be written (%s)", first.strerror)
            except OSError as exc:
                log.error("results.json could not be closed: %s; it holds every frame size measured before "
                          "the disk filled, at status running", exc.strerror or exc)

    def _test(self, index: int) -> TestResult:
        if not 0 <= index < len(self._run.tests):
            raise IndexError(f"no test with index {index} in this run")
        return self._run.tests[index]

    def _put(self, test: TestResult) -> None:
        tests = list(self._run.tests)
        tests[test.index] = test
        self._run = replace(self._run, tests=tuple(tests))

    def _write(self) -> None:
        # Each frame size is encoded once (vsperf.results.encode): the rewrites stay linear.
        text = self._encoder.encode(self._run) + "\n"
        if self._lost is not None:  # the run is stopping already: try, never raise again
            with contextlib.suppress(OSError):
                write_text_atomic(self.path, text)
                self._written = self._run
            return
        try:
            self._reserve.ensure(len(text.encode("utf-8")))
            write_text_atomic(self.path, text)
        except OSError as exc:
            self._lost = exc
            raise lost(str(self.path), exc) from None
        self._written = self._run

    def _write_csv(self, test: TestResult) -> None:
        try:
            write_test_csv(self._dir, self._run, test)
        except OSError as exc:
            if self._lost is None:
                self._lost = exc
                raise lost(f"the CSV file of test {test.name}", exc) from None


def close_abandoned(results_dir: Path, status: str = "interrupted") -> bool:
    """Close a results.json that its run left "running" (a stop signal in the instant between
    its creation and the run's own handling): status `status` and an end time. True when it did.
    A best effort for the CLI's last line of defence: never raises."""
    try:
        run = load_results(results_dir / RESULTS_FILENAME)
        if run.status != "running":
            return False
        write_text_atomic(results_dir / RESULTS_FILENAME,
                          ResultsEncoder().encode(_closed(run, status, utc_now_iso())) + "\n")
    except (ConfigError, OSError):
        return False
    return True


def _closed(run: RunResults, status: str, now: str) -> RunResults:
    """`run` finished with `status` at `now`; a test still running is closed too: interrupted
    when the run was, failed otherwise, with the reason as its error."""
    tests = []
    for test in run.tests:
        if test.status == "running":
            test = replace(
                test,
                status="interrupted" if status == "interrupted" else "failed",
                error=test.error or f"the run ended ({status}) before this test finished",
                finished_at=now,
            )
        tests.append(test)
    return replace(run, status=status, finished_at=now, tests=tuple(tests))

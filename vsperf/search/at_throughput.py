"""The one skeleton of the tests that run at the throughput: latency, recovery, reset, RFC 9004.

Each of them is an `AtThroughputTest`: it checks first that the generator can run its trials
(`capability`, before any trial, the throughput search's included), gets the throughput (given,
configured, or measured now: see `vsperf.search.select`), reports nothing measured when there is
no throughput to run at (`no_rate`), and otherwise hands an `AtThroughput` (the throughput, the
trial log, the anomalies) to its `body`, which runs the test's own trials and builds the outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from vsperf.search.measurer import DutControl, Measurer
from vsperf.search.outcome import SearchOutcome
from vsperf.search.outcome_build import AtThroughput
from vsperf.search.select import KnownThroughput
from vsperf.search.trials import OnTrial
from vsperf.traffic import Traffic

C = TypeVar("C")  # the test's configuration
M = TypeVar("M")  # the measurer with the capability the test needs


def any_measurer(measurer: Measurer) -> Measurer:
    """The `capability` of a test that needs only rate trials: every generator has them."""
    return measurer


@dataclass(frozen=True)
class AtThroughputTest(Generic[C, M]):
    """A test at the throughput, called as
    `test(measurer, traffic, cfg, throughput, on_trial=None, dut=None) -> SearchOutcome`."""

    traffic_type: str
    metric_names: Sequence[str]  # its metrics, all None when it measures nothing
    # the measurer with the trials the test needs; TrafficGenError (missing_capability) otherwise
    capability: Callable[[Measurer], M]
    body: Callable[[AtThroughput, M, C, DutControl | None], SearchOutcome]
    # why nothing is measured when the throughput is 0 (None: the body decides)
    no_rate: str | None = None

    def __call__(
        self,
        measurer: Measurer,
        traffic: Traffic,
        cfg: C,
        throughput: Callable[[], KnownThroughput],
        on_trial: OnTrial | None = None,
        dut: DutControl | None = None,
    ) -> SearchOutcome:
        """Run the test at one frame size (see the module docstring); `dut` is the deployment's
        control of the DUT, for a test that acts on it (reset)."""
        able = self.capability(measurer)
        run = AtThroughput.start(self.traffic_type, self.metric_names, measurer, traffic, throughput, on_trial)
        if self.no_rate is not None and run.known.rate_fps <= 0:
            return run.not_measured(self.no_rate)
        return self.body(run, able, cfg, dut)

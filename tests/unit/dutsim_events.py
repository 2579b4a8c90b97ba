"""A `SimDut` that also answers recovery, reset and address trials, with simple formulas written
independently of `vsperf.trafficgen.dummy.events` (known answers for the searches' tests)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from dutsim import SimDut

from vsperf.errors import TrafficGenError
from vsperf.search.measurer import (
    AddressTrialResult,
    RecoveryTrialResult,
    ResetTrialResult,
    TrialResult,
    delivery_flags,
)
from vsperf.traffic import Traffic


@dataclass
class EventDut(SimDut):
    """SimDut plus: after an overload it drops every frame for `recovery_s`; a reset stops it for
    `reset_s`; it learns at most `table_size` addresses, at most `learn_fps` per second.
    `needs_reset_action`: like a real generator, refuse a reset trial without a reset action."""

    recovery_s: float = 0.0
    reset_s: float = 1.0
    table_size: int = 1000
    learn_fps: float = 100_000.0
    needs_reset_action: bool = False
    resets: int = 0
    forgets: int = 0

    def recovery_trial(
        self, traffic: Traffic, overload_fps: float, overload_s: float, recovery_fps: float, recovery_s: float
    ) -> RecoveryTrialResult:
        overload = self.trial(traffic, overload_fps, overload_s)
        after = self.trial(traffic, recovery_fps, recovery_s)
        stalled = int(min(self.recovery_s, recovery_s) * recovery_fps) if overload.loss_frames else 0
        after = replace(after, rx_frames=max(0, after.rx_frames - stalled))
        return RecoveryTrialResult(
            overload=overload,
            recovery=after,
            last_loss_after_drop_s=min(self.recovery_s, recovery_s) if stalled else 0.0,
            resolution_s=1.0 / recovery_fps,
        )

    def reset_trial(
        self,
        traffic: Traffic,
        rate_fps: float,
        duration_s: float,
        reset_at_s: float,
        reset: Callable[[], None] | None,
    ) -> ResetTrialResult:
        if reset is None and self.needs_reset_action:
            raise TrafficGenError("sim: no way to reset the DUT was given")
        if reset is not None:
            reset()
        self.resets += 1
        stream = self.trial(traffic, rate_fps, duration_s)
        outage_s = min(self.reset_s, duration_s - reset_at_s)
        lost = int(outage_s * stream.actual_tx_rate_fps)
        stream = replace(stream, rx_frames=max(0, stream.rx_frames - lost))
        return ResetTrialResult(
            trial=stream,
            reset_at_s=reset_at_s,
            gap_s=outage_s,
            recovered=reset_at_s + self.reset_s < duration_s,
            resolution_s=1.0 / rate_fps,
        )

    def _phase(self, traffic: Traffic, rate_fps: float, frames: int, rx: int) -> TrialResult:
        line = traffic.line_rate_fps
        sent_rate = min(rate_fps, line)
        if self.generator_max_fps is not None:
            sent_rate = min(sent_rate, self.generator_max_fps)
        return TrialResult(
            kind="rate",
            frame_size_bytes=traffic.frame_size_bytes,
            requested_rate_fps=rate_fps,
            duration_s=frames / rate_fps,
            tx_frames=frames,
            rx_frames=rx,
            actual_tx_rate_fps=sent_rate,
            line_rate_fps=line,
            flags=delivery_flags(rate_fps, sent_rate, frames, rx),
        )

    def address_trial(
        self,
        traffic: Traffic,
        addresses: int,
        learning_rate_fps: float,
        test_rate_fps: float,
        forget: Callable[[], None] | None,
    ) -> AddressTrialResult:
        self.calls.append(("address", learning_rate_fps, float(addresses)))
        if forget is not None:
            forget()
        learning = self._phase(traffic, learning_rate_fps, addresses, addresses)
        fit = min(addresses, self.table_size)
        sent = learning.actual_tx_rate_fps
        learned = fit if sent <= self.learn_fps else int(fit * self.learn_fps / sent)
        test = self._phase(traffic, test_rate_fps, addresses, addresses)
        return AddressTrialResult(
            addresses=addresses, learning=learning, test=test, flooded_frames=addresses - learned
        )


@dataclass
class FakeDutControl:
    """Counts the DUT actions a test asked for."""

    restarts: int = 0
    forgets: int = 0

    def restart(self) -> None:
        self.restarts += 1

    def forget_addresses(self) -> None:
        self.forgets += 1

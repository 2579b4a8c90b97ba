"""RFC 2544 back-to-back frames, with RFC 9004's buffer time.

Binary search on the length of a burst sent at line rate, in frames, for the longest burst the
DUT forwards without losing a frame. The longest burst tried is line rate * `duration_s`
(the first trial; a pass there ends the search and says the DUT absorbed everything tried);
the search stops when the shortest failing and the longest passing burst are at most
`granularity_frames` apart, so the answer is within the granularity below the true length.
A first, short probe burst measures how fast the generator really bursts: when that is below line
rate, the longest burst is `duration_s` at that rate (a generator at 1 % of line rate would
otherwise take 100 x `duration_s` to send it). The whole search runs `repetitions` times (RFC 2544
asks for 50): `b2b_frames` is the average (rounded to a whole frame), with `b2b_frames_min` / `_max`.

RFC 9004: the implied DUT buffer time is `b2b_frames / line_fps` (`b2b_buffer_time_s`); when a
throughput is known (passed in from a throughput test) the corrected buffer time is that times
(1 - throughput / line_fps), since the DUT forwards at its throughput while the burst arrives
(`b2b_corrected_buffer_time_s`, present only then).

A burst the generator could not send at line rate tests less than intended: it is kept, and
the outcome carries an anomaly saying the answer may be too high.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from vsperf.search.config import Back2BackConfig
from vsperf.search.measurer import Measurer, TrialResult
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.search.trials import TRAFFIC_TYPE_UDP, Anomalies, OnTrial, TrialLog, percent_of, trial_totals
from vsperf.traffic import Traffic


@dataclass(frozen=True)
class Back2BackAnswer:
    """The result of one whole back-to-back search (one repetition)."""

    repetition: int
    frames: int  # longest lossless burst found (0: even the shortest tried lost frames)
    best: TrialResult | None  # the lossless burst of that length
    shortest_failure: TrialResult | None  # the shortest burst that lost frames
    max_frames: int  # longest burst tried
    trials: tuple[TrialResult, ...]  # the trials of this repetition

    def as_dict(self) -> dict[str, Any]:
        return {
            "repetition": self.repetition,
            "b2b_frames": self.frames,
            "shortest_failing_frames": self.shortest_failure.tx_frames if self.shortest_failure else None,
            "max_frames": self.max_frames,
            **trial_totals(self.trials),
        }


# The probe burst lasts this long at line rate (at least the granularity, at most the longest burst).
PROBE_DURATION_S = 0.01


def longest_burst_frames(traffic: Traffic, cfg: Back2BackConfig, burst_rate_fps: float | None = None) -> int:
    """Frames of the longest burst tried: `duration_s` at the traffic's aggregate line rate, or
    at `burst_rate_fps` when the generator's bursts are slower than line rate."""
    rate = traffic.line_rate_fps if burst_rate_fps is None else min(burst_rate_fps, traffic.line_rate_fps)
    return max(1, math.floor(rate * cfg.duration_s))


def probe_frames(traffic: Traffic, cfg: Back2BackConfig) -> int:
    """Length of the probe burst that measures how fast the generator really bursts:
    PROBE_DURATION_S at line rate, at most a tenth of the longest burst, at least the granularity."""
    longest = longest_burst_frames(traffic, cfg)
    short = min(math.ceil(traffic.line_rate_fps * PROBE_DURATION_S), longest // 10)
    return min(longest, max(cfg.granularity_frames, short, 1))


def search_back2back_once(
    log: TrialLog,
    traffic: Traffic,
    cfg: Back2BackConfig,
    purpose: str,
    repetition: int = 1,
    *,
    probe: TrialResult | None = None,
) -> Back2BackAnswer:
    """One binary search on the burst length; every burst goes through `log` with `purpose`.

    `probe`, a short burst already sent, sets the longest burst (what the generator can send
    in `duration_s`) and bounds the search like any other burst.
    """
    first = len(log.trials)
    rate = probe.actual_tx_rate_fps if probe is not None and probe.under_delivered else None
    max_frames = longest_burst_frames(traffic, cfg, rate)
    lo, hi = 0, max_frames + 1  # lo: longest lossless burst seen (0 frames trivially); hi: shortest lossy
    best: TrialResult | None = None
    shortest_failure: TrialResult | None = None
    if probe is not None and probe.tx_frames < max_frames:
        if probe.tx_frames > 0 and probe.loss_frames == 0:
            lo, best = probe.tx_frames, probe
        else:
            hi, shortest_failure = probe.tx_frames, probe
    # Start at the longest burst unless the probe already lost frames with a shorter one.
    frames = max_frames if hi > max_frames else (lo + hi) // 2
    while True:
        trial = log.burst(traffic, frames, purpose)
        if trial.tx_frames > 0 and trial.loss_frames == 0:
            lo, best = frames, trial
        else:
            hi, shortest_failure = frames, trial
        if hi - lo <= cfg.granularity_frames or lo == max_frames:
            break
        frames = (lo + hi) // 2
    return Back2BackAnswer(repetition=repetition, frames=lo, best=best, shortest_failure=shortest_failure,
                           max_frames=max_frames, trials=tuple(log.trials[first:]))


def rfc2544_back2back(
    measurer: Measurer, traffic: Traffic, cfg: Back2BackConfig, on_trial: OnTrial | None = None, *,
    throughput_fps: float | None = None,
) -> SearchOutcome:
    """Run the back-to-back search `cfg.repetitions` times and return VSPERF's b2b metrics
    plus RFC 9004's buffer time (corrected with `throughput_fps` when it is given)."""
    if throughput_fps is not None and throughput_fps < 0:
        raise ValueError(f"throughput_fps cannot be negative, got {throughput_fps}")
    log = TrialLog(measurer, on_trial)
    anomalies = Anomalies()
    line = traffic.line_rate_fps
    # A generator slower than line rate would take far longer than `duration_s` to send the
    # longest line-rate burst: a short probe measures its burst rate first.
    probe = log.burst(traffic, probe_frames(traffic, cfg), "probe")
    answers = [
        search_back2back_once(log, traffic, cfg, "search" if rep == 1 else f"repetition {rep}", rep,
                              probe=probe if rep == 1 else None)
        for rep in range(1, cfg.repetitions + 1)
    ]
    counts = [a.frames for a in answers]
    b2b_frames = round(sum(counts) / len(counts))
    passing = [a.best for a in answers if a.best is not None]
    if passing:
        loss_percent = sum(t.loss_percent for t in passing) / len(passing)
        tx_rate_fps = sum(t.actual_tx_rate_fps for t in passing) / len(passing)
    else:
        failures = [a.shortest_failure for a in answers if a.shortest_failure is not None]
        loss_percent = min(t.loss_percent for t in failures)
        tx_rate_fps = sum(t.actual_tx_rate_fps for t in failures) / len(failures)
        anomalies.add(
            f"no burst was lossless, down to {min(t.tx_frames for t in failures)} frames; b2b_frames is 0"
        )
    if any(a.frames == a.max_frames for a in answers):
        anomalies.add(
            f"the DUT forwarded the longest burst tried ({answers[0].max_frames} frames = "
            f"{cfg.duration_s:g} s at the burst rate) without loss: b2b_frames is a lower bound"
        )
    short = [t for t in log.trials if t.under_delivered]
    if short:
        anomalies.add(
            f"generator sent {len(short)} of {len(log.trials)} bursts below line rate (lowest "
            f"{percent_of(min(t.actual_tx_rate_fps for t in short), line):.3f} % of line rate): the DUT's "
            "queue filled more slowly than at line rate, so b2b_frames may be too high"
        )

    buffer_time_s = b2b_frames / line
    metrics: dict[str, MetricValue] = {
        "b2b_frames": b2b_frames,
        "b2b_frames_min": min(counts),
        "b2b_frames_max": max(counts),
        "b2b_frame_loss_percent": loss_percent,
        "tx_rate_fps": tx_rate_fps,
        "tx_rate_percent": percent_of(tx_rate_fps, line),
        "b2b_buffer_time_s": buffer_time_s,
    }
    if throughput_fps is not None:
        metrics["b2b_corrected_buffer_time_s"] = buffer_time_s * max(0.0, 1.0 - throughput_fps / line)
    metrics["type"] = "rfc2544_back2back"
    metrics["packet_size"] = traffic.frame_size_bytes
    metrics["traffic_type"] = TRAFFIC_TYPE_UDP
    details: dict[str, Any] = {
        "search": {
            "algorithm": "binary",
            **asdict(cfg),
            "line_rate_fps": line,
            "max_frames": answers[0].max_frames,
            "throughput_fps": throughput_fps,
        },
        "repetitions": [a.as_dict() for a in answers],
    }
    return log.outcome(metrics, details, anomalies.as_tuple())

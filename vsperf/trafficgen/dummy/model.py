"""A simulated device under test: the model behind the `dummy` traffic generator.

Nothing here sends a frame. Every number a trial returns is computed from the model below, so
the searches can be exercised (and the report rendered) on any machine, with known answers:

* Forwarding capacity `capacity_fps` is aggregate over every port and direction, the same
  aggregate as `throughput_rx_fps`. It is one number, or points (frame size, fps) interpolated
  linearly between the given sizes and clamped (held constant) outside them.
* The model's ports run at `port_speed_gbps` when it is set, else at the traffic's link speed
  (10 Gb/s by default). Offered load never exceeds their line rate: a request above it is sent at
  line rate and the trial is flagged as under-delivered, like a real generator would be.
* Rate trials are steady state (the queue's transient of `buffer_frames` frames is ignored):
  - "cliff": no loss at or below capacity; above it the DUT forwards exactly the capacity
    (tail drop), loss ratio = 1 - capacity / offered.
  - "gradual": no loss at or below capacity; above it the loss ratio grows smoothly from zero,
    loss ratio = (1 - capacity / offered) ** 2 (the cliff's ratio squared: it starts with zero
    slope at the capacity and still tends to 1 at infinite load). The highest rate losing at
    most a ratio p is then capacity / (1 - sqrt(p)).
* Bursts at line rate fill the aggregate queue of `buffer_frames` at (line - capacity) frames/s:
  a burst of L frames is lossless while L <= buffer_frames / (1 - capacity / line); a longer
  burst loses the frames that find the queue full, L * (1 - capacity / line) - buffer_frames.
* `noise` varies the capacity of each trial within +-noise (relative), drawn from a generator
  seeded with (seed, trial index): the same seed gives the same sequence of trials.
  `noise_shape` "uniform" draws it uniformly; "gaussian" from a normal distribution of standard
  deviation noise / 3, drawn again outside +-noise (most trials near the nominal capacity, a few
  at the band's edges).
* Stalls (a DUT whose loss grows with the trial's length, as a switch that stops forwarding now
  and then): `stall_per_s` stalls per second on average (Poisson), each `stall_s` long, in which
  nothing is forwarded. A stall loses what the queue cannot hold: offered x stall_s - buffer_frames
  below capacity, what the DUT would have forwarded above it. Rate trials only; the same seed
  gives the same stalls.
* Latency is SIMULATED, not measured: a fixed base latency plus queueing. Below capacity the
  queue behaves like M/M/1 with utilisation rho = offered / capacity: mean queue rho / (1 - rho)
  frames, the largest queue over n frames ln(n) / ln(1 / rho) frames, both capped at the buffer;
  at or above capacity the queue is full. A queued frame waits 1 / capacity seconds per frame
  ahead of it. The minimum is the base latency (a frame that found the queue empty).
* A frame mix, the latency distribution and a cold start: see `vsperf.trafficgen.dummy.extras`.
* Events (simulated in `vsperf.trafficgen.dummy.events`): after an overload the DUT drops every frame for
  `recovery_s` seconds (0: a tail-drop queue recovers at once); a reset stops forwarding for
  `reset_s` seconds; the MAC table holds `mac_table_size` addresses and learns at most
  `learning_rate_fps` new addresses per second (faster learning frames are learned in proportion).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from vsperf.errors import ConfigError
from vsperf.search.measurer import LatencyStats, TrialResult
from vsperf.traffic import Traffic
from vsperf.trafficgen.dummy.extras import cold_start_lost, sizes_received, warm_seconds, with_distribution
from vsperf.units import line_rate_fps

LossModel = Literal["cliff", "gradual"]
NoiseShape = Literal["uniform", "gaussian"]
CapacityPoints = tuple[tuple[int, float], ...]

MODEL_VERSION = 1


@dataclass(frozen=True)
class DutModel:
    """Parameters of a simulated DUT: the TRAFFICGEN_DUMMY_DUT setting (defaults in conf/, see
    `model_from_settings`)."""

    # Aggregate forwarding capacity, frames/s: one number for every frame size, or
    # ((frame_size_bytes, fps), ...) sorted by size, interpolated linearly and clamped outside.
    capacity_fps: float | CapacityPoints
    buffer_frames: int  # aggregate queue depth, frames
    port_speed_gbps: float | None  # speed of each port, Gb/s; None: the traffic's link speed
    noise: float  # relative per-trial variation of the capacity, 0 <= noise < 1
    seed: int  # seed of the per-trial noise
    loss_model: LossModel  # behaviour above capacity (see the module docstring)
    base_latency_ns: float  # latency of a frame that finds the queue empty
    recovery_s: float  # after an overload, seconds during which every frame is dropped
    reset_s: float  # seconds a reset stops forwarding
    mac_table_size: int  # MAC addresses the switch can hold
    learning_rate_fps: float  # new source addresses learned per second
    noise_shape: NoiseShape  # distribution of the per-trial capacity noise
    stall_per_s: float  # forwarding stalls per second of a rate trial (Poisson mean)
    stall_s: float  # length of one stall, seconds
    cold_start_s: float = 0.0  # seconds of traffic it forwards at half capacity first (0: none)

    def __post_init__(self) -> None:
        if isinstance(self.capacity_fps, tuple):
            if not self.capacity_fps:
                raise ValueError("capacity_fps needs at least one (frame size, fps) point")
            sizes = [size for size, _ in self.capacity_fps]
            if sizes != sorted(set(sizes)):
                raise ValueError("capacity_fps points must have distinct frame sizes in increasing order")
            if any(size <= 0 or fps <= 0 for size, fps in self.capacity_fps):
                raise ValueError("capacity_fps points need positive frame sizes and rates")
        elif not self.capacity_fps > 0:
            raise ValueError(f"capacity_fps must be positive, got {self.capacity_fps}")
        if self.buffer_frames < 0:
            raise ValueError(f"buffer_frames cannot be negative, got {self.buffer_frames}")
        if self.port_speed_gbps is not None and not self.port_speed_gbps > 0:
            raise ValueError(f"port_speed_gbps must be positive, got {self.port_speed_gbps}")
        if not 0 <= self.noise < 1:
            raise ValueError(f"noise must be in [0, 1), got {self.noise}")
        if self.loss_model not in ("cliff", "gradual"):
            raise ValueError(f"loss_model must be 'cliff' or 'gradual', got {self.loss_model!r}")
        if self.base_latency_ns < 0:
            raise ValueError(f"base_latency_ns cannot be negative, got {self.base_latency_ns}")
        if self.recovery_s < 0 or self.reset_s < 0:
            raise ValueError(f"recovery_s and reset_s cannot be negative, got {self.recovery_s}, {self.reset_s}")
        if self.mac_table_size < 0:
            raise ValueError(f"mac_table_size cannot be negative, got {self.mac_table_size}")
        if self.cold_start_s < 0:
            raise ValueError(f"cold_start_s cannot be negative, got {self.cold_start_s}")
        if not self.learning_rate_fps > 0:
            raise ValueError(f"learning_rate_fps must be positive, got {self.learning_rate_fps}")
        if self.noise_shape not in ("uniform", "gaussian"):
            raise ValueError(f"noise_shape must be 'uniform' or 'gaussian', got {self.noise_shape!r}")
        if self.stall_per_s < 0 or self.stall_s < 0:
            raise ValueError(f"stall_per_s and stall_s cannot be negative, got {self.stall_per_s}, {self.stall_s}")


def capacity_at_fps(model: DutModel, frame_size_bytes: float) -> float:
    """Nominal (noise-free) aggregate capacity at a frame size (a mix: at its mean size)."""
    if not isinstance(model.capacity_fps, tuple):
        return float(model.capacity_fps)
    points = model.capacity_fps
    if frame_size_bytes <= points[0][0]:
        return points[0][1]
    for (size_a, fps_a), (size_b, fps_b) in itertools.pairwise(points):
        if frame_size_bytes <= size_b:
            return fps_a + (fps_b - fps_a) * (frame_size_bytes - size_a) / (size_b - size_a)
    return points[-1][1]


def port_line_rate_fps(model: DutModel, traffic: Traffic) -> float:
    """Aggregate line rate of the model's ports for `traffic` (every transmitting port)."""
    speed_bps = traffic.link_speed_bps if model.port_speed_gbps is None else model.port_speed_gbps * 1e9
    return line_rate_fps(traffic.mean_frame_bytes, speed_bps) * traffic.tx_ports


def noise_factor(model: DutModel, trial_index: int) -> float:
    """Multiplier of the capacity in trial number `trial_index` (1.0 without noise)."""
    if model.noise == 0:
        return 1.0
    # A string seed hashes with SHA-512: the same on every run and Python process.
    draw = random.Random(f"{model.seed}/{trial_index}")
    if model.noise_shape == "uniform":
        return 1.0 + model.noise * draw.uniform(-1.0, 1.0)
    while abs(deviation := draw.gauss(0.0, 1.0 / 3.0)) > 1.0:
        pass  # beyond 3 sigma (0.27 % of draws): drawn again, the band stays +-noise
    return 1.0 + model.noise * deviation


def stall_count(model: DutModel, duration_s: float, trial_index: int) -> int:
    """Stalls in a rate trial of `duration_s` (Poisson with mean stall_per_s x duration_s)."""
    mean = model.stall_per_s * duration_s
    if mean <= 0 or model.stall_s <= 0:
        return 0
    draw = random.Random(f"{model.seed}/{trial_index}/stall")
    count, arrival = 0, draw.expovariate(1.0)
    while arrival < mean:
        count, arrival = count + 1, arrival + draw.expovariate(1.0)
    return count


def loss_ratio(model: DutModel, offered_fps: float, capacity_fps: float) -> float:
    """Steady-state fraction of offered frames the DUT drops."""
    if offered_fps <= capacity_fps:
        return 0.0
    cliff = 1.0 - capacity_fps / offered_fps
    return cliff if model.loss_model == "cliff" else cliff * cliff


def max_rate_for_loss_fps(model: DutModel, capacity_fps: float, loss_ratio_max: float) -> float:
    """Highest offered rate whose loss ratio stays within `loss_ratio_max` (inverse of `loss_ratio`)."""
    if not 0 <= loss_ratio_max < 1:
        raise ValueError(f"loss ratio must be in [0, 1), got {loss_ratio_max}")
    if model.loss_model == "cliff":
        return capacity_fps / (1.0 - loss_ratio_max)
    return capacity_fps / (1.0 - math.sqrt(loss_ratio_max))


def lossless_burst_frames(model: DutModel, capacity_fps: float, line_fps: float) -> float:
    """Longest lossless burst at line rate, frames (infinite when the DUT keeps up with line rate)."""
    if capacity_fps >= line_fps:
        return math.inf
    return model.buffer_frames / (1.0 - capacity_fps / line_fps)


def burst_lost_frames(model: DutModel, frames: int, capacity_fps: float, line_fps: float) -> int:
    """Frames of a line-rate burst that find the queue full."""
    if capacity_fps >= line_fps:
        return 0
    excess = frames * (1.0 - capacity_fps / line_fps) - model.buffer_frames
    # A tiny positive excess is still a dropped frame; float noise below 1e-9 is not.
    return min(frames, math.ceil(excess - 1e-9)) if excess > 1e-9 else 0


def rate_latency(model: DutModel, offered_fps: float, capacity_fps: float, frames: int) -> LatencyStats:
    """Simulated latency of a rate trial (see the module docstring)."""
    per_frame_ns = 1e9 / capacity_fps
    rho = offered_fps / capacity_fps
    if rho >= 1.0:
        mean_queue = max_queue = float(model.buffer_frames)
    else:
        mean_queue = min(float(model.buffer_frames), rho / (1.0 - rho))
        largest = math.log(max(frames, 2)) / math.log(1.0 / rho) if rho > 0 else 0.0
        max_queue = min(float(model.buffer_frames), max(mean_queue, largest))
    base = model.base_latency_ns
    return LatencyStats(
        min_ns=base,
        avg_ns=base + mean_queue * per_frame_ns,
        max_ns=base + max_queue * per_frame_ns,
        samples=frames,
    )


def burst_latency(model: DutModel, frames: int, capacity_fps: float, line_fps: float) -> LatencyStats:
    """Simulated latency of a burst: the queue grows linearly to its peak, then the burst ends."""
    per_frame_ns = 1e9 / capacity_fps
    growth = max(0.0, 1.0 - capacity_fps / line_fps)
    peak_queue = min(float(model.buffer_frames), frames * growth)
    base = model.base_latency_ns
    return LatencyStats(
        min_ns=base,
        avg_ns=base + peak_queue / 2 * per_frame_ns,
        max_ns=base + peak_queue * per_frame_ns,
        samples=frames,
    )


@dataclass(frozen=True)
class Load:
    """A rate offered to the model in one trial (see `offered_load`)."""

    line_fps: float  # aggregate line rate of the model's ports
    offered_fps: float  # the rate asked for, at most the line rate
    capacity_fps: float  # what the DUT forwards in this trial (its noise included)

    def lost_frames(self, model: DutModel, frames: int, stalls: int = 0) -> int:
        """Frames of `frames` sent at this load that the DUT drops in steady state, and in
        `stalls` stalls (see the module docstring)."""
        ratio = loss_ratio(model, self.offered_fps, self.capacity_fps)
        lost = math.ceil(frames * ratio) if ratio > 0 else 0
        if stalls:
            if self.offered_fps <= self.capacity_fps:
                per_stall = max(0.0, self.offered_fps * model.stall_s - model.buffer_frames)
            else:
                per_stall = self.capacity_fps * model.stall_s
            lost += math.ceil(stalls * per_stall)
        return min(frames, lost)


def offered_load(model: DutModel, traffic: Traffic, rate_fps: float, trial_index: int) -> Load:
    """`traffic` sent at aggregate `rate_fps` in trial number `trial_index`."""
    line = port_line_rate_fps(model, traffic)
    capacity = capacity_at_fps(model, traffic.mean_frame_bytes) * noise_factor(model, trial_index)
    return Load(line_fps=line, offered_fps=min(rate_fps, line), capacity_fps=capacity)


def simulate_rate_trial(
    model: DutModel, traffic: Traffic, rate_fps: float, duration_s: float, trial_index: int
) -> TrialResult:
    """What a trial at aggregate `rate_fps` for `duration_s` measures on the model."""
    if rate_fps <= 0 or duration_s <= 0:
        raise ValueError(f"a trial needs a positive rate and duration, got {rate_fps} fps, {duration_s} s")
    load = offered_load(model, traffic, rate_fps, trial_index)
    tx = round(load.offered_fps * duration_s)
    lost = load.lost_frames(model, tx, stall_count(model, duration_s, trial_index))
    lost += cold_start_lost(model.cold_start_s, warm_seconds(traffic), load.offered_fps, load.capacity_fps,
                            model.buffer_frames, tx - lost)
    rx = tx - lost
    latency = rate_latency(model, load.offered_fps, load.capacity_fps, rx)
    if traffic.latency_histogram:
        latency = with_distribution(latency, rx)
    warm = traffic.warm_start.frames(load.offered_fps) if traffic.warm_start else 0
    return TrialResult.measured(
        "rate", traffic, rate_fps, duration_s, tx, rx, load.offered_fps, latency=latency, line_rate_fps=load.line_fps,
        warm_frames=warm, rx_frames_by_size=sizes_received(traffic, rx),
    )


def simulate_burst(model: DutModel, traffic: Traffic, frames: int, trial_index: int) -> TrialResult:
    """What a burst of `frames` frames at line rate measures on the model."""
    if frames <= 0:
        raise ValueError(f"a burst needs at least one frame, got {frames}")
    line = port_line_rate_fps(model, traffic)
    capacity = capacity_at_fps(model, traffic.mean_frame_bytes) * noise_factor(model, trial_index)
    lost = burst_lost_frames(model, frames, capacity, line)
    latency = burst_latency(model, frames, capacity, line)
    if traffic.latency_histogram:
        latency = with_distribution(latency, frames - lost)
    warm = traffic.warm_start.frames(line) if traffic.warm_start else 0
    return TrialResult.measured(
        "burst", traffic, line, frames / line, frames, frames - lost, line, latency=latency, line_rate_fps=line,
        warm_frames=warm, rx_frames_by_size=sizes_received(traffic, frames - lost),
    )


def throughput_truth_fps(model: DutModel, traffic: Traffic, loss_rate_percent: float = 0.0) -> float:
    """The noise-free answer of an RFC 2544 throughput search: highest offered rate (capped at
    the line rate) that loses at most `loss_rate_percent`."""
    capacity = capacity_at_fps(model, traffic.mean_frame_bytes)
    rate = max_rate_for_loss_fps(model, capacity, loss_rate_percent / 100.0)
    return min(rate, port_line_rate_fps(model, traffic))


def back2back_truth_frames(model: DutModel, traffic: Traffic) -> float:
    """The noise-free longest lossless burst at line rate, frames (may be infinite)."""
    capacity = capacity_at_fps(model, traffic.mean_frame_bytes)
    return lossless_burst_frames(model, capacity, port_line_rate_fps(model, traffic))


def model_from_settings(data: Mapping[str, Any]) -> DutModel:
    """The model of the TRAFFICGEN_DUMMY_DUT setting (validated and complete: see conf/)."""
    capacity = data["capacity_fps"]
    try:
        return DutModel(
            capacity_fps=(
                tuple(sorted((int(size), float(fps)) for size, fps in capacity.items()))
                if isinstance(capacity, Mapping) else float(capacity)
            ),
            buffer_frames=int(data["buffer_frames"]),
            port_speed_gbps=None if data["port_speed_gbps"] is None else float(data["port_speed_gbps"]),
            noise=float(data["noise"]),
            seed=int(data["seed"]),
            loss_model=data["loss_model"],
            base_latency_ns=float(data["base_latency_ns"]),
            recovery_s=float(data["recovery_s"]),
            reset_s=float(data["reset_s"]),
            mac_table_size=int(data["mac_table_size"]),
            learning_rate_fps=float(data["learning_rate_fps"]),
            noise_shape=data["noise_shape"],
            stall_per_s=float(data["stall_per_s"]),
            stall_s=float(data["stall_s"]),
            cold_start_s=float(data.get("cold_start_s", 0.0)),
        )
    except ValueError as exc:
        raise ConfigError(f"TRAFFICGEN_DUMMY_DUT: {exc}") from exc

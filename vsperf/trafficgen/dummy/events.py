"""Simulated recovery, reset and MAC-learning trials on the DUT model (`vsperf.trafficgen.dummy.model`).

The `dummy` generator answers the optional measurer capabilities (RecoveryMeasurer,
ResetMeasurer, AddressMeasurer) with these functions. Frames are sent evenly, frame k at
k / rate seconds, so every time below is exact to one frame interval (the `resolution_s`):

* Recovery: the overload phase is an ordinary rate trial. If it lost frames (the queue was full
  when the rate dropped), every frame sent within `recovery_s` of the drop is lost, then the
  steady-state loss of the lower rate applies. The last lost frame dates the recovery time.
* Reset: every frame sent within `reset_s` seconds from the reset is lost; the gap at the receiver
  runs from the last frame before the reset to the first one after it (or to the stream's end).
* Addresses: the table holds `mac_table_size` addresses and learns `learning_rate_fps` new ones
  per second; learning frames sent faster are learned in proportion. Every test frame to an
  address not learned is flooded.
"""

from __future__ import annotations

import math
from dataclasses import replace

from vsperf.search.measurer import (
    AddressTrialResult,
    DutAction,
    RecoveryTrialResult,
    ResetTrialResult,
    TrialResult,
)
from vsperf.traffic import Traffic
from vsperf.trafficgen.dummy.model import DutModel, offered_load, rate_latency, simulate_rate_trial

_FLOAT_SLACK = 1e-9  # a frame exactly on a boundary belongs to the later interval


def _frames_before(t_s: float, rate_fps: float) -> int:
    """Frames sent at times k / rate < t_s (k = 0, 1, ...)."""
    return max(0, math.ceil(t_s * rate_fps - _FLOAT_SLACK))


def _rate_result(
    traffic: Traffic, requested_fps: float, offered_fps: float, duration_s: float, tx: int, rx: int, line: float
) -> TrialResult:
    return TrialResult.measured("rate", traffic, requested_fps, duration_s, tx, rx, offered_fps, line_rate_fps=line)


def _before_trial(ok: bool, needs: str, got: str, act_on_dut: DutAction | None) -> None:
    """What a real generator does before a reset or address trial: refuse what it cannot send (a
    ValueError, the generator's TrafficGenError), then act on the DUT when it is given the means."""
    if not ok:
        raise ValueError(f"{needs}, got {got}")
    if act_on_dut is not None:
        act_on_dut()


def simulate_recovery_trial(
    model: DutModel,
    traffic: Traffic,
    overload_fps: float,
    overload_s: float,
    recovery_fps: float,
    recovery_s: float,
    trial_index: int,
) -> RecoveryTrialResult:
    """An overload phase, then `recovery_s` at `recovery_fps` (see the module docstring)."""
    if recovery_fps <= 0 or recovery_s <= 0:
        raise ValueError(f"the recovery phase needs a positive rate and duration, got {recovery_fps}, {recovery_s}")
    overload = simulate_rate_trial(model, traffic, overload_fps, overload_s, trial_index)
    load = offered_load(model, traffic, recovery_fps, trial_index)
    offered = load.offered_fps
    tx = round(offered * recovery_s)
    stall_s = min(model.recovery_s, recovery_s) if overload.loss_frames > 0 else 0.0
    lost_stall = min(tx, _frames_before(stall_s, offered))
    lost_rest = load.lost_frames(model, tx - lost_stall)
    if lost_rest > 0:
        last_loss_s = (tx - 1) / offered  # steady loss: the last frames are lost too
    elif lost_stall > 0:
        last_loss_s = (lost_stall - 1) / offered
    else:
        last_loss_s = 0.0
    recovery = _rate_result(traffic, recovery_fps, offered, recovery_s, tx, tx - lost_stall - lost_rest, load.line_fps)
    recovery = replace(recovery, latency=rate_latency(model, offered, load.capacity_fps, recovery.rx_frames))
    return RecoveryTrialResult(
        overload=overload, recovery=recovery, last_loss_after_drop_s=last_loss_s, resolution_s=1.0 / offered
    )


def simulate_reset_trial(
    model: DutModel,
    traffic: Traffic,
    rate_fps: float,
    duration_s: float,
    reset_at_s: float,
    trial_index: int,
    reset: DutAction | None = None,
) -> ResetTrialResult:
    """A stream during which the DUT stops forwarding for `reset_s` from `reset_at_s`; `reset`,
    when given, is called as a real generator would (the model itself does the reset)."""
    _before_trial(
        rate_fps > 0 and duration_s > 0 and 0 <= reset_at_s < duration_s,
        "a reset trial needs a positive rate and duration and a reset inside the stream",
        f"{rate_fps} fps, {duration_s} s, reset at {reset_at_s} s",
        reset,
    )
    load = offered_load(model, traffic, rate_fps, trial_index)
    offered = load.offered_fps
    tx = round(offered * duration_s)
    first_lost = min(tx, _frames_before(reset_at_s, offered))
    first_after = _frames_before(reset_at_s + model.reset_s, offered)
    lost_reset = max(0, min(tx, first_after) - first_lost)
    kept = tx - lost_reset
    lost_rest = load.lost_frames(model, kept)
    recovered = first_after < tx
    last_before_s = (first_lost - 1) / offered if first_lost > 0 else 0.0
    first_after_s = first_after / offered if recovered else duration_s
    trial = _rate_result(traffic, rate_fps, offered, duration_s, tx, kept - lost_rest, load.line_fps)
    return ResetTrialResult(
        trial=trial,
        reset_at_s=reset_at_s,
        gap_s=max(first_after_s - last_before_s, 1.0 / offered),
        recovered=recovered,
        resolution_s=1.0 / offered,
    )


def learned_addresses(model: DutModel, addresses: int, learning_fps: float) -> int:
    """Addresses the model learns from one learning frame each, sent at `learning_fps`."""
    fit = min(addresses, model.mac_table_size)
    if learning_fps <= model.learning_rate_fps:
        return fit
    return math.floor(fit * model.learning_rate_fps / learning_fps)


def simulate_address_trial(
    model: DutModel,
    traffic: Traffic,
    addresses: int,
    learning_rate_fps: float,
    test_rate_fps: float,
    trial_index: int,
    forget: DutAction | None = None,
) -> AddressTrialResult:
    """RFC 2889 learning and test phases on a model whose table starts empty (`forget`, when
    given, is called first, as a real generator would)."""
    _before_trial(
        addresses >= 1 and learning_rate_fps > 0 and test_rate_fps > 0,
        "an address trial needs >= 1 address and positive rates",
        f"{addresses}, {learning_rate_fps} fps, {test_rate_fps} fps",
        forget,
    )
    test_load = offered_load(model, traffic, test_rate_fps, trial_index)
    line = test_load.line_fps
    learn_fps = min(learning_rate_fps, line)
    learning = _rate_result(
        traffic, learning_rate_fps, learn_fps, addresses / learning_rate_fps, addresses, addresses, line
    )
    learned = learned_addresses(model, addresses, learn_fps)
    lost = test_load.lost_frames(model, addresses)
    test = _rate_result(
        traffic, test_rate_fps, test_load.offered_fps, addresses / test_rate_fps, addresses, addresses - lost, line
    )
    return AddressTrialResult(
        addresses=addresses,
        learning=learning,
        test=test,
        flooded_frames=min(addresses - learned, addresses - lost),
    )

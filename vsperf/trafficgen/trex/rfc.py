"""The trials RFC 2544's recovery and reset tests and RFC 2889's address tests need, with TRex.

TRex has no per-frame receive times; what it has is exact per-stream counters, streams chained
without a pause, and counters that can be sampled while a trial runs. So:

- recovery (RFC 2544 26.5): each direction is one stream at the overload rate followed, without
  a pause (TRex's `next`), by the lower rate cut into short slices, each a stream of its own
  with its own counters. A slice that lost frames holds lost frames: the last such slice's end,
  after the drop, is the recovery time, dated to a slice (`resolution_s`).
- reset (RFC 2544 26.6, RFC 6201's timestamp method): a constant stream during which vsperf
  calls the DUT's restart; the receive counters sampled every ~20 ms date the silence at the
  receivers: between the last sample that saw frames arrive before it and the first after it
  (`resolution_s`: half the span those samples leave open).
- addresses (RFC 2889 5.7, 5.8): vsgen's three phases on two ports
  (vsperf.trafficgen.vsgen.addresses): learning frames from N source MACs, a flood check, a test
  to the N addresses, each phase a stream counting its frames exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from vsperf.search.measurer import AddressTrialResult, RecoveryTrialResult, ResetTrialResult, TrialResult
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import Direction
from vsperf.trafficgen.trex.protocol import RxSamples, StreamSpec, TrialCounts
from vsperf.trafficgen.trex.results import START_SLACK_S, trial_result
from vsperf.trafficgen.trex.streams import TrialPlan, rate_plan
from vsperf.trafficgen.vsgen.addresses import address_mac, range_base

SLICE_S = 0.1  # a recovery slice: the resolution of the recovery time
MAX_SLICES = 200  # per overload stream: longer recoveries get longer slices
MAX_PACKET_GROUPS = 1000  # TRex counts about this many packet groups (a mix's sizes each take their own)
TRAILING_SAMPLES = 3  # a silence up to the last sample must last longer than this many sample intervals


# --- recovery -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecoveryPlan:
    """Per direction: the overload stream, then `slices` streams of `slice_s` at the lower rate."""

    plan: TrialPlan
    overload_ids: tuple[int, ...]
    slice_ids: tuple[tuple[int, ...], ...]  # per overload stream (direction, or size of a mix), in sending order
    slice_s: float
    overload_s: float


def recovery_plan(traffic: Traffic, dirs: Sequence[Direction], ports: Sequence[int], overload_fps: float,
                  overload_s: float, recovery_fps: float, recovery_s: float) -> RecoveryPlan:
    """The chained streams of a recovery trial (see the module doc)."""
    overload = rate_plan(traffic, dirs, ports, overload_fps, overload_s, latency_pps=0)
    slices = max(1, min(MAX_SLICES, MAX_PACKET_GROUPS // len(overload.streams) - 1, round(recovery_s / SLICE_S)))
    slice_s = recovery_s / slices
    slow_down = recovery_fps / overload_fps
    streams: list[StreamSpec] = []
    overload_ids, slice_ids = [], []
    slices_s = 0.0
    for index, first in enumerate(overload.streams):  # one per direction, or per size of a mix and direction
        base = 1 + index * (slices + 1)
        ids = tuple(range(base + 1, base + 1 + slices))
        pps = first.pps * slow_down
        slice_frames = max(1, round(pps * slice_s))
        slices_s = max(slices_s, slices * slice_frames / pps)
        streams.append(replace(first, pg_id=base, next_pg_id=ids[0]))
        for k, pg_id in enumerate(ids):
            streams.append(replace(first, pg_id=pg_id, frames=slice_frames, pps=pps, self_start=False,
                                   next_pg_id=ids[k + 1] if k + 1 < len(ids) else None))
        overload_ids.append(base)
        slice_ids.append(ids)
    planned_s = overload.planned_s + slices_s
    return RecoveryPlan(TrialPlan(tuple(streams), planned_s), tuple(overload_ids), tuple(slice_ids), slice_s,
                        overload.planned_s)


def recovery_result(traffic: Traffic, rp: RecoveryPlan, counts: TrialCounts, overload_fps: float, overload_s: float,
                    recovery_fps: float, recovery_s: float) -> RecoveryTrialResult:
    """The recovery trial's phases and the end of its last slice that lost frames, after the drop."""
    by_id = {s.pg_id: s for s in counts.streams}
    # A port that took longer than planned sent both phases slower (TRex never drops a frame it is late with).
    fits = {f.port: f for f in counts.fits}
    sending_s = max((f.sending_s for f in fits.values()), default=0.0)
    pace = min(1.0, rp.plan.planned_s / max(rp.plan.planned_s, sending_s - START_SLACK_S))

    def phase(ids: Sequence[int], requested_fps: float, duration_s: float) -> TrialResult:
        tx = sum(by_id[i].tx_frames for i in ids if i in by_id)
        rx = sum(by_id[i].rx_frames for i in ids if i in by_id)
        planned = sum(s.frames for s in rp.plan.streams if s.pg_id in ids)
        return TrialResult.measured("rate", traffic, requested_fps, duration_s, tx, rx,
                                    requested_fps * pace * (tx / planned if planned else 0.0), sent_short=tx < planned)

    last_loss_s = 0.0
    for ids in rp.slice_ids:
        lossy = [k for k, i in enumerate(ids) if i in by_id and by_id[i].rx_frames < by_id[i].tx_frames]
        if lossy:
            last_loss_s = max(last_loss_s, (lossy[-1] + 1) * rp.slice_s)
    return RecoveryTrialResult(
        overload=phase(rp.overload_ids, overload_fps, overload_s),
        recovery=phase([i for ids in rp.slice_ids for i in ids], recovery_fps, recovery_s),
        last_loss_after_drop_s=last_loss_s, resolution_s=rp.slice_s,
    )


# --- reset ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Silence:
    """The longest time a receiving port saw no frame while the trial sent."""

    gap_s: float  # estimated: the middle of what the samples leave open
    resolution_s: float  # half the span the samples leave open
    recovered: bool  # frames arrived again before the trial ended


def longest_silence(samples: Sequence[RxSamples]) -> Silence:
    """From the receive counters sampled during the trial (see the module doc): the longest time
    between two samples that saw new frames, after the first frame arrived. A silence that lasts
    to the last sample (more than TRAILING_SAMPLES intervals: not just the end of the traffic)
    means frames never came back."""
    best = Silence(0.0, 0.0, True)
    for port in samples:
        times, frames = port.times_s, port.frames
        rising = [k for k in range(1, len(frames)) if frames[k] > frames[k - 1]]
        spans = [(times[b - 1] - times[a], times[b] - times[a - 1], True) for a, b in pairwise(rising)]
        if rising and rising[-1] < len(frames) - 1:
            a = rising[-1]
            interval = sorted(t2 - t1 for t1, t2 in pairwise(times))[(len(times) - 1) // 2]
            if times[-1] - times[a] > TRAILING_SAMPLES * interval:
                spans.append((times[-1] - times[a], times[-1] - times[a - 1], False))
        for low, high, recovered in spans:
            if (low + high) / 2 > best.gap_s:
                best = Silence((low + high) / 2, (high - low) / 2, recovered)
    return best


def reset_result(trial: TrialResult, counts: TrialCounts, reset_at_s: float) -> ResetTrialResult:
    """The reset trial's result: the silence at the receivers around the DUT's restart."""
    silence = longest_silence(counts.rx_samples)
    return ResetTrialResult(trial=trial, reset_at_s=max(0.0, reset_at_s), gap_s=silence.gap_s,
                            recovered=silence.recovered, resolution_s=silence.resolution_s)


# --- RFC 2889 addresses ---------------------------------------------------------------------------


def address_plans(traffic: Traffic, ports: tuple[GenPort, GenPort], trex_ports: Sequence[int], addresses: int,
                  trial: int, learning_fps: float, test_fps: float) -> tuple[TrialPlan, TrialPlan, TrialPlan]:
    """Learning, flood-check and test phases (vsperf.trafficgen.vsgen.addresses' scheme) for
    `addresses` fresh addresses (the `trial`-th address trial of the session), learned behind port 1."""
    base = range_base(trial)
    if not 1 <= addresses <= 1 << 24 or base + addresses - 1 > 0xFFFFFFFF:
        raise ValueError(f"an address trial takes 1..{1 << 24} addresses, got {addresses}")
    first, last = address_mac(base), address_mac(base + addresses - 1)
    vlan = traffic.vlan

    def phase(pg_id: int, tx: int, src_mac: str, dst_mac: str, vary: str, fps: float) -> TrialPlan:
        src, dst = ports[tx], ports[1 - tx]
        spec = StreamSpec(port=trex_ports[tx], pg_id=pg_id, frames=addresses, pps=fps,
                          frame_size_bytes=traffic.frame_size_bytes, src_mac=src_mac, dst_mac=dst_mac,
                          src_ip=src.ipv4, dst_ip=dst.ipv4, src_udp=traffic.l4.srcport, dst_udp=traffic.l4.dstport,
                          vlan_id=vlan.id if vlan.enabled else None, vlan_priority=vlan.priority if vlan.enabled else 0,
                          vlan_cfi=vlan.cfi if vlan.enabled else 0, vary=vary, flows=addresses)  # type: ignore[arg-type]
        return TrialPlan((spec,), planned_s=addresses / fps)

    return (phase(1, 1, first, ports[0].mac, "dl_src", learning_fps),
            phase(2, 1, last, first, "dl_dst", test_fps),
            phase(3, 0, ports[0].mac, first, "dl_dst", test_fps))


def address_result(traffic: Traffic, addresses: int, plans: tuple[TrialPlan, TrialPlan, TrialPlan],
                   counts: tuple[TrialCounts, TrialCounts, TrialCounts], learning_fps: float,
                   test_fps: float) -> AddressTrialResult:
    """The three phases' results; a flood-check frame received at port 0 is a flooded one."""
    learning, flood, test = (trial_result("rate", traffic, plan, got, fps, addresses / fps)
                             for plan, got, fps in zip(plans, counts, (learning_fps, test_fps, test_fps), strict=True))
    return AddressTrialResult(addresses=addresses, learning=learning, test=test, flooded_frames=flood.rx_frames)

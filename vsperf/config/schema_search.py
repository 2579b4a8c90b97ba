"""Settings of the searches beyond the binary search and of the tests beyond throughput
(ndr_pdr, mlr, latency, frame loss, recovery, reset, RFC 9004 back-to-back, RFC 2889).

Defaults: conf/05_search.yaml only (the searches read them through the loader, see
vsperf.search.config.setting).
"""

from __future__ import annotations

from typing import Literal, get_args

from vsperf.config.types import (
    MAX_COUNT,
    MAX_RATE_FPS,
    NAME,
    REPEATS,
    SECONDS,
    SECONDS_OR_ZERO,
    Float,
    Int,
    ListOf,
    Optional,
    Setting,
    Str,
    Struct,
)

# The rules a goal's field shares with the setting that gives it when no goal is listed.
_EXCEED_PERCENT = Float(min=0, lt=100, unit="% of the duration sum")
_WIDTH_PERCENT = Float(gt=0, lt=100, unit="% of the upper bound")

# TRAFFICGEN_SEARCH: the throughput algorithms (vsperf.search.select runs them).
ThroughputAlgorithm = Literal["binary", "ndr_pdr", "mlr"]
THROUGHPUT_ALGORITHMS: tuple[ThroughputAlgorithm, ...] = get_args(ThroughputAlgorithm)

_REPEATS = REPEATS  # trials, resets or searches per frame size

_GOAL = Struct({
    "name": NAME,
    "loss_percent": Float(min=0, lt=100, unit="% of frames sent"),
    "exceed_percent": _EXCEED_PERCENT,
    "final_duration_s": SECONDS,
    "duration_sum_s": SECONDS,
    "width_percent": _WIDTH_PERCENT,
    "initial_duration_s": SECONDS,
})

SETTINGS: dict[str, Setting] = {
    # --- throughput algorithm -------------------------------------------------------------------
    "TRAFFICGEN_SEARCH": Setting(
        Str(choices=THROUGHPUT_ALGORITHMS),
        "Throughput search of rfc2544_throughput: binary (RFC 2544, VSPERF's), ndr_pdr (NDR and PDR in one "
        "bisection of short trials, confirmed at TRAFFICGEN_DURATION) or mlr (MLRsearch goals)."),
    "TRAFFICGEN_PDR_LOSSRATE": Setting(
        Float(min=0, lt=100, unit="percent"),
        "Frame loss allowed at the partial drop rate (PDR) of ndr_pdr and mlr, % of frames sent."),
    "TRAFFICGEN_SEARCH_WIDTH_PERCENT": Setting(
        _WIDTH_PERCENT,
        "ndr_pdr and mlr (and RFC 2889 learning) stop when (upper - lower) / upper is at most this."),
    "TRAFFICGEN_SEARCH_INITIAL_DURATION_S": Setting(
        SECONDS,
        "Shortest trials of ndr_pdr and mlr, which steer the search; TRAFFICGEN_DURATION is the final one."),
    "TRAFFICGEN_MLR_EXCEED_RATIO_PERCENT": Setting(
        _EXCEED_PERCENT,
        "mlr: share of a lower bound's trial seconds that may exceed the loss (0: RFC 2544, none)."),
    "TRAFFICGEN_MLR_DURATION_SUM_S": Setting(
        Optional(SECONDS),
        "mlr: seconds of final-length trials that decide a load (null: one trial of TRAFFICGEN_DURATION)."),
    "TRAFFICGEN_MLR_PRECEDING_TARGETS": Setting(
        Int(min=0, max=10),
        "mlr: stages with shorter trials (initial to final duration, geometric) before each goal's final one."),
    "TRAFFICGEN_MLR_GOALS": Setting(
        ListOf(_GOAL),
        "mlr goals (name, loss_percent, exceed_percent, final_duration_s, duration_sum_s, width_percent, "
        "initial_duration_s); empty: NDR and PDR from TRAFFICGEN_LOSSRATE, TRAFFICGEN_PDR_LOSSRATE, ..."),
    # --- tests at the throughput ----------------------------------------------------------------
    "TRAFFICGEN_THROUGHPUT_PERCENT": Setting(
        Optional(Float(gt=0, max=100, unit="% of line rate")),
        "Throughput that latency, recovery, reset and RFC 9004 back-to-back run at (null: measured first "
        "with TRAFFICGEN_SEARCH at each frame size)."),
    "TRAFFICGEN_LATENCY_DURATION_S": Setting(
        SECONDS, "Duration of one rfc2544_latency trial (RFC 2544: at least 120 s)."),
    "TRAFFICGEN_LATENCY_REPETITIONS": Setting(
        _REPEATS, "rfc2544_latency trials per frame size; the average is reported (RFC 2544: 20)."),
    "TRAFFICGEN_FRAME_LOSS_STEP_PERCENT": Setting(
        Float(gt=0, max=10, unit="% of line rate"),
        "rfc2544_frame_loss: load step from the maximum down (RFC 2544: at most 10 %)."),
    "TRAFFICGEN_RECOVERY_OVERLOAD_PERCENT": Setting(
        Float(gt=100, max=1000, unit="% of throughput"),
        "rfc2544_recovery: overload rate (RFC 2544: 110 %, at most line rate)."),
    "TRAFFICGEN_RECOVERY_OVERLOAD_S": Setting(
        SECONDS, "rfc2544_recovery: duration of the overload (RFC 2544: at least 60 s)."),
    "TRAFFICGEN_RECOVERY_DROP_PERCENT": Setting(
        Float(gt=0, lt=100, unit="% of the overload rate"),
        "rfc2544_recovery: rate after the drop (RFC 2544: 50 %)."),
    "TRAFFICGEN_RECOVERY_AFTER_S": Setting(
        SECONDS, "rfc2544_recovery: traffic after the drop; a longer recovery is reported as a lower bound."),
    "TRAFFICGEN_RECOVERY_REPETITIONS": Setting(
        _REPEATS, "rfc2544_recovery: trials per frame size; mean, minimum and maximum are reported."),
    "TRAFFICGEN_RESET_DURATION_S": Setting(
        SECONDS, "rfc2544_reset: the stream around each reset; it must outlast the DUT's restart."),
    "TRAFFICGEN_RESET_AT_S": Setting(
        SECONDS_OR_ZERO, "rfc2544_reset: when the reset starts, seconds into the stream."),
    "TRAFFICGEN_RESET_REPETITIONS": Setting(
        _REPEATS, "rfc2544_reset: resets per frame size; mean, minimum and maximum are reported."),
    "TRAFFICGEN_RFC9004_TESTS": Setting(
        _REPEATS, "rfc9004_back2back: independent back-to-back searches per frame size (RFC 2544: 50)."),
    # --- RFC 2889 -------------------------------------------------------------------------------
    "TRAFFICGEN_RFC2889_LOAD_STEP_PERCENT": Setting(
        Float(gt=0, max=100, unit="% of line rate"),
        "rfc2889_forwarding: offered-load step from the maximum down."),
    "TRAFFICGEN_RFC2889_MAX_ADDRESSES": Setting(
        Int(min=1, max=MAX_COUNT, unit="addresses"),
        "rfc2889_caching: most MAC addresses tried (reported as a lower bound when all are learned)."),
    "TRAFFICGEN_RFC2889_ADDRESS_RATE_FPS": Setting(
        Float(gt=0, max=MAX_RATE_FPS, unit="frames/s"),
        "rfc2889_caching learning frames and the test frames of caching and learning, frames/s."),
    "TRAFFICGEN_RFC2889_LEARNING_ADDRESSES": Setting(
        Int(min=1, max=MAX_COUNT, unit="addresses"),
        "rfc2889_learning: addresses learned per trial (RFC 2889: at most the caching capacity)."),
    "TRAFFICGEN_RFC2889_MIN_LEARNING_RATE_FPS": Setting(
        Float(gt=0, max=MAX_RATE_FPS, unit="frames/s"), "rfc2889_learning: lowest learning rate tried."),
}

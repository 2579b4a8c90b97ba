"""Core settings: run, report and traffic generation (VSPERF's names where it had them).

Defaults: conf/00_common.yaml and conf/01_trafficgen.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_args

from vsperf.config.spec import InvalidValue
from vsperf.config.types import (
    LABEL,
    MAX_COUNT,
    MAX_RATE_FPS,
    NAME,
    PORT_SPEED_GBPS,
    REPEATS,
    SECONDS,
    SECONDS_OR_ZERO,
    AnyValue,
    Bool,
    Constraint,
    Float,
    Int,
    IPv4Address,
    ListOf,
    MacAddress,
    MapOf,
    OneOf,
    Optional,
    Setting,
    Str,
    Struct,
)
from vsperf.traffic import L2, L3, L4, Traffic, TrafficType, Vlan
from vsperf.traffic.mix import FrameMix, MixError, parse_genome, parse_mix, parse_size_list
from vsperf.traffic.warmup import warm_start_from_setting
from vsperf.units import MAX_FRAME_BYTES, MIN_FRAME_BYTES

TRAFFIC_TYPES: tuple[str, ...] = get_args(TrafficType)  # one list: vsperf.traffic's Literal
BENCHMARK_NETWORK = "198.18.0.0/15"

_FRAME_SIZE = Int(min=MIN_FRAME_BYTES, max=MAX_FRAME_BYTES, unit="bytes")
_PERCENT = Float(min=0, max=100, unit="% of line rate")
_RATE_PERCENT = Float(gt=0, max=100, unit="% of line rate")  # a rate to send at: 0 % sends nothing
_FPS = Float(gt=0, max=MAX_RATE_FPS, unit="frames/s")
# Any address a real testbed uses (VSPERF's default was 1.1.1.1 -> 90.90.90.90); the local lab
# sends only inside BENCHMARK_NETWORK and refuses others when it deploys (vsperf.deploy.support).
_IP = IPv4Address()
_PORT = Int(min=0, max=65535)


@dataclass(frozen=True)
class FrameMixText(Str):
    """A frame mix (vsperf.traffic.mix): an RFC 6985 genome, a SIZE:WEIGHT list or IMIX; `spelling`
    "genome" or "sizes" accepts only that one. Returned as given, checked in one line."""

    spelling: str = ""

    def kind(self) -> str:
        examples = {"genome": "an RFC 6985 genome like 'aaaaaaaddddg'", "sizes": "a size list like '64:7,570:4,1518:1'"}
        return examples.get(self.spelling, "a frame mix (a genome like 'aaaaaaaddddg' or a size list like "
                                           "'64:7,570:4,1518:1')")

    def validate(self, value: object, path: str) -> str:
        text = super().validate(value, path)
        parse = {"genome": parse_genome, "sizes": parse_size_list}.get(self.spelling, parse_mix)
        try:
            parse(text)
        except MixError as exc:
            raise InvalidValue(path, str(exc)) from None
        return text


_MIX = FrameMixText()

_TRAFFIC = Struct({
    "traffic_type": Str(choices=TRAFFIC_TYPES),
    "frame_rate": _RATE_PERCENT,
    "burst_size": Int(min=1, max=MAX_COUNT, unit="frames"),
    "bidir": Bool(),
    "multistream": Int(min=0, max=1_000_000, unit="flows"),
    "stream_type": Str(choices=("L2", "L3", "L4"), ignore_case=True),
    "pre_installed_flows": Bool(),
    "flow_type": Str(choices=("port", "IP")),
    "learning_frames": Bool(),
    # framesize: VSPERF's; as there, the sizes of TRAFFICGEN_PKT_SIZES replace it in every test
    "l2": Struct({"framesize": _FRAME_SIZE, "srcmac": MacAddress(), "dstmac": MacAddress()}),
    "l3": Struct({"enabled": Bool(), "proto": Str(choices=("udp",), ignore_case=True), "srcip": _IP,
                  "dstip": _IP}),
    "l4": Struct({"enabled": Bool(), "srcport": _PORT, "dstport": _PORT}),
    "vlan": Struct({"enabled": Bool(), "id": Int(min=0, max=4095), "priority": Int(min=0, max=7),
                    "cfi": Int(min=0, max=1)}),
    # VSPERF's: when enabled, the mix replaces TRAFFICGEN_PKT_SIZES (one "frame size": the mix)
    "imix": Struct({"enabled": Bool(), "type": Str(choices=("genome", "sizes")),
                    "genome": FrameMixText(spelling="genome"), "sizes": FrameMixText(spelling="sizes")}),
    # VSPERF's: when enabled, each latency measurement keeps its whole distribution (HDR histogram)
    "latency_histogram": Struct({"enabled": Bool(), "type": Str(choices=("Default",), ignore_case=True)}),
    # VSPERF's: a pcap of what the rx ports receive, in the results directory (vsperf.capture)
    "capture": Struct({"enabled": Bool(), "tx_ports": ListOf(Int(min=0, max=1)), "rx_ports": ListOf(Int(min=0, max=1)),
                       "count": Int(min=1, max=100_000, unit="frames"), "filter": Str()}),
})

_DUMMY_DUT = Struct({
    "capacity_fps": OneOf(_FPS, MapOf(_FRAME_SIZE, _FPS, min_len=1)),
    "buffer_frames": Int(min=0, max=MAX_COUNT, unit="frames"),
    "port_speed_gbps": Optional(PORT_SPEED_GBPS),
    "noise": Float(min=0, lt=1),
    "seed": Int(min=-(2**63), max=2**63 - 1),
    "loss_model": Str(choices=("cliff", "gradual")),
    "base_latency_ns": Float(min=0, max=1e12, unit="ns"),
    "recovery_s": SECONDS_OR_ZERO,
    "reset_s": SECONDS_OR_ZERO,
    "mac_table_size": Int(min=0, max=MAX_COUNT, unit="addresses"),
    "learning_rate_fps": Float(gt=0, max=MAX_RATE_FPS, unit="addresses/s"),
    "cold_start_s": SECONDS_OR_ZERO,
    "noise_shape": Str(choices=("uniform", "gaussian")),
    "stall_per_s": Float(min=0, max=1000, unit="stalls/s"),
    "stall_s": SECONDS_OR_ZERO,
    "wall_clock": Bool(),
})

SETTINGS: dict[str, Setting] = {
    "LOG_DIR": Setting(
        NAME,
        "Folder of run results: each run writes LOG_DIR/results_<timestamp> unless --results-dir is given."),
    "VERBOSITY": Setting(
        Str(choices=("debug", "info", "warning", "error", "critical"), ignore_case=True),
        "Console log level."),
    "REPORT_DOCUMENT_ID": Setting(
        LABEL,
        "Document id printed on the Level Test Report; {date} is replaced by the run's date."),
    "LOADGEN": Setting(
        NAME,
        "Load generator of tests with a Load (vsperf --list-loadgens); a test's Load 'tool' wins, "
        "except over --loadgen."),
    "TEST_CASE_FILES": Setting(
        ListOf(NAME),
        "Extra test-case YAML files, or folders of *.yaml, loaded besides the shipped ones."),
    "PERFORMANCE_TESTS": Setting(
        ListOf(MapOf(NAME, AnyValue())),
        "Test cases in VSPERF's form (Name, Deployment, Description, Parameters, ...), added to the "
        "catalog (a name already there is redefined); a run without test names runs these."),
    "INTEGRATION_TESTS": Setting(
        ListOf(MapOf(NAME, AnyValue())),
        "VSPERF's integration tests (TestSteps, op2p, ...), in the form of PERFORMANCE_TESTS: run with "
        "--integration; a run of --integration without test names runs these."),
    "TRAFFICGEN": Setting(
        NAME,
        "Traffic generator backend (vsperf --list-trafficgens)."),
    "TRAFFICGEN_PKT_SIZES": Setting(
        ListOf(OneOf(_FRAME_SIZE, _MIX), min_len=1),
        "Frame sizes to test, bytes including the FCS, or frame mixes (an RFC 6985 genome like "
        "'aaaaaaaddddg', a size list like '64:7,570:4,1518:1', or IMIX); one result row per size."),
    "TRAFFICGEN_DURATION": Setting(
        SECONDS,
        "Duration of one trial (RFC 2544: >= 60 s for a final throughput answer)."),
    "TRAFFICGEN_LOSSRATE": Setting(
        Float(min=0, max=100, unit="percent"),
        "Frame loss accepted at the throughput rate, % of frames sent (0: zero-loss throughput)."),
    "TRAFFICGEN_RFC2544_TESTS": Setting(
        REPEATS,
        "How many times each RFC 2544 search (throughput, back-to-back) runs per frame size."),
    "TRAFFICGEN_RFC2544_MIN_RATE_PERCENT": Setting(
        _PERCENT,
        "Lowest rate the throughput search tries, % of line rate."),
    "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT": Setting(
        _PERCENT,
        "Highest (first) rate the throughput search tries, % of line rate."),
    "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": Setting(
        Float(gt=0, max=100, unit="% of line rate"),
        "The throughput search stops when its bounds are this close, % of line rate."),
    "TRAFFICGEN_LEARNING_DURATION_S": Setting(
        SECONDS_OR_ZERO,
        "Learning traffic sent before a search so that switches learn addresses (0: none)."),
    "TRAFFICGEN_RFC2544_VERIFY": Setting(
        Bool(),
        "Confirm the throughput found with one trial of TRAFFICGEN_RFC2544_VERIFY_DURATION_S at that rate."),
    "TRAFFICGEN_RFC2544_VERIFY_DURATION_S": Setting(
        SECONDS,
        "Duration of the verification trial (RFC 2544 asks for >= 60 s)."),
    "TRAFFICGEN_B2B_GRANULARITY_FRAMES": Setting(
        Int(min=1, max=MAX_COUNT, unit="frames"),
        "The back-to-back search stops when its bounds are this many frames apart."),
    "TRAFFICGEN_RESIDUAL_WAIT_S": Setting(
        SECONDS_OR_ZERO,
        "Wait after traffic stops before counters are read (RFC 2544: 2 s)."),
    "TRAFFICGEN_PORT_SPEED_GBPS": Setting(
        PORT_SPEED_GBPS,
        "Nominal speed of one generator port; defines line rate and every *_percent."),
    "TRAFFICGEN_DUMMY_DUT": Setting(
        _DUMMY_DUT,
        "Simulated DUT of the dummy generator: capacity_fps (aggregate frames/s, or a map frame size -> "
        "frames/s), buffer_frames, port_speed_gbps (null: TRAFFICGEN_PORT_SPEED_GBPS), noise (relative "
        "per-trial variation of the capacity, 0 <= noise < 1), noise_shape (uniform or gaussian), seed, "
        "loss_model (cliff or gradual), stall_per_s and stall_s (forwarding stalls: loss growing with "
        "the trial's length), "
        "base_latency_ns, recovery_s (frames dropped after an overload), reset_s (outage of a reset), "
        "mac_table_size and learning_rate_fps (RFC 2889), cold_start_s (seconds of half capacity at the "
        "start of each trial, which a warm start absorbs), wall_clock (true: each trial lasts its "
        "duration, as a real generator's does)."),
    "TRAFFIC": Setting(
        _TRAFFIC,
        "What to send (VSPERF's TRAFFIC): traffic_type, frame_rate (% of line rate), burst_size, bidir, "
        "multistream, stream_type, pre_installed_flows, flow_type, learning_frames, l2, l3 (any IPv4 "
        "address; the local lab sends only inside 198.18.0.0/15), l4, vlan, imix (enabled: the mix of "
        "type genome or sizes replaces TRAFFICGEN_PKT_SIZES), latency_histogram (enabled: every latency "
        "keeps its whole distribution, as an HDR histogram)."),
}


def _rate_bounds(values: Mapping[str, Any]) -> str | None:
    low = values["TRAFFICGEN_RFC2544_MIN_RATE_PERCENT"]
    high = values["TRAFFICGEN_RFC2544_MAX_RATE_PERCENT"]
    if low >= high:
        return (f"TRAFFICGEN_RFC2544_MIN_RATE_PERCENT ({low:g}) must be below "
                f"TRAFFICGEN_RFC2544_MAX_RATE_PERCENT ({high:g})")
    return None


CONSTRAINTS = (
    Constraint(("TRAFFICGEN_RFC2544_MIN_RATE_PERCENT", "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT"), _rate_bounds),
)


def frame_sizes(settings: Mapping[str, Any]) -> tuple[int | FrameMix, ...]:
    """The frame sizes a test runs at: TRAFFICGEN_PKT_SIZES (sizes and mixes), or, when TRAFFIC
    imix is enabled, that one mix (as VSPERF sent the mix whatever the frame size)."""
    imix = settings["TRAFFIC"].get("imix") or {}
    if imix.get("enabled"):
        spelling = imix.get("type", "genome")
        text = imix.get(spelling)
        if not text:
            raise InvalidValue(f"TRAFFIC.imix.{spelling}", "needed when imix is enabled with type " + repr(spelling))
        return (parse_genome(text) if spelling == "genome" else parse_size_list(text),)
    return tuple(parse_mix(size) if isinstance(size, str) else int(size) for size in settings["TRAFFICGEN_PKT_SIZES"])


def traffic_from_settings(settings: Mapping[str, Any], size: int | FrameMix) -> Traffic:
    """The typed Traffic of TRAFFIC, TRAFFICGEN_PORT_SPEED_GBPS and TRAFFICGEN_WARM_START at one frame
    size (or frame mix)."""
    mix = size if isinstance(size, FrameMix) else None
    frame_size_bytes = round(size.mean_bytes) if isinstance(size, FrameMix) else size
    if mix is None:
        _FRAME_SIZE.validate(frame_size_bytes, "frame size")  # raises a ConfigError
    t = settings["TRAFFIC"]
    return Traffic(
        mix=mix,
        latency_histogram=bool((t.get("latency_histogram") or {}).get("enabled", False)),
        warm_start=warm_start_from_setting(settings["TRAFFICGEN_WARM_START"]),
        traffic_type=t["traffic_type"],
        frame_size_bytes=frame_size_bytes,
        bidir=t["bidir"],
        frame_rate_percent=float(t["frame_rate"]),
        multistream=t["multistream"],
        stream_type=t["stream_type"],
        pre_installed_flows=t["pre_installed_flows"],
        flow_type=t["flow_type"],
        l2=L2(srcmac=t["l2"]["srcmac"], dstmac=t["l2"]["dstmac"]),
        l3=L3(proto=t["l3"]["proto"], srcip=t["l3"]["srcip"], dstip=t["l3"]["dstip"],
              enabled=t["l3"]["enabled"]),
        l4=L4(srcport=t["l4"]["srcport"], dstport=t["l4"]["dstport"], enabled=t["l4"]["enabled"]),
        vlan=Vlan(enabled=t["vlan"]["enabled"], id=t["vlan"]["id"], priority=t["vlan"]["priority"],
                  cfi=t["vlan"]["cfi"]),
        link_speed_bps=float(settings["TRAFFICGEN_PORT_SPEED_GBPS"]) * 1e9,
        burst_frames=t["burst_size"],
        learning_frames=t["learning_frames"],
    )

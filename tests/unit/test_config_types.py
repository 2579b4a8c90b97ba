"""Type specs: what each accepts, how it normalises, and the one-line errors it raises."""

from __future__ import annotations

from typing import Any

import pytest

from vsperf.config.types import (
    Bool,
    Constraint,
    Float,
    Int,
    InvalidValue,
    IPv4Address,
    ListOf,
    MacAddress,
    MapOf,
    OneOf,
    Optional,
    Spec,
    SpecError,
    Str,
    Struct,
    UnknownKey,
    closest,
)
from vsperf.errors import ConfigError


def error(spec: Spec, value: Any, path: str = "KEY") -> str:
    with pytest.raises(SpecError) as info:
        spec.validate(value, path)
    message = str(info.value)
    assert "\n" not in message
    assert isinstance(info.value, ConfigError)
    return message


def test_int_range_and_strict_types() -> None:
    spec = Int(min=64, max=9018, unit="bytes")
    assert spec.validate(64, "K") == 64
    assert error(spec, 63) == "KEY: expected an integer in 64..9018 (bytes), got 63"
    assert error(spec, True) == "KEY: expected an integer (bytes), got bool True"
    assert error(spec, 64.0) == "KEY: expected an integer (bytes), got float 64.0"
    assert error(spec, "64") == "KEY: expected an integer (bytes), got str '64'"
    assert error(Int(min=1), 0) == "KEY: expected an integer >= 1, got 0"


def test_float_accepts_int_never_bool_and_checks_bounds() -> None:
    spec = Float(gt=0, unit="seconds")
    value = spec.validate(10, "K")
    assert value == 10.0 and isinstance(value, float)
    assert error(spec, "ten") == "KEY: expected a number (seconds), got str 'ten'"
    assert error(spec, False) == "KEY: expected a number (seconds), got bool False"
    assert error(spec, 0) == "KEY: expected a number > 0 (seconds), got 0"
    assert error(spec, float("nan")).startswith("KEY: expected a number > 0 (seconds), got nan")
    assert error(Float(min=0, max=100), 100.5) == "KEY: expected a number in 0..100, got 100.5"
    assert error(Float(min=0, lt=1), 1) == "KEY: expected a number >= 0 and < 1, got 1"
    assert Float(min=0, max=100).validate(100, "K") == 100.0


def test_bool_reads_vsperf_words_and_refuses_other_strings_with_a_hint() -> None:
    assert Bool().validate(False, "K") is False
    # VSPERF's spellings, any case: 'bidir': 'True', 'pre_installed_flows': 'No'
    assert [Bool().validate(w, "K") for w in ("True", "false", "YES", " no ")] == [True, False, True, False]
    message = error(Bool(), "on", "TRAFFIC.bidir")
    assert message == "TRAFFIC.bidir: expected true or false, got str 'on': write true or false"
    assert error(Bool(), "1").endswith("write true or false")
    assert error(Bool(), "maybe") == "KEY: expected true or false, got str 'maybe'"
    assert error(Bool(), 1) == "KEY: expected true or false, got int 1"


def test_str_choices_suggest_the_closest() -> None:
    spec = Str(choices=("debug", "info", "warning", "error"))
    assert spec.validate("info", "K") == "info"
    assert error(spec, "inf") == (
        "KEY: expected one of 'debug', 'info', 'warning', 'error', got 'inf' (did you mean 'info'?)"
    )
    assert error(Str(min_len=1), "") == "KEY: expected a non-empty string, got ''"
    assert error(Str(), 5) == "KEY: expected a string, got int 5"


def test_mac_and_ipv4_are_checked_and_normalised() -> None:
    assert MacAddress().validate("00:1B:21:AA:bb:0c", "K") == "00:1b:21:aa:bb:0c"
    assert "expected a MAC address" in error(MacAddress(), "00:1b:21:aa:bb")
    inside = IPv4Address(network="198.18.0.0/15", why="benchmarking range")
    assert inside.validate("198.19.255.254", "K") == "198.19.255.254"
    assert error(inside, "10.0.0.1") == (
        "KEY: expected an IPv4 address inside 198.18.0.0/15 (benchmarking range), got '10.0.0.1'"
    )
    assert "198.18.0.0/15" in error(inside, "198.18.0.300")
    assert IPv4Address().validate("10.0.0.1", "K") == "10.0.0.1"


def test_list_normalises_tuples_and_names_the_index() -> None:
    spec = ListOf(Int(min=64), min_len=1)
    assert spec.validate((64, 128), "K") == [64, 128]
    assert error(spec, [64, 32]) == "KEY[1]: expected an integer >= 64, got 32"
    assert error(spec, []) == "KEY: expected a non-empty list of an integer >= 64, got []"
    assert error(spec, 64) == "KEY: expected a list of an integer, got int 64"


def test_struct_partial_unknown_key_merge_and_missing() -> None:
    spec = Struct({"bidir": Bool(), "l4": Struct({"srcport": Int(), "dstport": Int()})})
    assert spec.validate({"l4": {"srcport": 1}}, "TRAFFIC") == {"l4": {"srcport": 1}}
    assert error(spec, {"bidr": True}, "TRAFFIC") == (
        "unknown key 'TRAFFIC.bidr' (did you mean 'TRAFFIC.bidir'?)")
    assert error(spec, {"l4": {"zzz": 1}}, "TRAFFIC") == (
        "unknown key 'TRAFFIC.l4.zzz' (valid keys: srcport, dstport)"
    )
    base: dict[str, Any] = {"bidir": True, "l4": {"srcport": 1, "dstport": 2}}
    merged = spec.merge(base, {"l4": {"dstport": 9}})
    assert merged == {"bidir": True, "l4": {"srcport": 1, "dstport": 9}}
    assert base["l4"]["dstport"] == 2  # merging never changes its inputs
    assert spec.missing({"l4": {"srcport": 1}}, "TRAFFIC") == ["TRAFFIC.bidir", "TRAFFIC.l4.dstport"]
    assert spec.missing(base, "TRAFFIC") == []


def test_map_replaces_unless_merge_keys() -> None:
    spec = MapOf(Int(min=64), Float(gt=0), min_len=1)
    assert spec.validate({64: 1, 128: 2.5}, "K") == {64: 1.0, 128: 2.5}
    assert error(spec, {"x": 1}) == "KEY.x: expected an integer, got str 'x'"
    assert error(spec, {64: -1}) == "KEY.64: expected a number > 0, got -1"
    assert "non-empty mapping" in error(spec, {})
    assert spec.merge({64: 1.0, 128: 2.0}, {64: 3.0}) == {64: 3.0}
    merging = MapOf(Str(), Int(), merge_keys=True)
    assert merging.merge({"a": 1, "b": 2}, {"a": 3}) == {"a": 3, "b": 2}


def test_optional_and_one_of() -> None:
    assert Optional(Float(gt=0)).validate(None, "K") is None
    assert Optional(Float(gt=0)).validate(2, "K") == 2.0
    spec = OneOf(Float(gt=0, unit="frames/s"), MapOf(Int(), Float(gt=0)))
    assert spec.validate(5, "K") == 5.0
    assert spec.validate({64: 5}, "K") == {64: 5.0}
    # The branch of the value's shape reports the detail, not a generic "none matched".
    assert error(spec, {64: 0}) == "KEY.64: expected a number > 0, got 0"
    assert error(spec, "x") == (
        "KEY: expected a number (frames/s) or a mapping of an integer to a number, got str 'x'"
    )
    assert spec.merge(5.0, {64: 1.0}) == {64: 1.0}
    assert spec.merge({64: 1.0}, 3.0) == 3.0
    with pytest.raises(ValueError):
        OneOf(Int())


def test_errors_gain_an_origin() -> None:
    invalid = InvalidValue("TRAFFICGEN_DURATION", "expected a number (seconds), got str 'ten'")
    assert str(invalid.located("--test-params")) == (
        "TRAFFICGEN_DURATION: expected a number (seconds), got str 'ten' (from --test-params)"
    )
    unknown = UnknownKey("TRAFFIC", "bidr", ["bidir", "l2"])
    assert str(unknown.located("conf file /x.yaml")) == (
        "unknown key 'TRAFFIC.bidr' in conf file /x.yaml (did you mean 'TRAFFIC.bidir'?)"
    )
    top = UnknownKey("", "NOPE", ["TRAFFIC"], noun="setting", fallback="see --list-settings")
    assert str(top.located("environment")) == "unknown setting 'NOPE' in environment (see --list-settings)"


def test_long_values_stay_on_one_bounded_line() -> None:
    message = error(Int(), "line1\nline2" * 50)
    assert len(message) < 120


def test_closest_ignores_case_and_refuses_far_names() -> None:
    assert closest("trafficgen_duraton", ["TRAFFICGEN_DURATION", "TRAFFIC"]) == "TRAFFICGEN_DURATION"
    assert closest("zzz", ["TRAFFIC"]) is None


def test_constraint_compares_by_names() -> None:
    rule = Constraint(("A", "B"), lambda v: None if v["A"] < v["B"] else "A must be below B")
    assert rule.problem({"A": 1, "B": 2}) is None
    assert rule.problem({"A": 2, "B": 2}) == "A must be below B"

"""The schema: conf/ defaults and schema agree, sections merge, traffic_from_settings."""

from __future__ import annotations

import importlib
import types
from pathlib import Path

import pytest

from vsperf import paths
from vsperf.config import SETTINGS_SCHEMA, load_settings, load_yaml, traffic_from_settings
from vsperf.config.schema import merge_sections
from vsperf.config.types import (
    STRING_MAX_CHARS,
    Constraint,
    Float,
    Int,
    ListOf,
    MapOf,
    OneOf,
    Optional,
    Setting,
    Spec,
    Str,
    Struct,
)
from vsperf.errors import ConfigError
from vsperf.traffic import Traffic


def conf_files() -> list[Path]:
    return sorted(paths.data_dir("conf").glob("*.yaml"))


def test_every_conf_key_is_in_the_schema_and_every_setting_has_a_default() -> None:
    defined: set[str] = set()
    for path in conf_files():
        data = load_yaml(path.read_text(), str(path)) or {}
        unknown = set(data) - set(SETTINGS_SCHEMA)
        assert not unknown, f"{path.name} sets settings the schema does not know: {unknown}"
        defined |= set(data)
    assert set(SETTINGS_SCHEMA) - defined == set(), "settings without a default in conf/"
    load_settings(env={})  # validates every default, including every nested key


def test_every_setting_is_documented_on_one_line() -> None:
    for name, setting in SETTINGS_SCHEMA.items():
        assert setting.doc.strip() and "\n" not in setting.doc, name
        assert setting.spec.describe()


def test_core_defaults_are_the_documented_ones() -> None:
    s = load_settings(env={})
    assert s["LOG_DIR"] == "/tmp/vsperf"
    assert s["VERBOSITY"] == "info"
    assert s["TRAFFICGEN"] == "vsgen"
    assert s["TRAFFICGEN_LOSSRATE"] == 0.0
    assert s["TRAFFICGEN_RFC2544_RESOLUTION_PERCENT"] == 0.1
    assert s["TRAFFICGEN_RESIDUAL_WAIT_S"] == 2.0
    assert s["TRAFFICGEN_RFC2544_VERIFY"] is False
    assert s["REPORT_DOCUMENT_ID"].format(date="2024-01-01") == "vsperf_LTR_2024-01-01_DRAFT"
    assert s["TEST_CASE_FILES"] == []
    assert s["TRAFFICGEN_DUMMY_DUT"]["capacity_fps"] == 5e6
    assert s["TRAFFICGEN_DUMMY_DUT"]["loss_model"] == "cliff"
    traffic = s["TRAFFIC"]
    assert (traffic["stream_type"], traffic["flow_type"]) == ("L4", "port")
    assert traffic["pre_installed_flows"] is False
    assert traffic["l4"] == {"enabled": True, "srcport": 3000, "dstport": 3001}


def test_traffic_from_settings() -> None:
    s = load_settings(env={}, test_params="TRAFFICGEN_PORT_SPEED_GBPS=25;TRAFFIC={'bidir': False, "
                                          "'multistream': 100, 'frame_rate': 50, 'burst_size': 7, "
                                          "'vlan': {'enabled': True, 'id': 100}}")
    traffic = traffic_from_settings(s, 1518)
    assert isinstance(traffic, Traffic)
    assert traffic.frame_size_bytes == 1518
    assert traffic.bidir is False and traffic.tx_ports == 1
    assert traffic.multistream == 100 and traffic.frame_rate_percent == 50.0 and traffic.burst_frames == 7
    assert traffic.link_speed_bps == 25e9
    assert traffic.vlan.enabled and traffic.vlan.id == 100
    assert traffic.l3.srcip == "198.18.0.1" and traffic.l4.dstport == 3001
    # 25 GbE at 1518 B: 25e9 / ((1518 + 20) * 8) frames/s on the one transmitting port.
    assert traffic.line_rate_fps == pytest.approx(2_031_859.6, rel=1e-6)
    default = traffic_from_settings(load_settings(env={}), 64)
    assert default.line_rate_fps == pytest.approx(2 * 14_880_952.38, rel=1e-6)  # bidirectional 10 GbE
    with pytest.raises(ConfigError, match=r"frame size: expected an integer in 64\.\.9018"):
        traffic_from_settings(s, 32)


def section(name: str, settings: dict[str, Setting],
            constraints: tuple[Constraint, ...] = ()) -> types.ModuleType:
    module = types.ModuleType(name)
    module.SETTINGS = settings  # type: ignore[attr-defined]
    module.CONSTRAINTS = constraints  # type: ignore[attr-defined]
    return module


def test_sections_merge_and_refuse_duplicates() -> None:
    a = section("a", {"A": Setting(Int(), "a")})
    b = section("b", {"B": Setting(Struct({"x": Int()}), "b")},
                (Constraint(("A", "B"), lambda v: None),))
    settings, constraints = merge_sections([a, b])
    assert list(settings) == ["A", "B"] and len(constraints) == 1
    with pytest.raises(ValueError, match="A is defined in both a and c"):
        merge_sections([a, section("c", {"A": Setting(Int(), "again")})])
    with pytest.raises(ValueError, match="unknown settings: Z"):
        merge_sections([section("d", {}, (Constraint(("Z",), lambda v: None),))])


def test_lab_settings_merge_when_present() -> None:
    try:
        schema_lab = importlib.import_module("vsperf.config.schema_lab")
    except ModuleNotFoundError as exc:
        if exc.name != "vsperf.config.schema_lab":
            raise
        pytest.skip("vsperf.config.schema_lab is not written yet")
    for name in schema_lab.SETTINGS:
        assert name in SETTINGS_SCHEMA


def _numbers_and_strings(spec: Spec, path: str) -> list[tuple[str, Spec]]:
    if isinstance(spec, Int | Float | Str):
        return [(path, spec)]
    if isinstance(spec, ListOf):
        return _numbers_and_strings(spec.item, f"{path}[]")
    if isinstance(spec, Struct):
        return [x for k, v in spec.fields.items() for x in _numbers_and_strings(v, f"{path}.{k}")]
    if isinstance(spec, MapOf):
        return _numbers_and_strings(spec.key, f"{path}.<key>") + _numbers_and_strings(spec.value, f"{path}.<value>")
    if isinstance(spec, Optional):
        return _numbers_and_strings(spec.inner, path)
    if isinstance(spec, OneOf):
        return [x for option in spec.options for x in _numbers_and_strings(option, path)]
    return []


def test_every_number_and_string_is_bounded() -> None:
    """Nonsense must not be accepted: every number states its upper bound (a criterion's bounds,
    any finite number, excepted), every string its length."""
    unbounded = []
    for name, setting in SETTINGS_SCHEMA.items():
        for path, spec in _numbers_and_strings(setting.spec, name):
            if isinstance(spec, Int) and spec.max is None:
                unbounded.append(path)
            if isinstance(spec, Float) and spec.max is None and spec.lt is None and not path.startswith("CRITERIA."):
                unbounded.append(path)
            if isinstance(spec, Str) and spec.max_len > STRING_MAX_CHARS:
                unbounded.append(path)
    assert unbounded == []


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ("TRAFFICGEN_DURATION=1e-9", "TRAFFICGEN_DURATION: expected a number in 0.001..604800 (seconds), got 1e-09"),
        ("TRAFFICGEN_PORT_SPEED_GBPS=1e12", "TRAFFICGEN_PORT_SPEED_GBPS: expected a number in 0.001..1600 (Gbit/s)"),
        ("TRAFFICGEN_PORT_SPEED_GBPS=1e-12", "TRAFFICGEN_PORT_SPEED_GBPS: expected a number in 0.001..1600"),
        ("TRAFFICGEN_RFC2544_TESTS=" + "1" + "0" * 30, "TRAFFICGEN_RFC2544_TESTS: expected an integer in 1..100"),
        ("TRAFFIC={frame_rate: 0}", "TRAFFIC.frame_rate: expected a number > 0 and <= 100 (% of line rate), got 0"),
        ("REPORT_DOCUMENT_ID=" + "x" * 201, "REPORT_DOCUMENT_ID: 201 characters, more than the 200 this setting holds"),
        ("LOG_DIR=" + "x" * 5000, "LOG_DIR: 5,000 characters, more than the 4,096 this setting holds"),
        ("COMPARE_THRESHOLD_PERCENT=1e308", "COMPARE_THRESHOLD_PERCENT: expected a number > 0 and <= 1000"),
    ],
)
def test_nonsense_values_are_refused(params: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(env={}, test_params=params)
    assert str(info.value).startswith(message), str(info.value)
    assert "\n" not in str(info.value)

"""--test-params parsing (YAML and VSPERF's Python literals), strict YAML, value rendering."""

from __future__ import annotations

from typing import Any

import pytest

from vsperf.config.params import (
    load_yaml,
    parse_test_params,
    parse_value,
    render_value,
    split_param_sets,
    split_test_params,
)
from vsperf.errors import ConfigError


def test_vsperf_python_literals() -> None:
    params = parse_test_params(
        "TRAFFICGEN_PKT_SIZES=(64,128);TRAFFIC={'bidir': False, 'multistream': 100};"
        "TRAFFICGEN_DURATION=10;TRAFFICGEN_LOSSRATE=0.5"
    )
    assert params == {
        "TRAFFICGEN_PKT_SIZES": [64, 128],
        "TRAFFIC": {"bidir": False, "multistream": 100},
        "TRAFFICGEN_DURATION": 10,
        "TRAFFICGEN_LOSSRATE": 0.5,
    }


def test_yaml_values() -> None:
    params = parse_test_params(
        "TRAFFIC={bidir: false, l3: {srcip: 198.18.0.9}}; LOG_DIR=/tmp/a b ;VERBOSITY=debug")
    assert params == {
        "TRAFFIC": {"bidir": False, "l3": {"srcip": "198.18.0.9"}},
        "LOG_DIR": "/tmp/a b",
        "VERBOSITY": "debug",
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("(64,128)", [64, 128]),
        ("((1, 2), [3])", [[1, 2], [3]]),
        ("64,128", [64, 128]),  # VSPERF's literal_eval read a bare tuple too
        ("None", None),
        ("null", None),
        ("True", True),
        ("true", True),
        ("yes", "yes"),  # YAML 1.2: only true/false are booleans; Bool settings refuse 'yes'
        ("017", 17),  # not octal
        ("0x10", 16),
        ("1:20", "1:20"),  # not sexagesimal
        ("5e6", 5e6),
        ("1_000", 1000),
        ("2016-05-11", "2016-05-11"),  # not a date
        ("'it''s'", "its"),  # a Python literal: implicit concatenation
        ("it's", "it's"),
        ("{64: 1e6}", {64: 1e6}),
        ("  10  ", 10),
    ],
)
def test_parse_value(text: str, expected: Any) -> None:
    value = parse_value(text, "test")
    assert value == expected
    assert type(value) is type(expected)


def test_parse_value_never_evaluates_code() -> None:
    value = parse_value("__import__('os').getcwd()", "test")
    assert value == "__import__('os').getcwd()"  # read as a YAML string, never run


def test_semicolons_inside_brackets_and_quotes_do_not_split() -> None:
    assert split_test_params("A=[1;2];B='x;y';C={'k': \"v;w\"};D=(1,\n2)") == [
        "A=[1;2]", "B='x;y'", "C={'k': \"v;w\"}", "D=(1,\n2)"
    ]
    params = parse_test_params("REPORT_DOCUMENT_ID='a;b';TRAFFIC={'l2': {'srcmac': '00:00:00:00:00:01'}}")
    assert params == {"REPORT_DOCUMENT_ID": "a;b", "TRAFFIC": {"l2": {"srcmac": "00:00:00:00:00:01"}}}


def test_apostrophe_inside_a_word_is_not_a_quote() -> None:
    assert parse_test_params("REPORT_DOCUMENT_ID=bob's run;VERBOSITY=info") == {
        "REPORT_DOCUMENT_ID": "bob's run", "VERBOSITY": "info"}


def test_empty_parts_are_ignored() -> None:
    assert parse_test_params(";TRAFFICGEN_DURATION=5;;") == {"TRAFFICGEN_DURATION": 5}
    assert parse_test_params("") == {}


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("TRAFFICGEN_DURATION=5;BOGUS X", ["--test-params", "'BOGUS X' is not KEY=VALUE or KEY"]),
        ("=5", ["no setting name"]),
        ("A=1;A=2", ["A is given twice"]),
        ("A=[1,2;B=3", ["unclosed bracket"]),
        ("A='abc;B=3", ["unterminated ' quote"]),
        ("TRAFFIC={a: b: c}", ["--test-params value of TRAFFIC: malformed YAML at line 1, column 6"]),
    ],
)
def test_errors(text: str, needles: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        parse_test_params(text)
    message = str(info.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message


def test_yaml_errors_name_line_and_column() -> None:
    with pytest.raises(ConfigError) as info:
        load_yaml("A: 1\nB: x: y\n", "conf file /x.yaml")
    assert str(info.value) == (
        "conf file /x.yaml: malformed YAML at line 2, column 5: mapping values are not allowed here")


def test_yaml_duplicate_keys_are_errors() -> None:
    with pytest.raises(ConfigError, match=r"line 3, column 3: duplicate key 'b'"):
        load_yaml("a:\n  b: 1\n  b: 2\n", "f")


def test_yaml_scalars_are_yaml_1_2() -> None:
    data = load_yaml("a: yes\nb: on\nc: 010\nd: 1.5e3\ne: ~\nf: False\ng: .inf\nh: 0x1f\ni: -0x1f\n", "f")
    assert data == {"a": "yes", "b": "on", "c": 10, "d": 1500.0, "e": None, "f": False, "g": float("inf"),
                    "h": 31, "i": "-0x1f"}


@pytest.mark.parametrize(
    "value",
    [
        None, True, 0, -3, 0.1, 1e16, "info", "/tmp/vsperf", "198.18.0.1", "00:00:00:00:00:00", "10",
        "true", "None", "", "vsperf_LTR_{date}_DRAFT", "a b", "it's", 'say "hi"', "x;y", "é",
        [64, 128], [], {}, {64: 5e6}, {"bidir": True, "l2": {"srcmac": "00:00:00:00:00:01"}},
        {"a": [None, "null", {"b": "c:d"}]},
    ],
)
def test_render_round_trips(value: Any) -> None:
    text = render_value(value)
    assert "\n" not in text
    assert parse_value(text, "test") == value
    assert parse_test_params(f"X={text};Y=1") == {"X": value, "Y": 1}


def test_bare_key_means_true_as_in_vsperf() -> None:
    assert parse_test_params("TRAFFICGEN_RFC2544_VERIFY;TRAFFICGEN_DURATION=5") == {
        "TRAFFICGEN_RFC2544_VERIFY": True, "TRAFFICGEN_DURATION": 5}


def test_param_sets_of_a_vsperf_sweep() -> None:
    assert split_param_sets([]) == []
    assert split_param_sets(["A=1;B=2"]) == ["A=1;B=2"]
    assert split_param_sets(["A=1", "A=2"]) == ["A=1", "A=2"]  # --test-params given twice
    # VSPERF's list form: one string holding a Python list of strings
    assert split_param_sets(["['TRAFFICGEN_DURATION=10;TRAFFICGEN_PKT_SIZES=(128,)', 'TRAFFICGEN_DURATION=5']"]) == [
        "TRAFFICGEN_DURATION=10;TRAFFICGEN_PKT_SIZES=(128,)", "TRAFFICGEN_DURATION=5"]
    assert split_param_sets(["[64, 128]"]) == ["[64, 128]"]  # not a list of strings: left as it is
    with pytest.raises(ConfigError, match="empty list"):
        split_param_sets(["[]"])


def test_values_are_bounded() -> None:
    bomb = "&a [" + ", ".join(["x"] * 9) + "]"
    for level in "bcdefghi":
        prev = chr(ord(level) - 1)
        bomb = f"{{{prev}: {bomb}, {level}: &{level} [" + ", ".join([f"*{prev}"] * 9) + "]}"
    with pytest.raises(ConfigError, match=r"^--test-params value of X: more than 200,000 values"):
        parse_test_params(f"X={bomb}")
    with pytest.raises(ConfigError, match=r"^--test-params value of X: a value contains itself"):
        parse_test_params("X=&a [*a]")
    with pytest.raises(ConfigError, match=r"^v: nested more than 64 levels deep"):
        parse_value("[" * 70 + "]" * 70, "v")  # a Python literal: bounded once parsed
    with pytest.raises(ConfigError, match=r"^v: 70,000 characters, more than the 65,536 vsperf reads in one value"):
        parse_value("x" * 70_000, "v")

"""VSPERF's Python conf files, read without running them; #PARAM and #EVAL macros."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vsperf.config.pyconf import expand_params, looks_like_pyconf, read_pyconf
from vsperf.errors import ConfigError


def error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        read_pyconf(text, "conf file x.conf")
    return str(info.value)


def test_literals_of_every_kind() -> None:
    text = ('"""doc"""\n# comment\nA = 1\nB = -2.5\nC = "s" \'t\'\nD = (64,)\nE = [True, False, None]\n'
            "F = {'k': {'n': (1, 2)}, 3: 'x'}\nG = +4\n")
    assert read_pyconf(text, "f") == {"A": 1, "B": -2.5, "C": "st", "D": [64], "E": [True, False, None],
                                      "F": {"k": {"n": [1, 2]}, 3: "x"}, "G": 4}


def test_vsperf_reading_rules() -> None:
    # later assignment wins; None means "not set" (VSPERF skips it); lower-case names are not settings
    assert read_pyconf("A = 1\nA = 2\nB = 3\nB = None\nhelper = 4\n", "f") == {"A": 2}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("import os\n", "conf file x.conf: line 1: an import"),
        ("from x import y\n", "line 1: an import"),
        ("A = 1\nB = os.path.join('a')\n", "line 2: a call \"os.path.join('a')\" is not a literal"),
        ("A = ROOT_DIR\n", "line 1: the name 'ROOT_DIR' is not a literal"),
        ("A = 1 + 2\n", "line 1: the expression '1 + 2' is not a literal"),
        ("A = {'a': 1, **B}\n", "line 1: '**' inside a dict"),
        ("A = f'{x}'\n", "line 1: the f-string"),
        ("A = {1, 2}\n", "line 1: the set"),
        ("A = {{'a': 1}: 2}\n", "line 1: a dict as a dict key \"{'a': 1}\""),
        ("A = {[1]: 2}\n", "line 1: a list or tuple as a dict key '[1]'"),
        ("A = b'x'\n", "line 1: bytes literal"),
        ("A = 1j\n", "line 1: complex literal"),
        ("PATHS['x'] = 1\n", "line 1: an assignment to an item \"PATHS['x']\""),
        ("A += [1]\n", "line 1: an augmented assignment"),
        ("A = B = 1\n", "line 1: an assignment to 'A, B'"),
        ("A, B = 1, 2\n", "line 1: an assignment to '(A, B)'"),
        ("x.update({})\n", "line 1: a call"),
        ("if True:\n    A = 1\n", "line 1: a if statement"),
        ("A = (\n", "line 1: Python syntax error"),
        ("A = 1\n  B = 2\n", "line 2: Python syntax error: unexpected indent"),
    ],
)
def test_anything_but_literal_assignments_is_one_line_naming_the_line(text: str, expected: str) -> None:
    message = error(text)
    assert expected in message
    assert "\n" not in message


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    message = error("A = " + "[" * 3000 + "]" * 3000 + "\n")
    assert message.startswith("conf file x.conf: ")


def test_values_are_bounded_like_every_input() -> None:
    message = error("A = " + "[" * 70 + "]" * 70 + "\n")
    assert message == "conf file x.conf: line 1: A: nested more than 64 levels deep; vsperf refuses it"
    assert "more than 200,000 values" in error("A = [" + "0," * 200_001 + "]\n")


def test_sniffing_vsperf_form() -> None:
    assert looks_like_pyconf("# c\n\nTRAFFICGEN = 'Dummy'\n")
    assert looks_like_pyconf("PATHS['x'] = 1\n") and looks_like_pyconf("import os\n")
    assert not looks_like_pyconf("# c\nTRAFFICGEN: dummy\n")
    assert not looks_like_pyconf("- Name: x\n") and not looks_like_pyconf("")


SETTINGS: dict[str, Any] = {"D": 10, "T": {"l3": {"dstip": "198.18.1.1"}, "sizes": [64, 128]}}


def lookup(name: str) -> Any:
    return SETTINGS[name]


def test_param_macro() -> None:
    assert expand_params("#PARAM(D)", lookup, "w") == 10  # a whole macro keeps the type
    assert expand_params("x#PARAM(D)y", lookup, "w") == "x10y"
    assert expand_params({"a": ["#PARAM(T['l3']['dstip'])"]}, lookup, "w") == {"a": ["198.18.1.1"]}
    assert expand_params("#PARAM(T['sizes'][1])", lookup, "w") == 128
    with pytest.raises(ConfigError, match=r"w: #PARAM\(X\) names no setting 'X'"):
        expand_params("#PARAM(X)", lookup, "w")
    with pytest.raises(ConfigError, match="has no item 'nope'"):
        expand_params("#PARAM(T['nope'])", lookup, "w")


def test_per_vm_macros_are_left_for_the_vnf() -> None:
    # VSPERF expands #VMINDEX, #MAC, #IP and #EVAL per VM in GUEST_* settings only: kept as text here
    text = "#EVAL(6+2*#VMINDEX)"
    assert expand_params(text, lookup, "w") == text
    assert expand_params("#EVAL(#PARAM(D)*2)", lookup, "w") == "#EVAL(10*2)"


def test_upstream_conf_files_are_read_or_refused_cleanly() -> None:
    upstream = Path(__file__).resolve().parents[3] / "shared" / "vsperf-upstream" / "conf"
    if not upstream.is_dir():
        pytest.skip(f"upstream VSPERF conf files not found in {upstream}")
    for path in sorted(upstream.glob("*.conf")):
        try:
            values = read_pyconf(path.read_text(), path.name)
        except ConfigError as exc:  # files that compute paths with os.path: refused, one line
            assert str(exc).startswith(f"{path.name}: line ") and "\n" not in str(exc)
        else:
            assert values, path.name

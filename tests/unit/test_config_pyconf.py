"""VSPERF's Python conf files, read without running them; #PARAM and #EVAL macros."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from vsperf.config.pyconf import expand_params, looks_like_pyconf, read_conf_names, read_pyconf
from vsperf.config.pyexpr import Evaluator, NotComputable
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
    assert read_pyconf("helper = 4\nA = helper + 1\n", "f") == {"A": 5}  # but later values may use them


@pytest.mark.parametrize(
    "text, expected",
    [
        ("import os\nA = os.path.join('a')\n",
         "conf file x.conf: line 2: A: it uses os, not computed (line 1: an import (the file is never run))"),
        ("from x import y\nB = y\n", "line 2: B: it uses y, not computed (line 1: an import"),
        ("A = 1\nB = 'a'.zfill(3)\n", "line 2: B: a call \"'a'.zfill(3)\" needs Python to run"),
        ("A = ROOT_DIR\n", "line 1: A: the name 'ROOT_DIR' is not defined earlier"),
        ("A = {'a': 1, **B}\n", "line 1: A: '**' inside a dict"),
        ("A = f'{x}'\n", "line 1: A: the f-string"),
        ("A = {1, 2}\n", "line 1: A: the set"),
        ("A = {{'a': 1}: 2}\n", "line 1: A: a dict as a dict key \"{'a': 1}\""),
        ("A = {[1]: 2}\n", "line 1: A: a list or tuple as a dict key '[1]'"),
        ("A = b'x'\n", "line 1: A: bytes literal"),
        ("A = 1j\n", "line 1: A: complex literal"),
        ("A = 2 ** 8\n", "line 1: A: the operator in '2 ** 8' is not computed"),
        ("A = open('/etc/passwd')\n", "line 1: A: a call \"open('/etc/passwd')\" needs Python to run"),
        ("A = [x for x in 'ab']\n", "line 1: A: the comprehension"),
        ("A = 'x' * 2000000\n", "line 1: A: \"'x' * 2000000\" makes more than 1,000,000 items"),
        ("A = 1 << 1000\n", "line 1: A: a shift of 1000 bits"),
        ("A = '{0.__class__}'.format(1)\n", "line 1: A: format field {0.__class__}: only {}, {N} and {name}"),
        ("PATHS['x'] = 1\n", "line 1: an assignment to an item \"PATHS['x']\""),
        ("x.update({})\n", "line 1: a call"),
        ("if True:\n    A = 1\n", "line 1: a if statement"),
        ("A = (\n", "line 1: Python syntax error"),
        ("A = 1\n  B = 2\n", "line 2: Python syntax error: unexpected indent"),
    ],
)
def test_what_cannot_be_computed_is_one_line_naming_the_line(text: str, expected: str) -> None:
    message = error(text)
    assert expected in message
    assert "\n" not in message


def test_values_built_from_earlier_names_as_vsperf_files_do() -> None:
    text = ("STEP_INIT = [['vswitch', 'add_switch', 'int_br0']]\n"
            "STEP_FINIT = [['vswitch', 'del_switch', 'int_br0']]\n"
            "TESTS = [{'Name': 'a', 'TestSteps': STEP_INIT + STEP_FINIT}]\n"
            "TESTS += [{'Name': 'b'}]\n"
            "TESTS = TESTS + [{'Name': 'c'}]\n"
            "_CORE = 4\n_MASK = str(hex(1 << _CORE))[2:]\n"
            "_CMD = 'set {}:{}'.format(_CORE, _MASK)\n"
            "LOSS = round(100 - 1 / 65536 * 100, 3)\n"
            "A = B = 7\nC, D = 1, 2\n")
    values = read_pyconf(text, "f")
    assert [t["Name"] for t in values["TESTS"]] == ["a", "b", "c"]
    assert values["TESTS"][0]["TestSteps"] == [["vswitch", "add_switch", "int_br0"],
                                               ["vswitch", "del_switch", "int_br0"]]
    assert (values["_MASK"], values["_CMD"], values["LOSS"]) == ("10", "set 4:10", 99.998)
    assert (values["A"], values["B"], values["C"], values["D"]) == (7, 7, 1, 2)


def test_names_of_earlier_files_and_what_is_not_computed() -> None:
    first = read_conf_names("TESTS = [{'Name': 'a'}]\nSTEP = [['log', 'x']]\n", "f1")
    second = read_conf_names("from conf import settings\n_LOG = settings.getValue('X')\n"
                             "TESTS = TESTS + [{'Name': 'b', 'TestSteps': STEP}]\n", "f2", first.names)
    assert [t["Name"] for t in second.values["TESTS"]] == ["a", "b"]
    assert second.unavailable["_LOG"] == ("line 2: it uses settings, not computed (line 1: an import "
                                          "(the file is never run))")
    assert "_LOG" not in second.values and "settings" not in second.names
    # a file variable that cannot be computed is left out of the settings (a step reading it fails)
    assert read_pyconf("from conf import settings\n_LOG = settings.getValue('X')\nA = 1\n", "f") == {"A": 1}


def test_step_expressions_as_vsperf_evaluated_them() -> None:
    ev = Evaluator()
    assert ev.expression("['3'] > ['12'] and len([1, 2]) == 2") is True
    assert ev.expression("round(float('9.5e3') * 8 / 1000) == 76") is True
    assert ev.expression("'0' not in ['1', '2']") is True
    assert ev.expression("'/lib/x/igb_uio.ko'.split('/')[-1].split('.')[0]") == "igb_uio"
    assert ev.expression("int('9000') == 9000 if True else False") is True
    for text, problem in (("__import__('os')", "a call"), ("().__class__", "the attribute"),
                          ("(lambda: 1)()", "a call"), ("[1] is [1]", "'is' compares objects"),
                          ("1 / 0", "ZeroDivisionError"), ("x", "the name 'x' is not defined earlier")):
        with pytest.raises(NotComputable, match=re.escape(problem)):
            ev.expression(text)


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
        except ConfigError as exc:  # files that compute paths with os.path or set PATHS['x']: refused, one line
            assert str(exc).startswith(f"{path.name}: line ") and "\n" not in str(exc)
        else:
            assert values, path.name

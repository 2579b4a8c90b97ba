"""VSPERF's expressions computed from their syntax tree: what is computed, what is refused, bounds."""

from __future__ import annotations

import pytest

from vsperf.config.pyexpr import MAX_ITEMS, Evaluator, NotComputable, safe_format


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("[1] + [2, 3]", [1, 2, 3]),
        ("(1, 2) + (3,)", [1, 2, 3]),  # tuples are lists, as everywhere in vsperf
        ("'a' + 'b' * 3", "abbb"),
        ("str(hex(1 << 4))[2:]", "10"),
        ("str(hex((1 << 4) + (1 << 5)))[2:]", "30"),
        ("round(100 - 1 / 65536 * 100, 3)", 99.998),
        ("'0:{},1:{}'.format(4, 5)", "0:4,1:5"),
        ("'{name}_{uid}{ex}'.format(name='a', uid=1, ex='.log')", "a_1.log"),
        ("{'a': [1, -2][-1]}", {"a": -2}),
        ("1 if 2 > 1 else 0", 1),
        ("not 0 and 3 or 4", 3),
        ("1 < 2 < 3", True),
        ("'b' in ['a', 'b'] and 'c' not in 'ab'", True),
        ("max(3, 7) - min([4, 2]) + abs(-1) + sum([1, 2]) + len('ab') + int('3') + float('0.5')", 14.5),
        ("'A/B.C'.lower().split('/')[-1].replace('.', '-')", "b-c"),
        ("~0 & 0xff ^ 0x0f | 0x100", 0x1F0),
        ("'{{x}}'.format()", "{x}"),
    ],
)
def test_computed(text: str, value: object) -> None:
    assert Evaluator().expression(text) == value


def test_names_given_by_the_caller() -> None:
    ev = Evaluator({"STEP_INIT": [["vswitch", "add_switch", "br0"]], "_CORE": 4})
    assert ev.expression("STEP_INIT + [['log', 'info', 'x']]")[1] == ["log", "info", "x"]
    assert ev.expression("str(1 << _CORE)") == "16"
    # a builtin's name given as a name is the name's value, never the function
    assert Evaluator({"len": [1]}).expression("len + [2]") == [1, 2]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("__import__('os').system('true')", "a call"),
        ("os.path.join('a')", "the attribute 'os.path' needs Python to run"),
        ("os", "the name 'os' is not defined earlier"),
        ("(1).__class__", "the attribute"),
        ("[x for x in 'ab']", "the comprehension"),
        ("lambda: 1", "the lambda"),
        ("f'{1}'", "the f-string"),
        ("{1, 2}", "the set"),
        ("2 ** 8", "the operator in '2 ** 8' is not computed"),
        ("'%s' % 1", "'%' formatting"),
        ("1 << 10000", "a shift of 10000 bits"),
        ("'x' * (MAX + 1)", "makes more than"),
        ("[0] * (MAX + 1)", "makes more than"),
        ("'{0.__class__}'.format(1)", "only {}, {N} and {name} are read"),
        ("'{:>99999999}'.format(1)", "only {}, {N} and {name} are read"),
        ("'{}{}'.format(1)", "needs more arguments"),
        ("len(x=1)", "keyword arguments"),
        ("max(*[1, 2])", "'*' or '**' arguments"),
        ("[1] is [1]", "'is' compares objects"),
        ("1 / 0", "ZeroDivisionError"),
        ("[1][5]", "IndexError"),
        ("b'x'", "bytes literal"),
        ("1 +", "Python syntax error"),
    ],
)
def test_refused_in_one_line(text: str, problem: str) -> None:
    with pytest.raises(NotComputable) as info:
        Evaluator({"MAX": MAX_ITEMS}).expression(text)
    assert problem in info.value.problem and "\n" not in info.value.problem


def test_format_fields() -> None:
    assert safe_format("{0}-{0}-{}", ["a", "b"], {}) == "a-a-a"
    with pytest.raises(NotComputable, match="unmatched brace"):
        safe_format("{", [], {})

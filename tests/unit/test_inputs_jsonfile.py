"""Strict, bounded JSON: no NaN or infinity, nesting bounded, each refusal one line."""

from __future__ import annotations

import pytest

from vsperf.inputs import JsonError, ShapeError, load_json


def test_valid_json() -> None:
    assert load_json('{"a": [1, 2.5, null, "x"]}', "f") == {"a": [1, 2.5, None, "x"]}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": NaN}', r"^f: not valid JSON \(NaN is not a JSON number\)$"),
        ('[Infinity]', r"^f: not valid JSON \(Infinity is not a JSON number\)$"),
        ('[1e999]', r"^f: holds inf, which is not a number vsperf writes$"),
        ('{"a": ', r"^f: not valid JSON \(Expecting value at line 1, column 7\)$"),
        ("[" * 150 + "]" * 150, r"^f: nested more than 100 levels deep; vsperf refuses it$"),
        ("[" * 100_000 + "]" * 100_000, r"^f: nested more than 100 levels deep; vsperf refuses it$"),
    ],
)
def test_refused(text: str, message: str) -> None:
    with pytest.raises((JsonError, ShapeError), match=message):
        load_json(text, "f")

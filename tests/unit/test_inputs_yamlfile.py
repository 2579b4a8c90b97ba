"""Strict, bounded YAML: YAML 1.2 scalars, no duplicate key, aliases and nesting bounded before
any value is built."""

from __future__ import annotations

import time

import pytest

from vsperf.errors import ConfigError
from vsperf.inputs import load_yaml
from vsperf.inputs.limits import MAX_NODES


def bomb(levels: int = 9, width: int = 9) -> str:
    """The classic 'billion laughs': `width`**`levels` values from a few hundred bytes."""
    lines = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    text = bomb()
    assert len(text) < 500
    started = time.monotonic()
    with pytest.raises(ConfigError, match=rf"^conf file x\.yaml: more than {MAX_NODES:,} values \(YAML aliases "):
        load_yaml(text, "conf file x.yaml")
    assert time.monotonic() - started < 1


def test_aliases_within_the_bound_are_fine() -> None:
    data = load_yaml("base: &b {bidir: false, frame_rate: 50}\nTRAFFIC: *b\nOTHER: *b\n", "f")
    assert data["TRAFFIC"] == data["OTHER"] == {"bidir": False, "frame_rate": 50}
    assert isinstance(load_yaml(bomb(levels=3, width=9), "f"), dict)  # 9**3 values


def test_a_value_containing_itself_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"^v: a value contains itself \(a YAML alias to an enclosing anchor\)$"):
        load_yaml("&a [*a]", "v")
    with pytest.raises(ConfigError, match=r"contains itself"):
        load_yaml("a: &x {b: [1, {c: *x}]}", "v")


def test_nesting_is_bounded() -> None:
    assert load_yaml("[" * 60 + "]" * 60, "f") is not None
    with pytest.raises(ConfigError, match=r"^f: nested more than 64 levels deep; vsperf refuses it$"):
        load_yaml("[" * 70 + "]" * 70, "f")
    with pytest.raises(ConfigError, match=r"^f: "):  # deeper than PyYAML's own recursion: still one line
        load_yaml("[" * 5000 + "]" * 5000, "f")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("port: 37:02", {"port": "37:02"}),  # YAML 1.1 read sexagesimal 2222
        ("a: yes", {"a": "yes"}),
        ("a: 017", {"a": 17}),
        ("a: 2016-05-11", {"a": "2016-05-11"}),
        ("a: 5e6", {"a": 5e6}),
    ],
)
def test_yaml_1_2_scalars(text: str, expected: object) -> None:
    assert load_yaml(text, "f") == expected


def test_duplicate_keys_are_errors() -> None:
    with pytest.raises(ConfigError, match=r"^f: malformed YAML at line 2, column 1: duplicate key 'dut_host'$"):
        load_yaml("dut_host: a\ndut_host: b\n", "f")


def test_an_empty_document_is_none() -> None:
    assert load_yaml("", "f") is None
    assert load_yaml("# only a comment\n", "f") is None

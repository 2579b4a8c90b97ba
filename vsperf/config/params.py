"""Reading values: --test-params strings, single values (Python literal or YAML).

YAML goes through vsperf.inputs' strict, bounded loader (YAML 1.2 core scalars, duplicate keys
refused, aliases and nesting bounded); Python literals are bounded the same way once parsed, and
a single value is at most VALUE_MAX_CHARS long.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any

from vsperf.config.types import show
from vsperf.errors import ConfigError
from vsperf.inputs import StrictLoader, check_shape, check_value_text, load_yaml
from vsperf.inputs.limits import VALUE_MAX_CHARS

__all__ = ["StrictLoader", "load_yaml", "parse_test_params", "parse_value", "render_value", "split_param_sets",
           "split_test_params"]


def _lists(value: Any) -> Any:
    """Python literals as plain values: tuples become lists, at any depth."""
    if isinstance(value, list | tuple):
        return [_lists(x) for x in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value


def parse_value(text: str, where: str) -> Any:
    """Read one --test-params (or environment) value: YAML, or a VSPERF-style Python literal.

    A text that is a Python literal is read as Python, safely (ast.literal_eval): VSPERF users
    write `(64,128)`, `None` and `{'bidir': False}`; YAML would read the first two as strings.
    For every other literal (numbers, quoted strings, lists, dicts of them) YAML reads the same
    value. Anything else is read as YAML: `true`, `{bidir: false}`, `/tmp/x`, `info`.
    """
    stripped = check_value_text(text, where, VALUE_MAX_CHARS).strip()
    try:
        literal = ast.literal_eval(stripped)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return load_yaml(stripped, where)
    return _lists(check_shape(literal, where))


_OPENERS, _CLOSERS, _QUOTES = "([{", ")]}", "'\""
# A quote opens a quoted string only where a value can start, so that an apostrophe inside a
# plain word ("it's") is not taken for one.
_QUOTE_MAY_FOLLOW = "=([{,:"


def split_test_params(text: str) -> list[str]:
    """Split "K=V;K2=V2" at the semicolons outside brackets and quotes."""
    chunks: list[str] = []
    current: list[str] = []
    depth, quote, escaped, prev = 0, "", False, ""
    for ch in text:
        if quote:
            current.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote, prev = "", ch
            continue
        if ch == ";" and depth == 0:
            chunks.append("".join(current))
            current, prev = [], ""
            continue
        if ch in _QUOTES and (prev == "" or prev in _QUOTE_MAY_FOLLOW):
            quote = ch
        elif ch in _OPENERS:
            depth += 1
        elif ch in _CLOSERS:
            depth = max(0, depth - 1)
        current.append(ch)
        if not ch.isspace():
            prev = ch
    if quote:
        raise ConfigError(f"--test-params: unterminated {quote} quote in {show(''.join(current).strip())}")
    if depth:
        raise ConfigError(f"--test-params: unclosed bracket in {show(''.join(current).strip())}")
    chunks.append("".join(current))
    return chunks


def parse_test_params(text: str) -> dict[str, Any]:
    """Parse VSPERF's --test-params "KEY=VALUE;KEY2=VALUE2" into raw (not yet validated) values.

    Semicolons inside brackets or quotes do not separate settings; a bare KEY means KEY=True
    (as in VSPERF); a setting given twice is a ConfigError.
    """
    params: dict[str, Any] = {}
    for chunk in split_test_params(text):
        part = chunk.strip()
        if not part:
            continue
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq:
            if not key.replace("_", "").isalnum():
                raise ConfigError(f"--test-params: {show(part)} is not KEY=VALUE or KEY (separate settings "
                                  f"with ';')")
            value = "True"  # VSPERF: a bare KEY is KEY=True
        if not key:
            raise ConfigError(f"--test-params: {show(part)} has no setting name before '='")
        if key in params:
            raise ConfigError(f"--test-params: {key} is given twice")
        params[key] = parse_value(value, f"--test-params value of {key}")
    return params


_PLAIN_RE = re.compile(r"[A-Za-z0-9_/.~][A-Za-z0-9_/.~@+-]*")


def split_param_sets(values: Sequence[str]) -> list[str]:
    """VSPERF's --test-params sweep: each --test-params, or each string of one given as a Python
    list of strings ("['A=1;B=2', 'A=3']"), is one set of parameters the tests run with."""
    sets: list[str] = []
    for value in values:
        text = value.strip()
        if text.startswith("["):
            try:
                parsed = ast.literal_eval(text)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                parsed = None
            if isinstance(parsed, list) and all(isinstance(x, str) for x in parsed):
                if not parsed:
                    raise ConfigError("--test-params: an empty list of parameter sets")
                sets.extend(parsed)
                continue
        sets.append(value)
    return sets


def render_value(value: Any) -> str:
    """Render a setting's value on one line, in a form parse_value reads back as the same value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        if _PLAIN_RE.fullmatch(value) and parse_value(value, "rendering") == value:
            return value
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(render_value(x) for x in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{render_value(k)}: {render_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))

"""The macros of a step's arguments, expanded when the step runs (VSPERF's rules, without `eval`).

- `#STEP[n]`, `#STEP[label]`, with subscripts (`#STEP[-1][0]["frame_loss_percent"]`): the result of
  an earlier step, inserted as text (`str`, as VSPERF did).
- `$NAME`, `$NAME['key'][0]`: a setting, a file variable (`$_NAME`) or one of the step constants
  (TOOLS, RESULTS_PATH, VSWITCH_BRIDGE_NAME), as text; a `$word` that names none of them is left
  as it is (VSPERF's rule: `sed '...,$d'` keeps its `$d`).
- `#PARAM(NAME)` was expanded when the file was read (vsperf.config.pyconf).

Subscripts are integers or quoted strings; anything else is a StepError naming the macro.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vsperf.errors import VsperfError
from vsperf.steps.model import SETTING_REF_RE, STEP_REF_RE

_SUBSCRIPT_RE = re.compile(r"\[([^\[\]]+)\]")


class StepError(VsperfError):
    """A step failed: its action raised, its check did not hold, or a macro does not resolve."""


def _key(text: str, macro: str) -> int | str:
    try:
        key = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        raise StepError(f"{macro}: subscript [{text}] is neither a number nor a quoted string") from None
    if isinstance(key, bool) or not isinstance(key, int | str):
        raise StepError(f"{macro}: subscript [{text}] is neither a number nor a quoted string")
    return key


def subscript(value: Any, subscripts: str, macro: str) -> Any:
    """`value[k1][k2]...` for the subscripts text '[k1][k2]'."""
    for text in _SUBSCRIPT_RE.findall(subscripts):
        key = _key(text, macro)
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            raise StepError(f"{macro}: {type(value).__name__} {str(value)[:60]!r} has no item [{text}]") from None
    return value


def step_value(key: str, results: Sequence[Any], labels: Mapping[str, int], macro: str) -> Any:
    """The result `#STEP[key]` refers to (results: those of the steps run so far)."""
    if key in labels:
        index = labels[key]
    else:
        try:
            index = int(key)
        except ValueError:
            raise StepError(f"{macro}: no earlier step is labelled {key!r}") from None
    try:
        return results[index]
    except IndexError:
        raise StepError(f"{macro}: no step {key} has run yet") from None


def expand(value: Any, results: Sequence[Any], labels: Mapping[str, int],
           lookup: Callable[[str], Any]) -> Any:
    """`value` (an argument: a string, or lists and dicts of them) with its macros expanded.
    `lookup(NAME)` returns a setting's value or raises KeyError."""
    if isinstance(value, str):
        def step_ref(match: re.Match[str]) -> str:
            found = step_value(match.group(1), results, labels, match.group(0))
            return str(subscript(found, match.group(2), match.group(0)))

        def setting_ref(match: re.Match[str]) -> str:
            try:
                found = lookup(match.group(1))
            except KeyError:
                return match.group(0)
            return str(subscript(found, match.group(2), match.group(0)))
        return SETTING_REF_RE.sub(setting_ref, STEP_REF_RE.sub(step_ref, value))
    if isinstance(value, list | tuple):
        return [expand(v, results, labels, lookup) for v in value]
    if isinstance(value, dict):
        return {k: expand(v, results, labels, lookup) for k, v in value.items()}
    return value


def filter_output(output: Any, regex: str) -> list[Any]:
    """VSPERF's output filter: every match of `regex` in each line of `output` (a string), or in
    each item of a list (one list of matches per item)."""
    pattern = re.compile(regex)
    if isinstance(output, str):
        found: list[Any] = []
        for line in output.splitlines():
            found += pattern.findall(line)
        return found
    if isinstance(output, list | tuple):
        return [filter_output(item, regex) for item in output]
    raise StepError(f"the filter |{regex} needs text or a list of texts, the step returned {type(output).__name__}")

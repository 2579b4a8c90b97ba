"""A TestSteps list, parsed and checked as a whole before anything is deployed.

VSPERF's step syntax, kept as written:

- `['vswitch', 'add_switch', 'int_br0']`: object, action, arguments;
- `['#port', 'vswitch', 'add_phy_port', 'int_br0']`: a label; `#STEP[port]` refers to its result;
- `['!vswitch', 'add_flow', ...]`: `!` skips the check of the step's result;
- a last argument `'|regex'` keeps only what the regex finds in the step's output;
- `#STEP[n]` (n-th step, from 0; negative: counted back from the current step), `#STEP[label]`,
  with subscripts (`#STEP[1][0]`, `#STEP[-1][0]["frame_loss_percent"]`) anywhere in an
  argument; `$NAME` and `$NAME['key'][0]` insert a setting (or a file variable `$_NAME`).

`parse_steps` refuses, in one line naming the step: an unknown object or action (naming the
closest), a wrong number of arguments, a reference to a step that does not come earlier, a label
used twice or made of digits, an action vsperf does not run (and why), and a command (`tools
exec_shell`, a VNF's `execute_and_wait`) that is not a string, is empty or has unbalanced quotes
(the commands run through a shell, as in VSPERF: shell syntax is theirs to use).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from vsperf.errors import ConfigError
from vsperf.steps.actions import (
    ACTIONS,
    BARE_OBJECTS,
    REFUSED_SETTINGS,
    Action,
    closest,
    find_action,
    known_objects,
    object_kind,
)

MAX_STEPS = 1000
STEP_REF_RE = re.compile(r"#STEP\[([\w\-:]+)\]((?:\[[\w\-'\"]+\])*)")
SETTING_REF_RE = re.compile(r"\$([A-Za-z_][\w\-]*)((?:\[[^\[\]]+\])*)")
LABEL_RE = re.compile(r"[A-Za-z_][\w\-]*")


@dataclass(frozen=True)
class Step:
    """One step of a TestSteps list."""

    index: int  # 0-based position: #STEP[index]
    raw: tuple[Any, ...]  # as written, for messages and results
    obj: str  # object as written without '!' ("vswitch", "vnf1", "VNF0", "tools", "sleep", ...)
    kind: str  # its table entry ("vnf" for vnf1, "VNF" for VNF0)
    action: str  # canonical action ("" for sleep and wait)
    args: tuple[Any, ...]
    label: str | None = None
    check: bool = True  # False: '!' (the result is not checked)
    regex: str | None = None  # '|regex' filter of the output

    @property
    def text(self) -> str:
        """The step as written, on one line (shortened)."""
        text = json.dumps(list(self.raw), default=str)
        return text if len(text) <= 160 else text[:157] + "..."


def strings(value: Any) -> Iterator[str]:
    """Every string inside `value` (lists, tuples and dicts, keys and values)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings(key)
            yield from strings(item)


def _where(test: str, index: int, raw: Any) -> str:
    text = json.dumps(raw, default=str) if isinstance(raw, list | tuple) else repr(raw)
    return f"test {test}: step {index} {text if len(text) <= 120 else text[:117] + '...'}"


def _split(raw: Sequence[Any], where: str) -> tuple[str | None, bool, str, list[Any]]:
    items = list(raw)
    label = None
    if items and isinstance(items[0], str) and items[0].startswith("#"):
        label = items.pop(0)[1:]
        if not LABEL_RE.fullmatch(label):
            raise ConfigError(f"{where}: label #{label} must start with a letter (VSPERF: not a number)")
    if not items or not isinstance(items[0], str) or not items[0]:
        raise ConfigError(f"{where}: a step starts with an object name (vswitch, vnf, trafficgen, settings, "
                          f"tools, ...)")
    obj = items.pop(0)
    check = not obj.startswith("!")
    return label, check, obj.lstrip("!"), items


def _action(obj: str, kind: str, items: list[Any], where: str) -> tuple[str, Action]:
    if kind in BARE_OBJECTS:
        return "", BARE_OBJECTS[kind]
    if not items or not isinstance(items[0], str):
        raise ConfigError(f"{where}: {obj} needs an action ({', '.join(sorted(ACTIONS[kind]))})")
    action = items.pop(0)
    found = find_action(kind, action)
    if found is None:
        raise ConfigError(f"{where}: unknown action {action!r} of {obj}{closest(action, list(ACTIONS[kind]))}; "
                          f"valid: {', '.join(sorted(ACTIONS[kind]))}")
    return found


def _check_references(step: Step, labels: dict[str, int], where: str) -> None:
    for text in strings(step.args):
        for match in STEP_REF_RE.finditer(text):
            key = match.group(1)
            if re.fullmatch(r"-?\d+", key):
                number = int(key)
                target = number if number >= 0 else step.index + number
                if number >= 0 and number >= step.index:
                    raise ConfigError(f"{where}: #STEP[{key}] refers to step {number}, which does not come "
                                      f"before step {step.index}")
                if target < 0:
                    raise ConfigError(f"{where}: #STEP[{key}] refers to a step before the first one")
            elif key not in labels:
                raise ConfigError(f"{where}: #STEP[{key}] names no earlier step (labels so far: "
                                  f"{', '.join(labels) or 'none'})")


_COMMANDS = {("tools", "exec_shell"), ("tools", "exec_shell_background"), ("vnf", "execute"),
             ("vnf", "execute_and_wait"), ("VNF", "execute"), ("VNF", "execute_and_wait")}


def check_command(command: Any) -> str:
    """What is wrong with a step's shell command ("" when nothing): not a string, empty, or
    unbalanced quotes (a #STEP or $NAME reference counts as a word). Checked when the step list
    is parsed and again, expanded, when the command runs."""
    if not isinstance(command, str):
        return "takes a command line (a string)"
    try:
        words = shlex.split(SETTING_REF_RE.sub("x", STEP_REF_RE.sub("x", command)))
    except ValueError as exc:
        return f"{exc} in {command!r}"
    return "" if words else "an empty command"


def _check_command(step: Step, where: str) -> None:
    """A command a step runs through a shell: `check_command`."""
    if (step.kind, step.action) not in _COMMANDS or not step.args:
        return
    problem = check_command(step.args[0])
    if problem:
        joint = " " if problem.startswith("takes") else ": "
        raise ConfigError(f"{where}: {step.obj} {step.action}{joint}{problem}")


def parse_step(test: str, index: int, raw: Any, labels: dict[str, int]) -> Step:
    """Step `index` of test `test` (`labels`: those of the earlier steps, updated)."""
    where = _where(test, index, raw)
    if not isinstance(raw, list | tuple):
        raise ConfigError(f"{where}: a step is a list [object, action, arguments...]")
    label, check, obj, items = _split(raw, where)
    kind = object_kind(obj)
    if kind is None:
        raise ConfigError(f"{where}: unknown object {obj!r}{closest(obj, known_objects())}; valid: "
                          f"{', '.join(known_objects())} (vnfN, VNFN)")
    action, entry = _action(obj, kind, items, where)
    regex = None
    if items and isinstance(items[-1], str) and items[-1].startswith("|"):
        regex = items.pop()[1:]
        if not STEP_REF_RE.search(regex) and not SETTING_REF_RE.search(regex):
            try:
                re.compile(regex)
            except re.error as exc:
                raise ConfigError(f"{where}: the filter |{regex} is not a valid regular expression: {exc}") from None
    if entry.refused:
        raise ConfigError(f"{where}: vsperf does not run {obj} {action or ''}: {entry.refused}".replace("  ", " "))
    if not entry.min_args <= len(items) <= entry.max_args:
        wanted = str(entry.min_args) if entry.min_args == entry.max_args else f"{entry.min_args}..{entry.max_args}"
        raise ConfigError(f"{where}: {obj} {action} takes {wanted} argument(s), got {len(items)}".replace("  ", " "))
    if label is not None and label in labels:
        raise ConfigError(f"{where}: label #{label} is already the label of step {labels[label]}")
    step = Step(index, tuple(raw), obj, kind, action, tuple(items), label, check, regex)
    _check_references(step, labels, where)
    _check_command(step, where)
    if kind == "settings" and action == "setValue" and str(items[0]) in REFUSED_SETTINGS:
        raise ConfigError(f"{where}: vsperf does not set {items[0]}: {REFUSED_SETTINGS[str(items[0])]}")
    if label is not None:
        labels[label] = index
    return step


def parse_steps(test: str, raw: Any) -> tuple[Step, ...]:
    """The steps of test `test`, checked as a whole (ConfigError naming the first bad step)."""
    if not isinstance(raw, list | tuple):
        raise ConfigError(f"test {test}: TestSteps must be a list of steps")
    if len(raw) > MAX_STEPS:
        raise ConfigError(f"test {test}: {len(raw)} steps; at most {MAX_STEPS}")
    labels: dict[str, int] = {}
    return tuple(parse_step(test, i, item, labels) for i, item in enumerate(raw))


def step_vnfs(steps: Sequence[Step]) -> list[str]:
    """The step VNFs (`vnf`, `vnf1`, ...) in the order they first appear: VNF i uses the switch's
    virtual ports 2i and 2i+1 (VSPERF's order)."""
    names: list[str] = []
    for step in steps:
        if step.kind == "vnf" and step.obj not in names:
            names.append(step.obj)
    return names

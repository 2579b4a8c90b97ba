"""VSPERF's per-VM guest settings: list semantics and the #VMINDEX, #MAC, #IP, #EVAL macros.

Every `GUEST_*` setting is a list with one entry per VM; a shorter list is extended with its
first entry (VSPERF's rule), and a plain value applies to every VM. Strings (also inside
tuples/lists, e.g. GUEST_CORE_BINDING) may carry macros, expanded per VM index:

- `#VMINDEX` -> the VM's index (0, 1, ...), replaced first so other macros can use it;
- `#MAC(mac[, step])` -> `mac` + index * step (step 1 by default);
- `#IP(ip[, step])` -> `ip` + index * step (an IPv4 address; a /prefix after it is kept);
- `#EVAL(expr)` -> the value of an arithmetic expression (+ - * / // % ** and parentheses on
  integers), evaluated by walking its syntax tree: never Python's eval().
"""

from __future__ import annotations

import ast
import ipaddress
import operator
import re
from collections.abc import Callable, Mapping
from typing import Any

from vsperf.errors import ConfigError

_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_MAX_POWER = 64  # keeps "#EVAL(9**9**9)" from eating the machine
_MACRO_RE = re.compile(r"#(MAC|IP|EVAL)\(([^()]*(?:\([^()]*\)[^()]*)*)\)")


def safe_eval(expression: str) -> int | float:
    """The value of an arithmetic `expression` on numbers; ConfigError for anything else."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ConfigError(f"#EVAL({expression}): not an arithmetic expression ({exc.msg})") from exc
    return _eval_node(tree.body, expression)


def _eval_node(node: ast.AST, text: str) -> int | float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval_node(node.left, text), _eval_node(node.right, text)
        if isinstance(node.op, ast.Pow) and abs(right) > _MAX_POWER:
            raise ConfigError(f"#EVAL({text}): exponent {right} is too large")
        try:
            value: int | float = _BINOPS[type(node.op)](left, right)
        except ZeroDivisionError as exc:
            raise ConfigError(f"#EVAL({text}): division by zero") from exc
        return value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        result: int | float = _UNARY[type(node.op)](_eval_node(node.operand, text))
        return result
    raise ConfigError(f"#EVAL({text}): only numbers, + - * / // % ** and parentheses are allowed")


def mac_step(mac: str, index: int, step: int = 1) -> str:
    """`mac` increased by index * step (wrapping within 48 bits), in lower-case colon form."""
    digits = mac.strip().lower().replace("-", ":")
    if not re.fullmatch(r"([0-9a-f]{2}:){5}[0-9a-f]{2}", digits):
        raise ConfigError(f"#MAC({mac}): not a MAC address (expected aa:bb:cc:dd:ee:ff)")
    value = (int(digits.replace(":", ""), 16) + index * step) % (1 << 48)
    raw = f"{value:012x}"
    return ":".join(raw[i:i + 2] for i in range(0, 12, 2))


def ip_step(ip: str, index: int, step: int = 1) -> str:
    """IPv4 `ip` (optionally with a /prefix, kept) increased by index * step."""
    address, slash, prefix = ip.strip().partition("/")
    try:
        value = ipaddress.IPv4Address(address) + index * step
    except (ipaddress.AddressValueError, ipaddress.NetmaskValueError, OverflowError) as exc:
        raise ConfigError(f"#IP({ip}): {exc}") from exc
    return f"{value}{slash}{prefix}"


def _args(name: str, body: str) -> tuple[str, int]:
    first, _, step = body.partition(",")
    if not step.strip():
        return first.strip(), 1
    try:
        return first.strip(), int(safe_eval(step))
    except ConfigError as exc:
        raise ConfigError(f"#{name}({body}): step must be an integer expression") from exc


def expand_macros(text: str, index: int) -> str:
    """`text` with every macro expanded for VM `index` (#VMINDEX first, then innermost first)."""
    text = text.replace("#VMINDEX", str(index))
    while True:
        match = _MACRO_RE.search(text)
        if match is None:
            return text
        name, body = match.group(1), match.group(2)
        if name == "EVAL":
            value = safe_eval(body)
            result = str(int(value) if float(value).is_integer() else value)
        else:
            base, step = _args(name, body)
            result = mac_step(base, index, step) if name == "MAC" else ip_step(base, index, step)
        text = text[: match.start()] + result + text[match.end():]


def expand_value(value: Any, index: int) -> Any:
    """`value` with macros expanded in every string, also inside lists and tuples."""
    if isinstance(value, str):
        return expand_macros(value, index)
    if isinstance(value, (list, tuple)):
        return type(value)(expand_value(item, index) for item in value)
    return value


def per_vm(value: Any, index: int) -> Any:
    """Entry `index` of a per-VM list (VSPERF: missing entries are the first one), expanded."""
    if isinstance(value, (list, tuple)):
        if not value:
            raise ConfigError("a GUEST_* setting needs at least one entry")
        chosen = value[index] if index < len(value) else value[0]
    else:
        chosen = value
    return expand_value(chosen, index)


def guest_setting(settings: Mapping[str, Any], name: str, index: int) -> Any:
    """Setting `name` for VM `index`, with VSPERF's list semantics and macros applied."""
    return per_vm(settings[name], index)

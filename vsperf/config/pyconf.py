"""VSPERF's Python conf files (`10_custom.conf`), read safely: parsed with `ast`, never executed.

A VSPERF conf file is a Python module of assignments such as

    TRAFFICGEN = 'Dummy'
    TRAFFICGEN_PKT_SIZES = (64, 1518)
    TRAFFIC = {'bidir': 'False', 'l3': {'srcip': '#PARAM(VANILLA_TGEN_PORT1_IP)'}}

`read_pyconf` accepts exactly that: `NAME = literal` statements whose values are dicts, lists,
tuples (read as lists), strings, numbers, booleans and None, plus comments and a module docstring.
Anything else (imports, calls, names, `PATHS['x'] = ...`, arithmetic) is a ConfigError naming the
file and the line: such a file needs Python to run, and vsperf never runs a conf file.

VSPERF's own reading is kept where it matters: only UPPER_CASE names are settings (VSPERF drops the
others, so do we, with a warning), a setting assigned None is not set (VSPERF skips None values),
and a later assignment of the same name wins. VSPERF's `#PARAM(NAME)` macro (the value of another
setting, as text, inside a string) is expanded by `expand_params` when the layer is applied. The
per-VM macros (#VMINDEX, #MAC, #IP, #EVAL), which VSPERF expands only in GUEST_* settings, one copy
per VM, are left in the text for the VNF that expands them (vsperf.vnf.qemu.macros).
"""

from __future__ import annotations

import ast
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

from vsperf.errors import ConfigError
from vsperf.inputs import check_shape

log = logging.getLogger(__name__)

_CONSTANT_TYPES = (str, int, float, bool, type(None))
_NEGATABLE = (int, float)


def looks_like_pyconf(text: str) -> bool:
    """Whether a conf file is VSPERF's Python form rather than YAML.

    A VSPERF file's first statement is `NAME = ...`; YAML never has ' = ' before a ':' on the
    first significant line ('KEY: value', '- item', '---').
    """
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        return re.match(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])*\s*(=|\+=)", line) is not None \
            or line.startswith(("import ", "from ", '"""', "'''"))
    return False


class _Literal:
    """Turns an expression node into a plain value, or raises ConfigError naming the line."""

    def __init__(self, origin: str) -> None:
        self.origin = origin

    def fail(self, node: ast.AST, problem: str) -> ConfigError:
        line = getattr(node, "lineno", 0)
        return ConfigError(f"{self.origin}: line {line}: {problem} (vsperf reads only NAME = literal "
                           f"values: dicts, lists, tuples, strings, numbers, True/False/None)")

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            if not isinstance(node.value, _CONSTANT_TYPES):
                raise self.fail(node, f"{type(node.value).__name__} literal {ast.unparse(node)!r}")
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            inner = self.value(node.operand)
            if isinstance(inner, _NEGATABLE) and not isinstance(inner, bool):
                return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.List | ast.Tuple):
            return [self.value(x) for x in node.elts]  # tuples become lists, as in --test-params
        if isinstance(node, ast.Dict):
            out: dict[Any, Any] = {}
            for key_node, value_node in zip(node.keys, node.values, strict=True):
                if key_node is None:
                    raise self.fail(value_node, "'**' inside a dict")
                key = self.value(key_node)
                if isinstance(key, list | dict):
                    kind = "a list or tuple" if isinstance(key, list) else "a dict"
                    raise self.fail(key_node, f"{kind} as a dict key {_snippet(key_node)!r}")
                out[key] = self.value(value_node)
            return out
        raise self.fail(node, f"{_describe(node)} {_snippet(node)!r} is not a literal")


def _describe(node: ast.AST) -> str:
    names = {ast.Call: "a call", ast.Name: "the name", ast.Attribute: "the attribute",
             ast.BinOp: "the expression", ast.Subscript: "the subscript", ast.JoinedStr: "the f-string",
             ast.Set: "the set", ast.Lambda: "the lambda", ast.ListComp: "the comprehension"}
    return names.get(type(node), "the expression")


def _snippet(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 50 else text[:47] + "..."


def _statement_problem(stmt: ast.stmt) -> str:
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return "an import (the file is never executed, so it cannot use modules)"
    if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if isinstance(stmt, ast.AugAssign):
            return f"an augmented assignment {_snippet(stmt)!r}"
        if any(isinstance(t, ast.Subscript) for t in targets):
            return f"an assignment to an item {_snippet(targets[0])!r}: assign the whole setting instead"
        return f"an assignment to {', '.join(_snippet(t) for t in targets)!r}"
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return f"a call {_snippet(stmt.value)!r}"
    return f"a {type(stmt).__name__.lower()} statement"


def read_pyconf(text: str, origin: str) -> dict[str, Any]:
    """The settings a VSPERF conf file assigns, by name, in file order (last assignment wins).

    `origin` names the file in messages ('conf file /x/10_custom.conf'). Raises ConfigError.
    """
    try:
        tree = ast.parse(text, filename=origin)
    except SyntaxError as exc:
        raise ConfigError(f"{origin}: line {exc.lineno}: Python syntax error: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        raise ConfigError(f"{origin}: cannot parse as a VSPERF conf file: {exc}") from None
    literal = _Literal(origin)
    values: dict[str, Any] = {}
    ignored: list[str] = []
    for index, stmt in enumerate(tree.body):
        if (index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)):
            continue  # the module docstring
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            raise ConfigError(f"{origin}: line {stmt.lineno}: {_statement_problem(stmt)} "
                              f"(vsperf reads only NAME = literal assignments and never runs the file)")
        name = stmt.targets[0].id
        try:
            value = check_shape(literal.value(stmt.value), f"{origin}: line {stmt.lineno}: {name}")
        except RecursionError:
            raise ConfigError(f"{origin}: line {stmt.lineno}: {name} is nested too deeply") from None
        if not name.isupper():
            ignored.append(name)  # VSPERF keeps only UPPER_CASE names as settings
            continue
        if value is None:
            values.pop(name, None)  # VSPERF skips settings whose value is None
            continue
        values.pop(name, None)  # keep file order of the last assignment
        values[name] = value
    if ignored:
        log.warning("%s: ignoring %s: only UPPER_CASE names are settings (as in VSPERF)",
                    origin, ", ".join(sorted(set(ignored))))
    return values


# --- VSPERF's macros ----------------------------------------------------------------------------

_PARAM_RE = re.compile(r"#PARAM\((([\w\-]+)((?:\[[\w\-'\"]+\])*))\)")
_INDEX_RE = re.compile(r"\[['\"]?([\w\-]+)['\"]?\]")


def _lookup(expression: str, name: str, subscripts: str, lookup: Callable[[str], Any]) -> Any:
    value = lookup(name)
    for key in _INDEX_RE.findall(subscripts):
        try:
            if isinstance(value, list):
                value = value[int(key)]
            elif isinstance(value, Mapping):
                value = value[key] if key in value else value[int(key)]
            else:
                raise KeyError(key)
        except (KeyError, IndexError, ValueError):
            raise ConfigError(f"#PARAM({expression}): {name} has no item {key!r}") from None
    return value


def expand_params(value: Any, lookup: Callable[[str], Any], where: str) -> Any:
    """Replace VSPERF's `#PARAM(NAME)` / `#PARAM(NAME['key'][0])` inside strings, at any depth.

    As in VSPERF the referred value is inserted as text (`str(value)`); a string that is exactly
    one macro becomes the referred value itself, so `'#PARAM(TRAFFICGEN_PKT_SIZES)'` stays a list.
    `lookup(NAME)` returns a setting's value or raises KeyError; an unknown NAME is a ConfigError
    naming `where` (VSPERF left such a macro in place, to fail later far from the cause).
    """
    if isinstance(value, str):
        if "#PARAM(" not in value:
            return value
        whole = _PARAM_RE.fullmatch(value)

        def resolve(match: re.Match[str]) -> Any:
            try:
                return _lookup(match.group(1), match.group(2), match.group(3), lookup)
            except KeyError:
                raise ConfigError(f"{where}: #PARAM({match.group(1)}) names no setting "
                                  f"{match.group(2)!r}") from None
        if whole:
            return resolve(whole)
        return _PARAM_RE.sub(lambda m: str(resolve(m)), value)
    if isinstance(value, list):
        return [expand_params(x, lookup, where) for x in value]
    if isinstance(value, dict):
        return {k: expand_params(v, lookup, where) for k, v in value.items()}
    return value

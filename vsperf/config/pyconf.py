"""VSPERF's Python conf files (`10_custom.conf`, its integration test files), read safely:
parsed with `ast`, never executed.

A VSPERF conf file is a Python module of assignments such as

    TRAFFICGEN = 'Dummy'
    TRAFFICGEN_PKT_SIZES = (64, 1518)
    STEP_P2P_FINIT = [['vswitch', 'del_switch', 'int_br0']]
    INTEGRATION_TESTS = INTEGRATION_TESTS + [{'Name': 'x', 'TestSteps': STEP_P2P_INIT + STEP_P2P_FINIT}]

Each right-hand side is computed by `vsperf.config.pyexpr.Evaluator` over the names assigned
earlier in the file (and in the files read before it, `names`): literals, `+` and the other pure
operators, a few pure functions and string methods. `NAME = ...`, `A = B = ...`, `A, B = ...`
and `NAME += ...` are read; other statements (item assignments `PATHS['x'] = ...`, bare calls,
`if`, `for`, `def`) are a ConfigError naming the file and the line. An import, or a value that
needs Python to run (`os.path.join(...)`, `settings.getValue(...)`), leaves its names *not
computed*: `ConfFile.unavailable` says why, and whoever uses such a name for a setting or a test
gets that one line (`read_pyconf` does it for every setting).

VSPERF's own reading is kept where it matters: only UPPER_CASE names are settings (VSPERF drops the
others, so do we, with a warning), a setting assigned None is not set (VSPERF skips None values),
and a later assignment of the same name wins. Names starting with '_' (`_OVSDPDK_RATE_PORT`) are
file variables: TestSteps read them as `$NAME`. VSPERF's `#PARAM(NAME)` macro (the value of another
setting, as text, inside a string) is expanded by `expand_params` when the layer is applied. The
per-VM macros (#VMINDEX, #MAC, #IP, #EVAL), which VSPERF expands only in GUEST_* settings, one copy
per VM, are left in the text for the VNF that expands them (vsperf.vnf.qemu.macros).
"""

from __future__ import annotations

import ast
import logging
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vsperf.config.pyexpr import Evaluator, NotComputable, snippet
from vsperf.errors import ConfigError
from vsperf.inputs import check_shape

log = logging.getLogger(__name__)


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


def is_file_variable(name: str) -> bool:
    """VSPERF's '_NAME' settings: variables of a file that TestSteps read as `$NAME`."""
    return name.startswith("_") and name.isupper()


@dataclass(frozen=True)
class ConfFile:
    """What a VSPERF conf file leaves defined."""

    values: dict[str, Any]  # UPPER_CASE names computed, in file order of their last assignment (None: unset)
    names: dict[str, Any]  # every name computed (lower case ones too): what the next file may use
    unavailable: dict[str, str] = field(default_factory=dict)  # name -> "line N: why it is not computed"


class _UsesUnavailable(NotComputable):
    def __init__(self, name: str, root: str) -> None:
        super().__init__(f"it uses {name}")
        self.name, self.root = name, root


class _Reader:
    """Walks a file's statements, computing each assignment."""

    def __init__(self, origin: str, names: Mapping[str, Any]) -> None:
        self.origin = origin
        self.names: dict[str, Any] = dict(names)
        self.unavailable: dict[str, str] = {}
        self.roots: dict[str, str] = {}  # name -> the first reason in its chain ("line N: why")
        self.order: list[str] = []

    def fail(self, line: int, problem: str) -> ConfigError:
        return ConfigError(f"{self.origin}: line {line}: {problem} (vsperf reads NAME = value assignments and "
                           f"never runs the file)")

    def bind(self, name: str, value: Any, line: int) -> None:
        try:
            value = check_shape(value, f"{self.origin}: line {line}: {name}")
        except RecursionError:
            raise ConfigError(f"{self.origin}: line {line}: {name} is nested too deeply") from None
        self.names[name] = value
        self.unavailable.pop(name, None)
        if name in self.order:
            self.order.remove(name)
        self.order.append(name)

    def unbind(self, name: str, why: str, line: int, root: str = "") -> None:
        self.names.pop(name, None)
        self.unavailable[name] = f"line {line}: {why}"
        self.roots[name] = root or self.unavailable[name]
        if name in self.order:
            self.order.remove(name)

    def compute(self, node: ast.expr) -> Any:
        """The value of `node`; NotComputable names an unavailable name it uses."""
        used = sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & self.unavailable.keys())
        if used:
            raise _UsesUnavailable(used[0], self.roots[used[0]])
        try:
            return Evaluator(self.names).value(node)
        except NotComputable as exc:
            if "nested too deeply" in exc.problem:
                raise ConfigError(f"{self.origin}: line {exc.line}: a value nested too deeply") from None
            raise

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            for alias in stmt.names:  # nothing is imported: the names exist, their values are unknown
                self.unbind((alias.asname or alias.name).split(".")[0], "an import (the file is never run)",
                            stmt.lineno)
            return
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            value_node: ast.expr = ast.BinOp(left=ast.Name(stmt.target.id, ast.Load()), op=stmt.op,
                                             right=stmt.value, lineno=stmt.lineno, col_offset=0)
            targets: list[ast.expr] = [stmt.target]
        elif isinstance(stmt, ast.Assign) and all(_plain_target(t) for t in stmt.targets):
            value_node, targets = stmt.value, list(stmt.targets)
        else:
            raise self.fail(stmt.lineno, _statement_problem(stmt))
        try:
            value = self.compute(value_node)
        except _UsesUnavailable as exc:
            for target in targets:
                for name in _target_names(target):
                    self.unbind(name, f"it uses {exc.name}, not computed ({exc.root})", stmt.lineno, exc.root)
            return
        except NotComputable as exc:
            for target in targets:
                for name in _target_names(target):
                    self.unbind(name, f"{exc.problem} ({snippet(value_node)!r})", stmt.lineno)
            return
        for target in targets:
            if isinstance(target, ast.Name):
                self.bind(target.id, value, stmt.lineno)
                continue
            names = _target_names(target)
            if not isinstance(value, list) or len(value) != len(names):
                for name in names:
                    self.unbind(name, f"{snippet(value_node)!r} does not unpack into {len(names)} names",
                                stmt.lineno)
                continue
            for name, item in zip(names, value, strict=True):
                self.bind(name, item, stmt.lineno)


def _plain_target(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, ast.Tuple | ast.List) and all(isinstance(t, ast.Name) for t in target.elts)


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    return [t.id for t in getattr(target, "elts", []) if isinstance(t, ast.Name)]


def _statement_problem(stmt: ast.stmt) -> str:
    if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if any(isinstance(t, ast.Subscript) for t in targets):
            return f"an assignment to an item {snippet(targets[0])!r}: assign the whole setting instead"
        if isinstance(stmt, ast.AugAssign):
            return f"an augmented assignment {snippet(stmt)!r}"
        return f"an assignment to {', '.join(snippet(t) for t in targets)!r}"
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return f"a call {snippet(stmt.value)!r}"
    return f"a {type(stmt).__name__.lower()} statement"


def read_conf_names(text: str, origin: str, names: Mapping[str, Any] | None = None, *,
                    warn_lowercase: bool = True) -> ConfFile:
    """What VSPERF conf file `text` defines, given the `names` files read before it left.

    `origin` names the file in messages ('conf file /x/10_custom.conf'). Raises ConfigError for a
    statement vsperf does not read; a value that cannot be computed is left in `unavailable`.
    """
    try:
        with warnings.catch_warnings():  # VSPERF's files write regexes with '\s' in plain strings
            warnings.simplefilter("ignore", (DeprecationWarning, SyntaxWarning))
            tree = ast.parse(text, filename=origin)
    except SyntaxError as exc:
        raise ConfigError(f"{origin}: line {exc.lineno}: Python syntax error: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        raise ConfigError(f"{origin}: cannot parse as a VSPERF conf file: {exc}") from None
    reader = _Reader(origin, names or {})
    for index, stmt in enumerate(tree.body):
        if (index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)):
            continue  # the module docstring
        reader.statement(stmt)
    values = {n: reader.names[n] for n in reader.order if n.isupper() and reader.names[n] is not None}
    ignored = sorted({n for n in reader.order if not n.isupper() and n not in (names or {})})
    if ignored and warn_lowercase:
        log.warning("%s: ignoring %s: only UPPER_CASE names are settings (as in VSPERF)", origin, ", ".join(ignored))
    return ConfFile(values, reader.names, reader.unavailable)


def read_pyconf(text: str, origin: str, names: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The settings a VSPERF conf file assigns, by name, in file order (last assignment wins).

    `names`: what the file may use besides its own names (VSPERF ran a conf file with the settings
    read before it: `INTEGRATION_TESTS = INTEGRATION_TESTS + [...]`). A setting (an UPPER_CASE name)
    whose value cannot be computed is a ConfigError naming the line;
    a file variable ('_NAME') that cannot be is left out, with a warning.
    """
    conf = read_conf_names(text, origin, names)
    for name, why in conf.unavailable.items():
        if not name.isupper():
            continue
        if is_file_variable(name):
            log.warning("%s: %s is not computed (%s): a step that reads it fails", origin, name, why)
            continue
        line, _, problem = why.partition(": ")
        raise ConfigError(f"{origin}: {line}: {name}: {problem} (vsperf computes values from literals and "
                          f"earlier names only; write the value out)")
    return conf.values


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

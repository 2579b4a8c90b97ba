"""Python expressions of VSPERF's files, computed without running them.

VSPERF's conf files build values from earlier ones (`STEP_P2P = STEP_INIT + [...]`,
`str(hex(1 << 4))[2:]`, `'0:{},1:{}'.format(A, B)`) and its TestSteps hold expressions that
VSPERF handed to `eval` (`'#STEP[-1][0] > 1'`, `'len(#STEP[-1]) == 2'`). `Evaluator` computes
such an expression from its syntax tree, over plain values only:

- literals (numbers, strings, booleans, None, lists, tuples (as lists), dicts);
- names the caller gives (the names assigned earlier in the same file, or in the files read
  before it);
- arithmetic and comparisons: `+ - * / // % << >> & | ^`, unary `- + ~ not`, `== != < <= > >=`,
  `in`, `not in`, `and`, `or`, `x if c else y`; subscripts and slices;
- the pure functions `str int float bool len abs round min max hex sum` and the string methods
  `format split rsplit strip lstrip rstrip lower upper title startswith endswith replace join`
  (`format` with plain `{}`, `{0}` and `{name}` fields only).

Anything else (imports, attributes such as `os.path`, other calls, comprehensions, lambdas,
f-strings, `**`) raises NotComputable naming it: nothing is ever executed. Results are bounded:
a sequence or string made by `*` or `+` may hold at most MAX_ITEMS items, a shift at most
MAX_SHIFT bits.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Mapping
from typing import Any

MAX_ITEMS = 1_000_000  # items of a list, or characters of a string, an operator may make
MAX_SHIFT = 256  # bits of a shift
MAX_EXPRESSION_CHARS = 10_000  # an expression of a step (tools assert / eval)

_CONSTANTS = (str, int, float, bool, type(None))
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "str": str, "int": int, "float": float, "bool": bool, "len": len, "abs": abs, "round": round, "min": min,
    "max": max, "hex": hex, "sum": sum,
}
_STR_METHODS = frozenset({"split", "rsplit", "strip", "lstrip", "rstrip", "lower", "upper", "title", "startswith",
                          "endswith", "replace", "join"})
_FORMAT_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


class NotComputable(Exception):
    """The expression needs Python to run (or breaks a bound); `problem` says what, `line` where."""

    def __init__(self, problem: str, line: int = 0) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line


def snippet(node: ast.AST) -> str:
    """The source of `node`, at most 50 characters."""
    text = ast.unparse(node)
    return text if len(text) <= 50 else text[:47] + "..."


def _describe(node: ast.AST) -> str:
    names = {ast.Call: "a call", ast.Name: "the name", ast.Attribute: "the attribute", ast.BinOp: "the expression",
             ast.Subscript: "the subscript", ast.JoinedStr: "the f-string", ast.Set: "the set",
             ast.Lambda: "the lambda", ast.ListComp: "the comprehension", ast.DictComp: "the comprehension",
             ast.GeneratorExp: "the generator", ast.SetComp: "the comprehension"}
    return names.get(type(node), "the expression")


def _bounded(value: Any) -> Any:
    if isinstance(value, str | list) and len(value) > MAX_ITEMS:
        raise NotComputable(f"a value of {len(value):,} items (at most {MAX_ITEMS:,})")
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4 * MAX_SHIFT:
        raise NotComputable(f"a number of {value.bit_length()} bits")
    return value


def safe_format(template: str, args: list[Any], kwargs: dict[str, Any]) -> str:
    """`template.format(*args, **kwargs)` for plain fields: `{}`, `{0}`, `{name}` (no attribute,
    index, conversion or format spec: those could reach objects or grow without bound)."""
    out: list[str] = []
    auto = 0
    pos = 0
    for match in _FORMAT_FIELD.finditer(template):
        out.append(template[pos:match.start()])
        pos = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            out.append(token[0])
            continue
        field = match.group(1)
        if field is None:
            raise NotComputable(f"an unmatched brace in the format string {template[:40]!r}")
        if field == "":
            if auto >= len(args):
                raise NotComputable(f"format string {template[:40]!r} needs more arguments")
            value, auto = args[auto], auto + 1
        elif field.isdigit():
            if int(field) >= len(args):
                raise NotComputable(f"format field {{{field}}} has no argument")
            value = args[int(field)]
        elif field.isidentifier():
            if field not in kwargs:
                raise NotComputable(f"format field {{{field}}} has no argument")
            value = kwargs[field]
        else:
            raise NotComputable(f"format field {{{field}}}: only {{}}, {{N}} and {{name}} are read")
        out.append(str(value))
    out.append(template[pos:])
    return str(_bounded("".join(out)))


class Evaluator:
    """Computes expressions over `names` (see the module docstring)."""

    def __init__(self, names: Mapping[str, Any] | None = None) -> None:
        self.names: Mapping[str, Any] = names or {}

    def expression(self, text: str) -> Any:
        """The value of expression `text` (NotComputable when it cannot be computed)."""
        if len(text) > MAX_EXPRESSION_CHARS:
            raise NotComputable(f"an expression of {len(text):,} characters (at most {MAX_EXPRESSION_CHARS:,})")
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as exc:
            raise NotComputable(f"Python syntax error in {text[:60]!r}: {exc.msg}") from None
        except (ValueError, RecursionError, MemoryError) as exc:
            raise NotComputable(f"cannot parse {text[:60]!r}: {exc}") from None
        return self.value(tree.body)

    def value(self, node: ast.expr) -> Any:
        """The value of expression node `node`."""
        try:
            return self._value(node)
        except NotComputable as exc:
            if not exc.line:
                exc.line = getattr(node, "lineno", 0)
            raise
        except RecursionError:
            raise NotComputable("an expression nested too deeply", getattr(node, "lineno", 0)) from None
        except (TypeError, ValueError, ZeroDivisionError, IndexError, KeyError, OverflowError) as exc:
            raise NotComputable(f"{snippet(node)!r} fails: {type(exc).__name__}: {exc}",
                                getattr(node, "lineno", 0)) from None

    def _value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            if not isinstance(node.value, _CONSTANTS):
                raise NotComputable(f"{type(node.value).__name__} literal {snippet(node)!r}", node.lineno)
            return node.value
        if isinstance(node, ast.List | ast.Tuple):
            return _bounded([self._value(x) for x in node.elts])
        if isinstance(node, ast.Dict):
            out: dict[Any, Any] = {}
            for key_node, value_node in zip(node.keys, node.values, strict=True):
                if key_node is None:
                    raise NotComputable("'**' inside a dict", value_node.lineno)
                key = self._value(key_node)
                if isinstance(key, list | dict):
                    kind = "a list or tuple" if isinstance(key, list) else "a dict"
                    raise NotComputable(f"{kind} as a dict key {snippet(key_node)!r}", key_node.lineno)
                out[key] = self._value(value_node)
            return out
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                raise NotComputable(f"the name {node.id!r} is not defined earlier", node.lineno)
            return self.names[node.id]
        if isinstance(node, ast.UnaryOp):
            operand = self._value(node.operand)
            if isinstance(node.op, ast.Not):
                return not operand
            if isinstance(operand, bool) or not isinstance(operand, int | float):
                raise NotComputable(f"{snippet(node)!r}: a sign or ~ on a {type(operand).__name__}", node.lineno)
            if isinstance(node.op, ast.USub):
                return -operand
            if isinstance(node.op, ast.Invert) and isinstance(operand, int):
                return ~operand
            return +operand
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        if isinstance(node, ast.BoolOp):
            result: Any = None
            for item in node.values:
                result = self._value(item)
                if (isinstance(node.op, ast.And) and not result) or (isinstance(node.op, ast.Or) and result):
                    return result
            return result
        if isinstance(node, ast.Compare):
            left = self._value(node.left)
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = self._value(right_node)
                compare = _COMPARE.get(type(op))
                if compare is None:
                    raise NotComputable(f"the comparison {snippet(node)!r} ('is' compares objects)", node.lineno)
                if not compare(left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self._value(node.body) if self._value(node.test) else self._value(node.orelse)
        if isinstance(node, ast.Subscript):
            container = self._value(node.value)
            if isinstance(node.slice, ast.Slice):
                parts = [None if p is None else self._value(p) for p in (node.slice.lower, node.slice.upper,
                                                                          node.slice.step)]
                return container[slice(*parts)]
            return container[self._value(node.slice)]
        if isinstance(node, ast.Call):
            return self._call(node)
        raise NotComputable(f"{_describe(node)} {snippet(node)!r} needs Python to run", getattr(node, "lineno", 0))

    def _binary(self, node: ast.BinOp) -> Any:
        function = _BINARY.get(type(node.op))
        if function is None:
            raise NotComputable(f"the operator in {snippet(node)!r} is not computed", node.lineno)
        left, right = self._value(node.left), self._value(node.right)
        if isinstance(node.op, ast.Mult):
            for seq, count in ((left, right), (right, left)):
                if isinstance(seq, str | list) and isinstance(count, int) and len(seq) * max(count, 0) > MAX_ITEMS:
                    raise NotComputable(f"{snippet(node)!r} makes more than {MAX_ITEMS:,} items", node.lineno)
        if isinstance(node.op, ast.LShift | ast.RShift) and isinstance(right, int) and right > MAX_SHIFT:
            raise NotComputable(f"a shift of {right} bits (at most {MAX_SHIFT})", node.lineno)
        if isinstance(node.op, ast.Mod) and isinstance(left, str):
            raise NotComputable(f"'%' formatting {snippet(node)!r}: use str.format", node.lineno)
        return _bounded(function(left, right))

    def _call(self, node: ast.Call) -> Any:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise NotComputable(f"'*' or '**' arguments in {snippet(node)!r}", node.lineno)
        args = [self._value(a) for a in node.args]
        kwargs = {str(k.arg): self._value(k.value) for k in node.keywords}
        func = node.func
        if isinstance(func, ast.Name) and func.id in _FUNCTIONS and func.id not in self.names:
            if kwargs:
                raise NotComputable(f"keyword arguments to {func.id}() in {snippet(node)!r}", node.lineno)
            return _bounded(_FUNCTIONS[func.id](*args))
        if isinstance(func, ast.Attribute):
            target = self._value(func.value)
            if isinstance(target, str) and func.attr == "format":
                return safe_format(target, args, kwargs)
            if isinstance(target, str) and func.attr in _STR_METHODS and not kwargs:
                return _bounded(getattr(target, func.attr)(*args))
        raise NotComputable(f"a call {snippet(node)!r} needs Python to run", node.lineno)

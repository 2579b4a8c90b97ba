"""Strict, bounded YAML: every YAML vsperf reads (settings, test cases, testbeds) comes through here.

YAML is read with YAML 1.2's core scalars rather than PyYAML's YAML 1.1 ones, so that only
true/false are booleans ('yes', 'no', 'on' stay strings and a Bool setting refuses them), '017'
is 17 and not octal 15, '37:02' is not sexagesimal 2222, '5e6' is a number and '2016-05-11' is not
a date. Duplicate keys are errors rather than the last one silently winning.

The document is composed into its node graph first and measured (vsperf.inputs.shape) before any
Python value is built: an alias "bomb" of a few hundred bytes that would expand to billions of
values, an alias to an enclosing anchor (`&a [*a]`), or nesting deeper than MAX_DEPTH are refused
in one line, in a few milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from vsperf.errors import ConfigError
from vsperf.inputs.limits import MAX_DEPTH, MAX_NODES
from vsperf.inputs.shape import measure_graph


def _show(value: object) -> str:
    text = repr(value)  # bounded: the key of a duplicate may be a long string
    return text if len(text) <= 60 else text[:57] + "..."


class StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2 core scalars and errors on duplicate keys."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: let PyYAML report it with its position
                break
            if duplicate:
                raise ConstructorError(None, None, f"duplicate key {_show(key)}", key_node.start_mark)
        return super().construct_mapping(node, deep)


_REPLACED_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("bool", "int", "float", "null", "timestamp", "value")}
StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _REPLACED_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    list("-+0123456789"))
StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
               r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+.0123456789"))
StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""])


def _construct_int(loader: StrictLoader, node: ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    try:
        if text.startswith("0o"):  # YAML 1.2 core: only 0o/0x prefixes, unsigned; '017' is decimal
            return int(text[2:], 8)
        if text.startswith("0x"):
            return int(text[2:], 16)
        return int(text, 10)
    except ValueError as exc:  # e.g. more digits than Python converts
        raise ConstructorError(None, None, f"cannot read integer: {exc}", node.start_mark) from None


StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _children(node: Node) -> Iterable[Node]:
    if isinstance(node, SequenceNode):
        return node.value  # type: ignore[no-any-return]
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return ()


def load_yaml(text: str, where: str, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> Any:
    """Parse one YAML document; ConfigError naming `where` (and the line and column) when it is
    malformed, holds a duplicate key, more than `max_nodes` values once its aliases are expanded,
    nests deeper than `max_depth`, or contains itself."""
    loader = StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        measure_graph(node, _children, where, max_nodes=max_nodes, max_depth=max_depth)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = _one_line(exc.problem or exc.context or "syntax error")
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"{where}: malformed YAML{at}: {problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: malformed YAML: {_one_line(str(exc))}") from None
    except RecursionError:
        raise ConfigError(f"{where}: YAML nested too deeply") from None
    finally:
        loader.dispose()

"""Bounds on the shape of a parsed value: how many values it holds and how deeply they nest.

A YAML document is measured on its node graph before it is built (vsperf.inputs.yamlfile), since
aliases let 300 bytes stand for billions of values; JSON and Python literals cannot share
values, so they are measured once parsed, with `check_shape`. Both walks use an explicit stack:
a value nested deeper than Python's recursion limit is refused, not a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from vsperf.errors import ConfigError
from vsperf.inputs.limits import MAX_DEPTH, MAX_NODES

T = TypeVar("T")


class ShapeError(ConfigError):
    """A value too big, too deep, or referring to itself."""


def too_many(where: str, max_nodes: int) -> ShapeError:
    """The error for a document of more than `max_nodes` values."""
    return ShapeError(f"{where}: more than {max_nodes:,} values (YAML aliases counted each time they are "
                      f"used); vsperf refuses it")


def too_deep(where: str, max_depth: int) -> ShapeError:
    """The error for a document nested more than `max_depth` levels."""
    return ShapeError(f"{where}: nested more than {max_depth} levels deep; vsperf refuses it")


def measure_graph(root: T, children: Callable[[T], Iterable[T]], where: str, *,
                  max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> int:
    """The number of values under `root` once every shared node is expanded (its own count each
    time it is referred to). ShapeError when a node contains itself, when the count passes
    `max_nodes` or the nesting `max_depth`. Shared nodes are measured once (memoised by id), so
    the walk is linear in the graph, however big its expansion."""
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    in_progress: set[int] = set()
    # (node, children left to visit or None when not yet entered)
    stack: list[tuple[T, list[T] | None]] = [(root, None)]
    while stack:
        node, pending = stack[-1]
        key = id(node)
        if pending is None:
            if key in sizes:
                stack.pop()
                continue
            if key in in_progress:
                raise ShapeError(f"{where}: a value contains itself (a YAML alias to an enclosing anchor)")
            in_progress.add(key)
            pending = list(children(node))
            stack[-1] = (node, pending)
            if len(stack) > max_depth + 1:
                raise too_deep(where, max_depth)
        if pending:
            child = pending.pop()
            if id(child) in in_progress:
                raise ShapeError(f"{where}: a value contains itself (a YAML alias to an enclosing anchor)")
            stack.append((child, None))
            continue
        kids = list(children(node))
        size = 1 + sum(sizes[id(c)] for c in kids)
        depth = 1 + max((depths[id(c)] for c in kids), default=0)
        if size > max_nodes:
            raise too_many(where, max_nodes)
        if depth > max_depth:
            raise too_deep(where, max_depth)
        sizes[key], depths[key] = size, depth
        in_progress.discard(key)
        stack.pop()
    return sizes[id(root)]


def _plain_children(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    if isinstance(value, list | tuple):
        return value
    return ()


def check_shape(value: T, where: str, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> T:
    """`value` (dicts, lists, tuples, scalars) unchanged, or ShapeError when it holds more than
    `max_nodes` values or nests deeper than `max_depth`."""
    if isinstance(value, dict | list | tuple):
        measure_graph(value, _plain_children, where, max_nodes=max_nodes, max_depth=max_depth)
    return value

"""Bounds on the shape of a parsed value: how many values it holds and how deeply they nest.

A YAML document is measured on its node graph before it is built (vsperf.inputs.yamlfile), since
aliases let 300 bytes stand for billions of values; JSON and Python literals cannot share
values, so they are measured once parsed, with `check_shape`. Both walks use an explicit stack:
a value nested deeper than Python's recursion limit is refused, not a crash.
"""

from __future__ import annotations

import math
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


def check_shape(value: T, where: str, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH,
                finite: bool = False) -> T:
    """`value` (dicts, lists, tuples, scalars, as JSON or a Python literal gives them: nothing
    shared) unchanged, or ShapeError when it holds more than `max_nodes` values or nests deeper
    than `max_depth`; with `finite`, also when a float is not finite (NaN, infinity)."""
    count = 1  # every value seen so far, the ones still on the stack included
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple):
            children = item
        else:
            if finite and isinstance(item, float) and not math.isfinite(item):
                raise ShapeError(f"{where}: holds {item}, which is not a number vsperf writes")
            continue
        if depth >= max_depth and children:
            raise too_deep(where, max_depth)
        count += len(children)
        if count > max_nodes:
            raise too_many(where, max_nodes)
        stack.extend((child, depth + 1) for child in children)
    return value

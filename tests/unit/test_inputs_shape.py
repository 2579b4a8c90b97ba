"""Bounds on a parsed value's shape: values counted (shared ones each time), nesting, self-reference."""

from __future__ import annotations

import math

import pytest

from vsperf.inputs import ShapeError, check_shape
from vsperf.inputs.shape import measure_graph


def test_counts_and_depth() -> None:
    value = {"a": [1, 2, {"b": None}]}
    assert check_shape(value, "v") is value
    with pytest.raises(ShapeError, match=r"^v: more than 5 values"):
        check_shape(value, "v", max_nodes=5)
    with pytest.raises(ShapeError, match=r"^v: nested more than 2 levels deep"):
        check_shape(value, "v", max_depth=2)


def test_floats_that_are_not_numbers() -> None:
    assert check_shape([1.5, math.inf], "v") == [1.5, math.inf]  # only JSON asks (finite=True)
    with pytest.raises(ShapeError, match=r"^v: holds nan, which is not a number vsperf writes$"):
        check_shape({"x": [math.nan]}, "v", finite=True)


def test_a_deep_value_is_refused_without_recursion() -> None:
    deep: list[object] = []
    for _ in range(100_000):  # far beyond Python's recursion limit
        deep = [deep]
    with pytest.raises(ShapeError, match="nested more than 64 levels"):
        check_shape(deep, "v")


def test_graph_shared_nodes_count_each_time_and_cycles_are_refused() -> None:
    leaf = ["x"] * 10
    graph = {"root": [leaf, leaf, leaf]}

    def children(node: object) -> list[object]:
        if isinstance(node, dict):
            return list(node.values())
        return list(node) if isinstance(node, list) else []

    assert measure_graph(graph, children, "g") == 1 + 1 + 3 * 11
    loop: list[object] = []
    loop.append([loop])
    with pytest.raises(ShapeError, match="contains itself"):
        measure_graph(loop, children, "g")

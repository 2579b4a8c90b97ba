"""Loads on a logarithmic scale: relative widths as distances, and interval splits that end on the
width exactly (shared by the goal searches' controllers)."""

from __future__ import annotations

import math

_EPS = 1e-9


def log_width(width: float) -> float:
    """A relative width as a distance in log space: ln(upper / lower) at that width."""
    return -math.log1p(-width)


def split_load(lower_fps: float, upper_fps: float, width: float, log_scale: bool = True) -> float:
    """The next load between two bounds: in log space the upper part is width * 2**k (so the
    search ends exactly on the width), or the plain middle when not `log_scale`."""
    if not log_scale:
        return (lower_fps + upper_fps) / 2.0
    span, step = math.log(upper_fps / lower_fps), log_width(width)
    halvings = max(1, math.ceil(math.log2(span / step) - _EPS))
    load = upper_fps * math.exp(-step * 2 ** (halvings - 1))
    return min(max(load, lower_fps * (1 + _EPS)), upper_fps * (1 - _EPS))

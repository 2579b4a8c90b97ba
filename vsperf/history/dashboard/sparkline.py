"""A series' small trend line as inline SVG (no script: the index stays light with 200 series)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

WIDTH, HEIGHT = 160, 32
MAX_POINTS = 120  # longer series are thinned to this many points (first and last kept)


def thin(values: Sequence[float], limit: int = MAX_POINTS) -> list[float]:
    """`values` reduced to at most `limit` evenly spaced ones, the first and last kept."""
    if len(values) <= limit:
        return list(values)
    step = (len(values) - 1) / (limit - 1)
    return [values[round(i * step)] for i in range(limit)]


def sparkline(values: Sequence[float], classification: str, *, title: str = "") -> str:
    """An SVG polyline of `values` (oldest first), its last point marked in the class's colour."""
    data = thin(values)
    if not data:
        return ""
    low, high = min(data), max(data)
    span = (high - low) or 1.0
    step = (WIDTH - 4) / max(len(data) - 1, 1)
    coords = [(2 + i * step, HEIGHT - 3 - (v - low) / span * (HEIGHT - 6)) for i, v in enumerate(data)]
    points = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
    x, y = coords[-1]
    return (f'<svg class="spark" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
            f'aria-label="{escape(title)}"><polyline fill="none" points="{points}"/>'
            f'<circle class="{escape(classification)}" cx="{x:.1f}" cy="{y:.1f}" r="2.5"/></svg>')

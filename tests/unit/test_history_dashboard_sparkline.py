"""vsperf.history.dashboard.sparkline: a small SVG, thinned, its last point classed."""

from __future__ import annotations

from vsperf.history.dashboard.sparkline import MAX_POINTS, sparkline, thin


def test_thin_keeps_the_ends() -> None:
    values = [float(i) for i in range(1000)]
    thinned = thin(values)
    assert len(thinned) == MAX_POINTS and thinned[0] == 0.0 and thinned[-1] == 999.0
    assert thin([1.0, 2.0]) == [1.0, 2.0]


def test_svg() -> None:
    svg = sparkline([1.0, 2.0, 3.0], "regression", title="<b>t</b>")
    assert svg.startswith("<svg") and svg.count(",") == 3 and 'class="regression"' in svg
    assert "&lt;b&gt;t&lt;/b&gt;" in svg
    assert sparkline([], "normal") == ""
    assert "nan" not in sparkline([5.0, 5.0], "normal")

"""vsperf.units: Ethernet line rates as RFC 2544 counts them."""

from __future__ import annotations

import pytest

from vsperf.units import l2_mbps, line_rate_fps


def test_line_rate_of_10g_at_rfc2544_sizes() -> None:
    assert line_rate_fps(64, 10e9) == pytest.approx(14_880_952.38, rel=1e-9)  # the classic 14.88 Mfps
    assert line_rate_fps(1518, 10e9) == pytest.approx(812_743.82, rel=1e-8)
    with pytest.raises(ValueError, match="positive"):
        line_rate_fps(0, 10e9)


def test_l2_mbps_counts_the_frame_only() -> None:
    assert l2_mbps(1_000_000, 64) == pytest.approx(512.0)

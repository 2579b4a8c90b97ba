"""The report's latency distributions, from the HDR histograms trials keep with TRAFFIC
latency_histogram on (vsperf.search.hdr): latency against percentile, the percentile axis
stretched as 1 / (1 - percentile) (HdrHistogram's plots, CSIT's latency graphs), so that 99 %,
99.9 % and 99.999 % are evenly apart.

- `distribution_figure`: the distribution of an rfc2544_latency, continuous or burst test at one
  frame size (its trials' histograms added up);
- `loads_figure`: the latency at loads after a throughput search (vsperf.search.load_latency),
  one curve per load, together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vsperf.report.figure import new_figure
from vsperf.results.model import FrameSizeResult, TestResult
from vsperf.results.sizes import size_label
from vsperf.search import hdr

if TYPE_CHECKING:  # matplotlib is imported when a plot is drawn, not to read this module
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# Traffic types whose trials all measure the latency the test reports (not a search's trials).
DISTRIBUTION_TYPES = ("rfc2544_latency", "rfc2544_continuous", "burst")
_TICKS = (0.0, 90.0, 99.0, 99.9, 99.99, 99.999, 99.9999)

Line = tuple[str, str]  # (label, encoded histogram)


def distribution_lines(test: TestResult, result: FrameSizeResult) -> list[Line]:
    """The distribution of a latency, continuous or burst test: its trials' histograms added up
    (the trials of a throughput search run first are left out)."""
    if test.traffic_type not in DISTRIBUTION_TYPES:
        return []
    texts = [t.latency.hdrh for t in result.trials
             if t.latency is not None and t.latency.hdrh and not t.purpose.startswith("throughput: ")]
    merged = hdr.merge(texts) if texts else ""
    trials = f"{len(texts)} trial{'s' if len(texts) != 1 else ''}"
    return [(f"{size_label(result.packet_size)}, {trials}", merged)] if merged else []


def loads_lines(result: FrameSizeResult) -> list[Line]:
    """One distribution per load of the latency at loads (trials that kept a histogram)."""
    lines: list[Line] = []
    for entry in result.details.get("load_latency") or ():
        position = int(entry.get("trial", 0))
        if not 1 <= position <= len(result.trials):
            continue
        trial = result.trials[position - 1]
        if trial.latency is not None and trial.latency.hdrh:
            rate = float(entry.get("rate_fps") or 0.0)
            label = f"{entry.get('load_percent', 0):g} % of {entry.get('goal', '?')} ({rate:,.0f} fps)"
            lines.append((label, trial.latency.hdrh))
    return lines


def distribution_caption(result: FrameSizeResult) -> str:
    return (f"Latency distribution at {size_label(result.packet_size)}: latency against percentile (every frame "
            f"timestamped by the generator, HDR histogram), the percentile axis stretched as 1 / (1 - percentile).")


def loads_caption(result: FrameSizeResult) -> str:
    return (f"Latency at loads relative to the throughput search's answer, {size_label(result.packet_size)}: one "
            f"distribution per load, latency against percentile (axis stretched as 1 / (1 - percentile)).")


def _percentile_axis(ax: Axes) -> None:
    from matplotlib.ticker import NullLocator

    ax.set_xscale("log")
    ax.set_xticks([1.0 / (1.0 - p / 100.0) for p in _TICKS], [f"{p:g} %" for p in _TICKS])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.tick_params(axis="x", labelsize=7)
    ax.set_xlabel("percentile")
    ax.set_ylabel("latency (µs)")
    ax.grid(True, alpha=0.3)


def _draw(title: str, lines: list[Line]) -> Figure | None:
    if not lines:
        return None
    fig = new_figure(3.2)
    ax = fig.subplots()
    highest = 0.0
    for label, text in lines:
        points = hdr.distribution(text)
        xs = [1.0 / (1.0 - p / 100.0) for p, _ in points]
        highest = max([highest, *xs])
        ax.plot(xs, [v / 1e3 for _, v in points], "-", label=label, linewidth=1.2)
    _percentile_axis(ax)
    ax.set_xlim(1.0, max(10.0, highest * 1.5))
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(title, fontsize=10)
    return fig


def distribution_figure(test: TestResult, result: FrameSizeResult) -> Figure | None:
    return _draw(f"{test.name}, {size_label(result.packet_size)}: latency distribution",
                 distribution_lines(test, result))


def loads_figure(test: TestResult, result: FrameSizeResult) -> Figure | None:
    return _draw(f"{test.name}, {size_label(result.packet_size)}: latency at loads", loads_lines(result))


def load_rows(result: FrameSizeResult) -> list[dict[str, Any]]:
    """The latency at loads as table rows (the report shows them together)."""
    return [dict(entry) for entry in result.details.get("load_latency") or ()]

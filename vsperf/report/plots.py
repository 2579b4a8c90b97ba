"""The report's plots, drawn from the results files with matplotlib (Agg, no display needed).

Per test, as PNG files in DIR/plots:
- throughput against frame size, in frames/s with the theoretical line-rate curve and in % of
  line rate (the graph RFC 2544 section 26.1 asks for);
- back-to-back frames against frame size (with the repetitions' range);
- latency (min, avg, max and any percentiles) against frame size, when measured;
- the search trajectory: every trial's offered rate (or burst length) in the order it ran,
  passing and failing trials marked, one panel per frame size;
- per-second rates over a trial, when the generator recorded them (these two: vsperf.report.plots_trials);
- latency percentile distributions (HDR histograms) and the latency at loads after a throughput
  search (vsperf.report.plots_latency).
A frame mix has no place on a frame-size axis: it shows in its own per-size plots and the tables.

Figures are built with the object API (no pyplot state) and saved without a timestamp, so the
same results give the same files.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vsperf.benchmarks.plots import benchmark_caption, benchmark_figure
from vsperf.report.figure import COLORS, new_figure, save_png
from vsperf.report.plots_latency import (
    distribution_caption,
    distribution_figure,
    distribution_lines,
    loads_caption,
    loads_figure,
    loads_lines,
)
from vsperf.report.plots_trials import per_second_figure, per_second_series, trajectory_figure
from vsperf.results.model import RunResults, TestResult, as_number
from vsperf.results.sizes import PacketSize, size_label, size_slug
from vsperf.units import ETHERNET_OVERHEAD_BYTES, MIN_FRAME_BYTES

if TYPE_CHECKING:  # matplotlib is imported when a plot is drawn, not to read this module
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PLOTS_DIR = "plots"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_PERCENTILE = re.compile(r"^latency_p(\d+(?:\.\d+)?)_ns$")


@dataclass(frozen=True)
class Plot:
    """A plot the report embeds: its file relative to the results directory, and its caption."""

    path: str  # e.g. "plots/test00_phy2phy_tput_throughput.png" (always '/' separated)
    caption: str
    packet_size: PacketSize | None = None  # a plot of one frame size (or mix), or None for the whole test
    kind: str = ""  # which figure: "throughput", "trajectory", "persecond_64", ... (see plot_plan)


def _series(test: TestResult, key: str) -> list[tuple[int, float]]:
    out = []
    for result in test.results:
        value = as_number(result.metrics.get(key))
        if value is not None and isinstance(result.packet_size, int):  # a mix is on no size axis
            out.append((result.packet_size, value))
    return sorted(out)


def aggregate_link_bps(run: RunResults, test: TestResult) -> float | None:
    """Bits per second of line rate over all transmitting ports (from the trials, else settings)."""
    for result in test.results:
        for trial in result.trials:
            if trial.line_rate_fps > 0:
                return trial.line_rate_fps * (trial.frame_size_bytes + ETHERNET_OVERHEAD_BYTES) * 8
    speed = as_number(test.parameters.get("TRAFFICGEN_PORT_SPEED_GBPS", run.settings.get("TRAFFICGEN_PORT_SPEED_GBPS")))
    if speed is None:
        return None
    return speed * 1e9 * (2 if test.bidir else 1)


def _size_axis(ax: Axes, sizes: Sequence[int], *, narrow: bool = False) -> None:
    # Frame sizes double from 64 to 1024: on a log axis RFC 2544's sizes are evenly apart.
    from matplotlib.ticker import NullLocator

    ax.set_xscale("log", base=2)
    ax.set_xlabel("frame size (bytes)")
    if len(sizes) <= 10:
        ax.set_xticks(list(sizes), [str(s) for s in sizes])
        ax.xaxis.set_minor_locator(NullLocator())
        # Labels of close sizes (1024, 1280, 1518) would overlap: tilt them.
        ordered = sorted(sizes)
        crowded = any(b / a < (1.7 if narrow else 1.3) for a, b in itertools.pairwise(ordered))
        ax.tick_params(axis="x", labelrotation=45 if crowded else 0, labelsize=8 if crowded else None)
    ax.grid(True, alpha=0.3)


def throughput_figure(run: RunResults, test: TestResult) -> Figure | None:
    """Throughput in Mfps (with the line-rate curve) and in % of line rate, against frame size."""
    rx = _series(test, "throughput_rx_fps")
    if not rx:
        return None
    fig = new_figure(3.4)
    left, right = fig.subplots(1, 2)
    sizes = [s for s, _ in rx]
    link_bps = aggregate_link_bps(run, test)
    if link_bps:
        low, high = min(MIN_FRAME_BYTES, *sizes), max(1518, *sizes)
        curve = [low + (high - low) * i / 200 for i in range(201)]
        left.plot(curve, [link_bps / ((s + ETHERNET_OVERHEAD_BYTES) * 8) / 1e6 for s in curve],
                  "--", color=COLORS["line"], label="line rate")
    tx = _series(test, "tx_rate_fps")
    if tx and any(abs(a - b) > 1e-6 * max(a, 1.0) for (_, a), (_, b) in zip(tx, rx, strict=False)):
        left.plot([s for s, _ in tx], [v / 1e6 for _, v in tx], "s:", color=COLORS["offered"], label="sent")
    left.plot(sizes, [v / 1e6 for _, v in rx], "o-", color=COLORS["measured"], label="throughput (received)")
    left.set_ylabel("Mframes/s (all ports)")
    left.set_ylim(bottom=0)
    left.legend(fontsize=8)
    _size_axis(left, sizes, narrow=True)
    percent = _series(test, "throughput_rx_percent")
    if percent:
        right.axhline(100.0, linestyle="--", color=COLORS["line"], label="line rate")
        right.plot([s for s, _ in percent], [v for _, v in percent], "o-", color=COLORS["measured"],
                   label="throughput")
        for size, value in percent:
            right.annotate(f"{value:.1f}", (size, value), textcoords="offset points", xytext=(0, 5),
                           ha="center", fontsize=7)
        right.set_ylim(0, 110)
        right.legend(fontsize=8, loc="lower right")
    right.set_ylabel("% of line rate")
    _size_axis(right, sizes, narrow=True)
    fig.suptitle(f"{test.name}: throughput against frame size", fontsize=10)
    return fig


def back2back_figure(test: TestResult) -> Figure | None:
    """Back-to-back burst length against frame size, with the repetitions' min..max."""
    frames = _series(test, "b2b_frames")
    if not frames:
        return None
    fig = new_figure(3.0)
    ax = fig.subplots()
    labels = [str(s) for s, _ in frames]
    values = [v for _, v in frames]
    lows = dict(_series(test, "b2b_frames_min"))
    highs = dict(_series(test, "b2b_frames_max"))
    errors = None
    if lows and highs:
        errors = [[max(0.0, v - lows.get(s, v)) for s, v in frames], [max(0.0, highs.get(s, v) - v) for s, v in frames]]
    positions = list(range(len(labels)))
    ax.bar(positions, values, color=COLORS["measured"], yerr=errors, capsize=4)
    ax.set_xticks(positions, labels)
    if min(values) > 0 and max(values) / min(values) > 100:
        ax.set_yscale("log")  # bursts of thousands and of millions of frames in one chart
    for i, value in enumerate(values):
        ax.annotate(f"{value:,.0f}", (i, value), textcoords="offset points", xytext=(0, 3), ha="center", fontsize=7)
    ax.set_xlabel("frame size (bytes)")
    ax.set_ylabel("frames in the longest lossless burst")
    ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(f"{test.name}: back-to-back frames against frame size", fontsize=10)
    return fig


def _latency_lines(test: TestResult) -> list[tuple[str, list[tuple[int, float]]]]:
    keys = [("min_latency_ns", "min"), ("avg_latency_ns", "avg"), ("max_latency_ns", "max")]
    percentiles = {m.group(0): m.group(1) for r in test.results for k in r.metrics if (m := _PERCENTILE.match(k))}
    keys += [(k, f"p{p}") for k, p in sorted(percentiles.items(), key=lambda kp: float(kp[1]))]
    lines = [(label, _series(test, key)) for key, label in keys]
    return [(label, series) for label, series in lines if series]


def latency_figure(test: TestResult) -> Figure | None:
    """Latency (µs) against frame size: min, avg, max and any recorded percentiles."""
    lines = _latency_lines(test)
    if not lines:
        return None
    fig = new_figure(3.0)
    ax = fig.subplots()
    for label, series in lines:
        ax.plot([s for s, _ in series], [v / 1e3 for _, v in series], "o-", label=label)
    values = [v for _, series in lines for _, v in series if v > 0]
    if values and max(values) / min(values) > 50:
        ax.set_yscale("log")
    ax.set_ylabel("latency (µs)")
    _size_axis(ax, sorted({s for _, series in lines for s, _ in series}))
    ax.legend(fontsize=8)
    fig.suptitle(f"{test.name}: latency against frame size", fontsize=10)
    return fig


def _file_stem(test: TestResult) -> str:
    return f"test{test.index:02d}_{_UNSAFE.sub('_', test.name)}"


CAPTIONS = {
    "throughput": "Throughput against frame size: frames per second over all ports with the theoretical line rate "
    "(left), and as a percentage of line rate (right).",
    "back2back": "Back-to-back frames against frame size (bars: the average of the repetitions, "
    "whiskers: their range).",
    "latency": "Latency against frame size.",
    "trajectory": "Search trajectory: every trial in the order it ran, green when the device forwarded it within the "
    "allowed loss, red when it did not; the dotted line is the reported result.",
}


def plot_plan(run: RunResults, test: TestResult) -> list[Plot]:
    """The plots `test` has data for, in report order, without drawing them (so the report's
    text can be written while worker processes draw); `draw_plot` draws each one."""
    stem = _file_stem(test)

    def plot(kind: str, caption: str, size: PacketSize | None = None) -> Plot:
        return Plot(f"{PLOTS_DIR}/{stem}_{kind}.png", caption, size, kind)

    plan: list[Plot] = []
    if _series(test, "throughput_rx_fps"):
        plan.append(plot("throughput", CAPTIONS["throughput"]))
    if _series(test, "b2b_frames"):
        plan.append(plot("back2back", CAPTIONS["back2back"]))
    if _latency_lines(test):
        plan.append(plot("latency", CAPTIONS["latency"]))
    if any(len(r.trials) > 1 for r in test.results):
        plan.append(plot("trajectory", CAPTIONS["trajectory"]))
    for result in test.results:
        size, slug = result.packet_size, size_slug(result.packet_size)
        series = per_second_series(result)
        if series is not None:
            plan.append(plot(f"persecond_{slug}", f"Per-second rates of trial {series[0]} at {size_label(size)}.",
                             size))
        if distribution_lines(test, result):
            plan.append(plot(f"latencydist_{slug}", distribution_caption(result), size))
        if loads_lines(result):
            plan.append(plot(f"loadlatency_{slug}", loads_caption(result), size))
        caption = benchmark_caption(result.details)
        if caption is not None:  # the seeds' benchmarks (sweeps, udp_msg_loss, iperf3_*)
            plan.append(plot(f"benchmark_{slug}", caption, size))
    return plan


def _figure_of(run: RunResults, test: TestResult, plot: Plot) -> Figure | None:
    if plot.kind == "throughput":
        return throughput_figure(run, test)
    if plot.kind == "back2back":
        return back2back_figure(test)
    if plot.kind == "latency":
        return latency_figure(test)
    if plot.kind == "trajectory":
        return trajectory_figure(run, test)
    result = next(r for r in test.results if r.packet_size == plot.packet_size)
    if plot.kind.startswith("persecond_"):
        drawn = per_second_figure(test, result)
        return drawn[0] if drawn else None
    if plot.kind.startswith("latencydist_"):
        return distribution_figure(test, result)
    if plot.kind.startswith("loadlatency_"):
        return loads_figure(test, result)
    benchmark = benchmark_figure(test.name, size_label(result.packet_size), result.details)
    return benchmark[0] if benchmark else None


def draw_plot(run: RunResults, test: TestResult, plot: Plot, results_dir: Path) -> None:
    """Draw one plot of `plot_plan(run, test)` into results_dir/plot.path."""
    fig = _figure_of(run, test, plot)
    if fig is None:  # plot_plan promised this plot: a bug, not a user's problem
        raise RuntimeError(f"plot {plot.path} was planned but has no data")
    save_png(fig, results_dir / plot.path)


def quiet_plot_logs() -> None:
    """matplotlib and Pillow log every font lookup and PNG chunk at debug level: not for overall.log."""
    for name in ("matplotlib", "PIL"):
        logging.getLogger(name).setLevel(logging.WARNING)


def plots_for_test(run: RunResults, test: TestResult, results_dir: Path) -> list[Plot]:
    """Draw every plot `test` has data for into results_dir/plots; returns them in report order."""
    plan = plot_plan(run, test)
    for plot in plan:
        draw_plot(run, test, plot, results_dir)
    return plan


def write_plots(run: RunResults, results_dir: Path) -> dict[int, list[Plot]]:
    """Draw the plots of every test of `run`; test index -> its plots (tests without data: [])."""
    quiet_plot_logs()
    return {test.index: plots_for_test(run, test, results_dir) for test in run.tests}

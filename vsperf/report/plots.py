"""The report's plots, drawn from the results files with matplotlib (Agg, no display needed).

Per test, as PNG files in DIR/plots:
- throughput against frame size, in frames/s with the theoretical line-rate curve and in % of
  line rate (the graph RFC 2544 section 26.1 asks for);
- back-to-back frames against frame size (with the repetitions' range);
- latency (min, avg, max and any percentiles) against frame size, when measured;
- the search trajectory: every trial's offered rate (or burst length) in the order it ran,
  passing and failing trials marked, one panel per frame size;
- per-second rates over a trial, when the generator recorded them.

Figures are built with the object API (no pyplot state) and saved without a timestamp, so the
same results give the same files.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vsperf.benchmarks.plots import benchmark_caption, benchmark_figure
from vsperf.report.anomalies import allowed_loss_percent
from vsperf.results.model import FrameSizeResult, RunResults, TestResult, as_number
from vsperf.search.measurer import TrialResult
from vsperf.units import ETHERNET_OVERHEAD_BYTES, MIN_FRAME_BYTES

if TYPE_CHECKING:  # matplotlib is imported when a plot is drawn, not to read this module
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PLOTS_DIR = "plots"
DPI = 110
PNG_COMPRESS_LEVEL = 1
WIDTH_IN = 8.0
COLORS = {"measured": "#1f77b4", "line": "#7f7f7f", "pass": "#2ca02c", "fail": "#d62728",
          "short": "#ff7f0e", "learning": "#9e9e9e", "offered": "#9467bd"}
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_PERCENTILE = re.compile(r"^latency_p(\d+(?:\.\d+)?)_ns$")


@dataclass(frozen=True)
class Plot:
    """A plot the report embeds: its file relative to the results directory, and its caption."""

    path: str  # e.g. "plots/test00_phy2phy_tput_throughput.png" (always '/' separated)
    caption: str
    packet_size: int | None = None  # a plot of one frame size, or None for the whole test
    kind: str = ""  # which figure: "throughput", "trajectory", "persecond_64", ... (see plot_plan)


def _series(test: TestResult, key: str) -> list[tuple[int, float]]:
    out = []
    for result in test.results:
        value = as_number(result.metrics.get(key))
        if value is not None:
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


def _new_figure(
    height_in: float, *, bottom_in: float = 0.75, top_in: float = 0.45, wspace: float = 0.3, hspace: float = 0.3
) -> Figure:
    """A figure WIDTH_IN wide with fixed margins in inches (matplotlib's constrained layout would
    fit them itself, at three times the drawing time: the report draws dozens of figures)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_IN, height_in), dpi=DPI)
    FigureCanvasAgg(fig)
    fig.subplots_adjust(left=0.8 / WIDTH_IN, right=1 - 0.2 / WIDTH_IN, bottom=bottom_in / height_in,
                        top=1 - top_in / height_in, wspace=wspace, hspace=hspace)
    return fig


def _save(fig: Figure, path: Path) -> None:
    """Write `fig` as an RGB PNG, atomically (the PDF worker may be waiting for the file)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    # _new_figure's figures have an Agg canvas already; a bare Figure (the benchmarks') gets one.
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()  # type: ignore[no-untyped-call]
    width, height = canvas.get_width_height()
    # RGB, not matplotlib's RGBA: the figures are opaque, and an alpha channel doubles the
    # image streams WeasyPrint decodes and compresses into the PDF. Fast deflate (level 1):
    # level 6 took a fifth of the drawing time for files a third smaller. No text chunks
    # (matplotlib's "Software"): the file depends on the results alone.
    rgba = canvas.buffer_rgba()  # type: ignore[no-untyped-call]
    image = Image.frombuffer("RGBA", (width, height), rgba, "raw", "RGBA", 0, 1).convert("RGB")
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        image.save(tmp, format="PNG", compress_level=PNG_COMPRESS_LEVEL, dpi=(DPI, DPI))
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


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
    fig = _new_figure(3.4)
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
    fig = _new_figure(3.0)
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
    fig = _new_figure(3.0)
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


def _trial_passed(trial: TrialResult, allowed_percent: float) -> bool:
    if trial.kind == "burst":
        return trial.loss_frames == 0
    return trial.loss_percent <= allowed_percent


def _trajectory_panel(ax: Axes, run: RunResults, test: TestResult, result: FrameSizeResult) -> None:
    allowed = allowed_loss_percent(test, result, run.settings)
    positions = list(range(1, len(result.trials) + 1))
    bursts = all(t.kind == "burst" for t in result.trials)

    def y(trial: TrialResult) -> float:
        if trial.kind == "burst":
            return float(trial.tx_frames)
        return 100.0 * trial.requested_rate_fps / trial.line_rate_fps if trial.line_rate_fps > 0 else 0.0

    ax.plot(positions, [y(t) for t in result.trials], "-", color=COLORS["line"], linewidth=0.8)
    # One artist per marker style, not one per trial: drawing cost grows with artists.
    styles: dict[tuple[str, str, int], tuple[list[int], list[float]]] = {}
    for position, trial in zip(positions, result.trials, strict=True):
        if trial.purpose == "learning":
            marker, color = ".", COLORS["learning"]
        elif trial.under_delivered:
            marker, color = "^", COLORS["short"]
        elif _trial_passed(trial, allowed):
            marker, color = "o", COLORS["pass"]
        else:
            marker, color = "x", COLORS["fail"]
        size = 9 if trial.purpose.startswith("verification") else 6
        xs, ys = styles.setdefault((marker, color, size), ([], []))
        xs.append(position)
        ys.append(y(trial))
    for (marker, color, size), (xs, ys) in styles.items():
        ax.plot(xs, ys, linestyle="none", marker=marker, color=color, markersize=size)
    answer = as_number(result.metrics.get("b2b_frames" if bursts else "tx_rate_percent"))
    if answer is not None:
        ax.axhline(answer, linestyle=":", color=COLORS["measured"])
    if bursts and len(result.trials) > 1:
        values = [y(t) for t in result.trials if y(t) > 0]
        if values and max(values) / min(values) > 100:
            ax.set_yscale("log")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(f"{result.packet_size} B", fontsize=9)
    ax.set_xlabel("trial", fontsize=8)
    ax.set_ylabel("burst (frames)" if bursts else "offered (% of line rate)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, alpha=0.3)


def trajectory_figure(run: RunResults, test: TestResult) -> Figure | None:
    """One panel per frame size with every trial of the search, pass or fail, in order."""
    results = [r for r in test.results if len(r.trials) > 1]
    if not results:
        return None
    columns = min(3, len(results))
    rows = math.ceil(len(results) / columns)
    fig = _new_figure(0.9 + 2.2 * rows, bottom_in=1.05, hspace=0.75 / rows + 0.35, wspace=0.35)
    axes = fig.subplots(rows, columns, squeeze=False)
    for i, result in enumerate(results):
        _trajectory_panel(axes[i // columns][i % columns], run, test, result)
    for i in range(len(results), rows * columns):
        axes[i // columns][i % columns].set_visible(False)
    from matplotlib.lines import Line2D

    legend = [
        Line2D([], [], marker="o", linestyle="none", color=COLORS["pass"], label="passed"),
        Line2D([], [], marker="x", linestyle="none", color=COLORS["fail"], label="failed (loss)"),
        Line2D([], [], marker="^", linestyle="none", color=COLORS["short"], label="generator under-delivered"),
        Line2D([], [], linestyle=":", color=COLORS["measured"], label="reported result"),
    ]
    fig.legend(handles=legend, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncols=4, fontsize=8)
    fig.suptitle(f"{test.name}: search trajectory (large markers: verification trials)", fontsize=10)
    return fig


def _per_second_trial(result: FrameSizeResult) -> tuple[int, TrialResult] | None:
    candidates = [(i, t) for i, t in enumerate(result.trials, start=1) if t.per_second]
    if not candidates:
        return None
    verification = [c for c in candidates if c[1].purpose.startswith("verification")]
    if verification:
        return verification[-1]
    return max(candidates, key=lambda c: c[1].duration_s)


def _per_second_series(result: FrameSizeResult) -> tuple[int, TrialResult, str | None, list[str]] | None:
    # The trial plotted, its position, the time column (None: row numbers) and the plotted keys.
    chosen = _per_second_trial(result)
    if chosen is None:
        return None
    position, trial = chosen
    rows: Sequence[Mapping[str, Any]] = trial.per_second
    time_key = next((k for k in ("time_s", "t", "second") if all(k in r for r in rows)), None)
    keys = sorted({k for r in rows for k, v in r.items() if k != time_key and as_number(v) is not None})
    return (position, trial, time_key, keys) if keys else None


def per_second_figure(test: TestResult, result: FrameSizeResult) -> tuple[Figure, int] | None:
    """The per-second rates the generator recorded during one trial (the verification trial
    when there is one, else the longest); returns the figure and the trial's position."""
    series = _per_second_series(result)
    if series is None:
        return None
    position, trial, time_key, keys = series
    rows: Sequence[Mapping[str, Any]] = trial.per_second
    xs = [float(r[time_key]) for r in rows] if time_key else [float(i) for i in range(1, len(rows) + 1)]
    fig = _new_figure(3.0)
    ax = fig.subplots()
    for key in keys:
        ax.plot(xs, [as_number(r.get(key)) or 0.0 for r in rows], ".-", label=key)
    ax.ticklabel_format(axis="y", style="plain", useOffset=False)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("per second")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle(f"{test.name}, {result.packet_size} B: per-second rates of trial {position} ({trial.purpose})",
                 fontsize=10)
    return fig, position


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

    def plot(kind: str, caption: str, size: int | None = None) -> Plot:
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
        size = result.packet_size
        series = _per_second_series(result)
        if series is not None:
            plan.append(plot(f"persecond_{size}", f"Per-second rates of trial {series[0]} at {size} B.", size))
        caption = benchmark_caption(result.details)
        if caption is not None:  # the seeds' benchmarks (sweeps, udp_msg_loss, iperf3_*)
            plan.append(plot(f"benchmark_{size}", caption, size))
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
    benchmark = benchmark_figure(test.name, result.packet_size, result.details)
    return benchmark[0] if benchmark else None


def draw_plot(run: RunResults, test: TestResult, plot: Plot, results_dir: Path) -> None:
    """Draw one plot of `plot_plan(run, test)` into results_dir/plot.path."""
    fig = _figure_of(run, test, plot)
    if fig is None:  # plot_plan promised this plot: a bug, not a user's problem
        raise RuntimeError(f"plot {plot.path} was planned but has no data")
    _save(fig, results_dir / plot.path)


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

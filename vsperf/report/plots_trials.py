"""The report's figures of one frame size's trials: the search trajectory (every trial's offered
rate or burst length in the order it ran, passing and failing trials marked, one panel per frame
size) and the per-second rates over a trial, when the generator recorded them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from vsperf.report.anomalies import allowed_loss_percent
from vsperf.report.figure import COLORS, new_figure
from vsperf.results.model import FrameSizeResult, RunResults, TestResult, as_number
from vsperf.search.measurer import TrialResult

if TYPE_CHECKING:  # matplotlib is imported when a plot is drawn, not to read this module
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


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
    fig = new_figure(0.9 + 2.2 * rows, bottom_in=1.05, hspace=0.75 / rows + 0.35, wspace=0.35)
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


def per_second_series(result: FrameSizeResult) -> tuple[int, TrialResult, str | None, list[str]] | None:
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
    series = per_second_series(result)
    if series is None:
        return None
    position, trial, time_key, keys = series
    rows: Sequence[Mapping[str, Any]] = trial.per_second
    xs = [float(r[time_key]) for r in rows] if time_key else [float(i) for i in range(1, len(rows) + 1)]
    fig = new_figure(3.0)
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

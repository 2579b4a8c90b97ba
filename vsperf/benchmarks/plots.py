"""One plot per benchmark result, drawn from the results files (matplotlib's object API)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # matplotlib is imported when a plot is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

WIDTH_IN = 8.0


def _figure(height_in: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(WIDTH_IN, height_in), layout="constrained")


def _rates_from_zero(fig: Figure, ax: Axes, title: str, xlabel: str, ylabel: str) -> Figure:
    """Finish a plot of rates: axis labels, a y axis from 0, a grid, the legend and the title."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    return fig


def udploss_figure(title: str, rows: Sequence[Mapping[str, Any]]) -> Figure:
    """Loss % per row (bars) with data and wire Mbit/s (markers, right axis)."""
    fig = _figure(3.2)
    ax = fig.subplots()
    xs = list(range(1, len(rows) + 1))
    ax.bar(xs, [float(r["loss_percent"]) for r in rows], color="#d62728", alpha=0.6, label="loss %")
    ax.set_xlabel("row of the table")
    ax.set_ylabel("loss (%)")
    ax.set_xticks(xs)
    rates = ax.twinx()
    rates.plot(xs, [float(r["data_mbps"]) for r in rows], "o-", color="#1f77b4", label="data Mbit/s")
    rates.plot(xs, [float(r["wire_mbps"]) for r in rows], "s--", color="#7f7f7f", label="wire Mbit/s")
    rates.set_ylabel("Mbit/s")
    rates.set_ylim(bottom=0)
    handles = ax.get_legend_handles_labels()[0] + rates.get_legend_handles_labels()[0]
    labels = ax.get_legend_handles_labels()[1] + rates.get_legend_handles_labels()[1]
    ax.legend(handles, labels, fontsize=8, loc="upper left")
    ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(title, fontsize=10)
    return fig


def iperf_figure(title: str, runs: Sequence[Mapping[str, Any]]) -> Figure:
    """Per-interval sender and receiver Mbit/s of every stack."""
    fig = _figure(3.2)
    ax = fig.subplots()
    for run in runs:
        rows = run["per_second"]
        xs = [float(r["end_s"]) for r in rows]
        ax.plot(xs, [float(r["sender_mbps"]) for r in rows], ".-", label=f"{run['stack']} sender")
        ax.plot(xs, [float(r["receiver_mbps"] or 0.0) for r in rows], "x--", label=f"{run['stack']} receiver")
    return _rates_from_zero(fig, ax, title, "time (s)", "Mbit/s")


def sweep_bw_figure(title: str, points: Sequence[Mapping[str, Any]]) -> Figure:
    """Rx Mpps against flows: the DUT's count and the tester's."""
    fig = _figure(3.2)
    ax = fig.subplots()
    flows = [int(p["flows"]) for p in points]
    ax.plot(flows, [float(p["rx_tester_mpps"]) for p in points], "o-", label="Rx on tester")
    dut = [(f, float(p["rx_dut_mpps"])) for f, p in zip(flows, points, strict=True) if p["rx_dut_mpps"] is not None]
    if dut:
        ax.plot([d[0] for d in dut], [d[1] for d in dut], "s--", label="Rx on DUT")
    ax.set_xscale("log", base=2)
    ax.set_xticks(flows, [str(f) for f in flows])
    return _rates_from_zero(fig, ax, title, "flows", "Mpps")


def latency_percentiles_figure(title: str, points: Sequence[Mapping[str, Any]]) -> Figure:
    """p50, p90 and p99 latency (us) per frame size."""
    fig = _figure(3.0)
    ax = fig.subplots()
    xs = list(range(len(points)))
    for offset, key in zip((-0.25, 0.0, 0.25), ("p50_us", "p90_us", "p99_us"), strict=True):
        ax.bar([x + offset for x in xs], [float(p[key] or 0.0) for p in points], width=0.25, label=key[:3])
    ax.set_xticks(xs, [f"{p['size']} B" for p in points])
    ax.set_ylabel("latency (us)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    return fig


def benchmark_caption(details: Mapping[str, Any]) -> str | None:
    """The caption of a benchmark result's plot, without drawing it (None: it has no plot)."""
    kind = str(details.get("benchmark", ""))
    if kind == "sweep_bw" and details.get("points"):
        return "Frames per second received by the tester and by the DUT's ports, for each number of flows."
    if kind == "sweep_latency" and details.get("points"):
        return "Latency percentiles (p50, p90, p99) of the latency trial."
    if kind == "udp_msg_loss" and details.get("rows"):
        return "UDP message loss (bars) and data/wire Mbit/s (lines) for each row of the table above."
    if kind.startswith("iperf3") and details.get("runs"):
        stacks = " vs ".join(str(r["stack"]) for r in details["runs"])
        return f"iperf3 sender and receiver bandwidth per interval ({stacks})."
    return None


def benchmark_figure(test_name: str, size: str, details: Mapping[str, Any]) -> tuple[Figure, str] | None:
    """The plot of one benchmark result and its caption (None for other traffic types); `size`
    is the frame size as a person reads it ("64 B", "IMIX aaaaaaaddddg")."""
    caption = benchmark_caption(details)
    if caption is None:
        return None
    kind = str(details["benchmark"])
    if kind == "sweep_bw":
        return sweep_bw_figure(f"{test_name}, {size}: Rx against flows", details["points"]), caption
    if kind == "sweep_latency":
        return latency_percentiles_figure(f"{test_name}: latency percentiles", details["points"]), caption
    if kind == "udp_msg_loss":
        return udploss_figure(f"{test_name}: UDP message loss and rates per row", details["rows"]), caption
    title = f"{test_name}, {size} frames: {kind} per interval"
    return iperf_figure(title, details["runs"]), caption

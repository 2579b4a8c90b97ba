"""The canvas of the report's figures: size, resolution, colours, and the PNG writer.

Figures are built with matplotlib's object API (no pyplot state, Agg, no display needed) and
saved without a timestamp, so the same results give the same files.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # matplotlib is imported when a plot is drawn, not to read this module
    from matplotlib.figure import Figure

DPI = 110
PNG_COMPRESS_LEVEL = 1
WIDTH_IN = 8.0
COLORS = {"measured": "#1f77b4", "line": "#7f7f7f", "pass": "#2ca02c", "fail": "#d62728",
          "short": "#ff7f0e", "learning": "#9e9e9e", "offered": "#9467bd"}


def new_figure(
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


def save_png(fig: Figure, path: Path) -> None:
    """Write `fig` as an RGB PNG, atomically (the PDF worker may be waiting for the file)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    # new_figure's figures have an Agg canvas already; a bare Figure (the benchmarks') gets one.
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

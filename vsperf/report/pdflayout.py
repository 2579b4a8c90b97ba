"""One part of the report laid out by WeasyPrint: its PDF, and what the merge needs to join
the parts into one document (page count, anchors, bookmarks, links into other parts).

Positions are in PDF points from the page's bottom-left corner, as WeasyPrint writes its own
destinations (CSS pixels * 0.75, the y axis flipped).
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vsperf.errors import PrerequisiteError
from vsperf.report.workers import FAILED_MARKER, quiet_pdf_logs, waiting_fetcher

PDF_PREREQUISITES = (
    "PDF reports need WeasyPrint, Pango and pypdf: pip install weasyprint pypdf; "
    "apt-get install libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core"
)
PT_PER_PX = 0.75  # CSS pixels (1/96 in) to PDF points (1/72 in)
_NO_ANCHOR = "No anchor #%s for internal URI reference"  # WeasyPrint's message, filtered below


@dataclass(frozen=True)
class Bookmark:
    """An outline entry (a heading): its level (h1 = 1), text and position."""

    level: int
    label: str
    page: int  # 0-based page index in its part (in the whole report after the merge)
    x_pt: float
    y_pt: float
    is_open: bool


@dataclass(frozen=True)
class Link:
    """An internal link to an anchor this part does not hold (the merge adds it)."""

    page: int  # 0-based page index in its part
    rect_pt: tuple[float, float, float, float]  # x1, y1, x2, y2
    target: str  # the anchor's name (an HTML id)


@dataclass(frozen=True)
class PartLayout:
    """A laid-out part: its PDF and the data to merge it with the others."""

    pdf: bytes
    page_count: int
    anchors: dict[str, int]  # anchor name -> 0-based page index (first occurrence)
    bookmarks: tuple[Bookmark, ...]
    links: tuple[Link, ...]


class _ElsewhereFilter(logging.Filter):
    # A link into another part has no anchor in this one: not an error, the merge adds it.
    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != _NO_ANCHOR


def import_weasyprint() -> Any:
    """The weasyprint module (logging quietened); PrerequisiteError, naming the fix, without it."""
    quiet_pdf_logs()
    weasy_log = logging.getLogger("weasyprint")
    if not any(isinstance(f, _ElsewhereFilter) for f in weasy_log.filters):
        weasy_log.addFilter(_ElsewhereFilter())
    try:
        import weasyprint  # type: ignore[import-untyped]
    except (ImportError, OSError) as exc:  # OSError: WeasyPrint installed but Pango missing
        raise PrerequisiteError(f"{PDF_PREREQUISITES} ({exc})") from exc
    return weasyprint


def layout_part(html: str, base_dir: Path, css: str = "", pending: Collection[Path] = ()) -> PartLayout:
    """Lay out `html` (relative URLs from `base_dir`) with the extra stylesheet `css`.

    `pending`: image files still being drawn; WeasyPrint waits for each when it reaches it.
    """
    weasyprint = import_weasyprint()
    fetcher = waiting_fetcher(weasyprint, pending, base_dir / "plots" / FAILED_MARKER) if pending else None
    if css:
        # In the document, after its own stylesheet: WeasyPrint's `stylesheets` argument is
        # the user's origin, which loses to the document's rules whatever its selectors.
        html = html.replace("</head>", f"<style>{css}</style></head>", 1)
    document = weasyprint.HTML(string=html, base_url=str(base_dir.resolve()) + "/", url_fetcher=fetcher).render()
    anchors: dict[str, int] = {}
    bookmarks: list[Bookmark] = []
    for number, page in enumerate(document.pages):
        for name in page.anchors:
            anchors.setdefault(name, number)
        height = page.height
        for level, label, (x, y), state in page.bookmarks:
            bookmarks.append(Bookmark(level, label, number, x * PT_PER_PX, (height - y) * PT_PER_PX, state != "closed"))
    links = []
    for number, page in enumerate(document.pages):
        for kind, target, (x1, y1, x2, y2), _box in page.links:
            if kind == "internal" and target not in anchors:
                rect = (x1 * PT_PER_PX, (page.height - y2) * PT_PER_PX, x2 * PT_PER_PX, (page.height - y1) * PT_PER_PX)
                links.append(Link(number, rect, target))
    return PartLayout(document.write_pdf(), len(document.pages), anchors, tuple(bookmarks), tuple(links))

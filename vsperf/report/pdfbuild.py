"""The report's PDF laid out in parts, on several processes, and merged.

WeasyPrint lays a document out on one core; the report's tests each start on a new page, so
the HTML is cut there (vsperf.report.pdfparts) and the parts are laid out side by side:
1. the groups of tests other than the first go to helper processes (forked: WeasyPrint is
   imported already); this process lays out the front (the contents' page numbers still
   unknown), then the first group;
2. with every part's page count known, the front is laid out again with the page numbers in
   its contents (on the rare occasion its page count changes, again), while a helper lays
   out the page furniture (headers, "Page N of M") of the whole report;
3. pypdf joins the pages, stamps the furniture, builds the outline and the links between parts
   (vsperf.report.pdfmerge).
The parts are the same whatever the number of processes, so is the file.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future
from contextlib import ExitStack
from pathlib import Path
from typing import TypeVar

from vsperf.report.pdflayout import PartLayout, layout_part
from vsperf.report.pdfmerge import merge_parts
from vsperf.report.pdfparts import FRONT_CSS, PART_CSS, ReportParts, front_html, furniture_html, split_report
from vsperf.report.pool import WorkerPool, fork_context

FRONT_ATTEMPTS = 3  # front layouts at most, when its page count changes with the numbers
T = TypeVar("T")


class _Runner:
    """Runs layouts on helper processes, or here when there are none."""

    def __init__(self, pool: WorkerPool | None) -> None:
        self._pool = pool

    def submit(self, job: Callable[..., T], *args: object) -> Callable[[], T]:
        """Start `job(*args)`; returns a function that waits for its result."""
        if self._pool is None:
            result = job(*args)
            return lambda: result
        future: Future[T] = self._pool.submit(job, *args)
        return future.result


def _target_pages(parts: ReportParts, layouts: Sequence[PartLayout], front_pages: int) -> dict[str, int]:
    """1-based page number, over the whole report, of each anchor the front links to."""
    pages: dict[str, int] = {}
    start = front_pages
    for layout in layouts:
        for target in parts.external_targets:
            if target in layout.anchors and target not in pages:
                pages[target] = start + layout.anchors[target] + 1
        start += layout.page_count
    return pages


def _merged(parts: ReportParts, base_dir: Path, pending: Collection[Path], runner: _Runner) -> bytes:
    later = [runner.submit(layout_part, group, base_dir, PART_CSS, pending) for group in parts.groups[1:]]
    front = layout_part(front_html(parts, None), base_dir, PART_CSS + FRONT_CSS)
    groups = [layout_part(parts.groups[0], base_dir, PART_CSS, pending), *(wait() for wait in later)]
    front_pages = front.page_count
    for _ in range(FRONT_ATTEMPTS):
        total = front_pages + sum(g.page_count for g in groups)
        furniture = runner.submit(layout_part, furniture_html(parts, total), base_dir)
        front = layout_part(front_html(parts, _target_pages(parts, groups, front_pages)), base_dir,
                            PART_CSS + FRONT_CSS)
        if front.page_count == front_pages:
            return merge_parts([front, *groups], furniture())
        front_pages = front.page_count
    raise RuntimeError(f"the report's front page count did not settle in {FRONT_ATTEMPTS} layouts")


def build_pdf(html: str, base_dir: Path, pending: Collection[Path] = (), processes: int = 1) -> bytes:
    """The PDF of the report's `html` (relative URLs from `base_dir`), laid out on up to
    `processes` processes. `pending`: plot files still being drawn (waited for when reached).
    Raises PrerequisiteError without WeasyPrint or pypdf."""
    parts = split_report(html)
    if parts is None:  # nothing to cut (one test): one document, its own furniture
        return layout_part(html, base_dir, "", pending).pdf
    with ExitStack() as stack:
        pool = None
        context = fork_context() if processes > 1 else None
        if context is not None:  # helpers that end with this process (vsperf.report.pool)
            pool = stack.enter_context(WorkerPool(context, min(processes - 1, len(parts.groups) - 1)))
        return _merged(parts, base_dir, pending, _Runner(pool))

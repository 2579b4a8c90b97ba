"""The report's HTML cut into parts the PDF lays out separately (and in parallel), and the
HTML of the page furniture stamped on the merged pages.

Each test starts on a new page of the PDF (report.css), so the HTML can be cut before each
test without moving a single line: the part's pages are the pages the whole document would
have. Parts:
- the front (title, document information, contents, introduction, up to the first test): its
  table of contents points into the other parts, so it is laid out last, with their page
  numbers written into the links (`front_html`);
- groups of whole tests, of about equal size; the last one also carries what follows the
  tests (rationale, conclusions, general).
Parts are laid out without page headers and footers; `furniture_html` is a document of empty
pages with only those (the same @page rules), stamped onto the merged pages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

TEST_GROUPS = 2  # groups of tests: one per PDF layout process on this project's 2-core machines

_SECTION_TAG = re.compile(r"<section\b[^>]*>|</section>")
_TEST_CLASS = re.compile(r'\bclass="(?:[^"]*\s)?vsperf-test(?:\s[^"]*)?"')
_WRAPPER_TAG = re.compile(r"<main\b[^>]*>|</main>|<section\b[^>]*>|</section>")
_ID_ATTRIBUTE = re.compile(r'\s+id="[^"]*"')
_INTERNAL_LINK = re.compile(r'(<a\b[^>]*?\bhref="#)([^"]+)(")')
_ELEMENT_ID = re.compile(r'\bid="([^"]+)"')
_DOCINFO = re.compile(r'<dl class="docinfo\b.*?</dl>', re.DOTALL)

# Parts have no page headers or footers: the furniture document brings them, numbered over
# the whole report. The margins stay, so the content area is the whole document's.
PART_CSS = (
    "@page { @top-left { content: none } @top-right { content: none } @bottom-center { content: none } }\n"
    "@page :first { @top-left { content: none } @top-right { content: none } @bottom-center { content: none } }\n"
)
# Contents entries whose target is in another part print the page number written into the link.
FRONT_CSS = '@media print { .contents li a[data-page]::after { content: leader(". ") attr(data-page); } }\n'
PAGE_PLACEHOLDER = 999  # the widest page number the contents will print, while they are unknown


@dataclass(frozen=True)
class ReportParts:
    """The report's HTML cut at test boundaries (see the module docstring)."""

    front: str  # the front part; its links into the tests are completed by front_html
    groups: tuple[str, ...]  # the tests, in order, as complete HTML documents
    external_targets: frozenset[str]  # ids the front links to that are in the groups
    head: str  # everything before <body>: the stylesheet with the @page rules
    docinfo: str  # the document information list (it sets the page header's document id)


def _test_spans(html: str) -> list[tuple[int, int, int]]:
    """(start, end, depth) of every test section, in order."""
    spans: list[tuple[int, int, int]] = []
    depth = 0
    open_test: tuple[int, int] | None = None
    for match in _SECTION_TAG.finditer(html):
        if match.group(0) == "</section>":
            depth -= 1
            if open_test is not None and depth == open_test[1]:
                spans.append((open_test[0], match.end(), depth))
                open_test = None
        else:
            if open_test is None and _TEST_CLASS.search(match.group(0)):
                open_test = (match.start(), depth)
            depth += 1
    return spans


def _open_wrappers(html: str, start: int, end: int) -> list[str]:
    """The <main>/<section> tags opened in html[start:end] and still open at `end`."""
    stack: list[str] = []
    for match in _WRAPPER_TAG.finditer(html, start, end):
        tag = match.group(0)
        if tag.startswith("</"):
            if stack:
                stack.pop()
        else:
            stack.append(tag)
    return stack


def _closing(wrappers: Sequence[str]) -> str:
    return "".join("</main>" if tag.startswith("<main") else "</section>" for tag in reversed(wrappers))


def _balanced_groups(spans: Sequence[tuple[int, int, int]], front_chars: int, groups: int) -> list[list[int]]:
    """Test indexes in `groups` contiguous runs of about equal HTML size (the front counts
    towards the first: the same process lays it out)."""
    sizes = [end - start for start, end, _ in spans]
    total = sum(sizes) + front_chars
    runs: list[list[int]] = [[]]
    done = front_chars
    for index, size in enumerate(sizes):
        boundary = total * len(runs) / groups
        left = len(spans) - index  # tests not placed yet, each run needs one
        if runs[-1] and len(runs) < groups and (done + size / 2 > boundary or left <= groups - len(runs)):
            runs.append([])
        runs[-1].append(index)
        done += size
    return runs


def split_report(html: str, groups: int = TEST_GROUPS) -> ReportParts | None:
    """The report cut into the front and `groups` groups of tests; None when it cannot be cut
    (fewer than `groups` tests, or than two, or tests at different depths): lay it out whole then."""
    spans = _test_spans(html)
    body = html.find("<body")
    body_end = html.find(">", body) + 1
    if len(spans) < max(groups, 2) or body < 0 or len({depth for _, _, depth in spans}) != 1:
        return None
    first = spans[0][0]
    wrappers = _open_wrappers(html, body_end, first)
    reopened = "".join(_ID_ATTRIBUTE.sub("", tag) for tag in wrappers)
    head = html[:body_end]  # the stylesheet and the <body> tag
    runs = _balanced_groups(spans, first - body_end, groups)
    texts: list[str] = []
    for number, run in enumerate(runs):
        start = spans[run[0]][0]
        if number == len(runs) - 1:
            texts.append(head + reopened + html[start:])  # to the end: the back matter too
        else:
            texts.append(head + reopened + html[start : spans[run[-1]][1]] + _closing(wrappers) + "</body></html>")
    front = html[:first] + _closing(wrappers) + "</body></html>"
    front_ids = set(_ELEMENT_ID.findall(front))
    targets = frozenset(m.group(2) for m in _INTERNAL_LINK.finditer(front) if m.group(2) not in front_ids)
    docinfo = _DOCINFO.search(front)
    return ReportParts(front, tuple(texts), targets, html[:body], docinfo.group(0) if docinfo else "")


def front_html(parts: ReportParts, pages: Mapping[str, int] | None) -> str:
    """The front with the page number of each link target in another part (1-based, over the
    whole report) written into the link; `pages` None: PAGE_PLACEHOLDER everywhere."""

    def number(match: re.Match[str]) -> str:
        target = match.group(2)
        page = PAGE_PLACEHOLDER if pages is None else pages.get(target)
        if target not in parts.external_targets or page is None:  # no page: the merge warns
            return match.group(0)
        return f'{match.group(1)}{match.group(2)}{match.group(3)} data-page="{page}"'

    return _INTERNAL_LINK.sub(number, parts.front)


def furniture_html(parts: ReportParts, page_count: int) -> str:
    """`page_count` empty pages with the report's page headers and footers ("Page N of M",
    the document id): the document information is there, invisible, to set the id."""
    hidden = f'<div style="visibility: hidden; height: 0; overflow: hidden">{parts.docinfo}</div>'
    breaks = '<div style="break-before: page"></div>' * (page_count - 1)
    return f"{parts.head}<body>{hidden}{breaks}</body></html>"

"""Laid-out parts of the report joined into one PDF with pypdf.

The parts' pages, in order, each with the page furniture (headers, "Page N of M") of the
same page of the furniture document drawn over it; one outline (bookmarks) over every part,
nested by heading level as WeasyPrint nests it; the named destinations of every part; the
links that point into another part (WeasyPrint drops them from a part where their target is
missing); the front part's document information and language.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vsperf.errors import PrerequisiteError
from vsperf.report.pdflayout import PDF_PREREQUISITES, Bookmark, Link, PartLayout

log = logging.getLogger(__name__)

FURNITURE_PREFIX = "vsf"  # prefixes the furniture's resource names: they must not clash with a page's


@dataclass
class _Node:
    bookmark: Bookmark | None
    children: list[_Node] = field(default_factory=list)


def _import_pypdf() -> Any:
    try:
        import pypdf
    except ImportError as exc:
        raise PrerequisiteError(f"{PDF_PREREQUISITES} ({exc})") from exc
    return pypdf


def outline_tree(bookmarks: Sequence[Bookmark]) -> list[_Node]:
    """Bookmarks nested by level, as WeasyPrint nests them (a skipped level, h2 then h4,
    nests one deep)."""
    root = _Node(None)
    skipped: list[int] = []  # per output depth, the source levels skipped to reach it
    last_by_depth = [root]
    previous = 0
    for bookmark in bookmarks:
        level = bookmark.level
        if level > previous:
            skipped.append(level - previous - 1)
        else:
            temp = level
            while temp < previous:
                temp += 1 + skipped.pop()
            if temp > previous:
                skipped.append(temp - previous - 1)
        previous = level
        depth = len(skipped)
        node = _Node(bookmark)
        last_by_depth[depth - 1].children.append(node)
        del last_by_depth[depth:]
        last_by_depth.append(node)
    return root.children


def _shifted(parts: Sequence[PartLayout]) -> tuple[list[Bookmark], list[Link]]:
    """Every part's bookmarks and cross-part links, with page indexes over the whole report."""
    bookmarks: list[Bookmark] = []
    links: list[Link] = []
    offset = 0
    for part in parts:
        bookmarks += [Bookmark(b.level, b.label, b.page + offset, b.x_pt, b.y_pt, b.is_open) for b in part.bookmarks]
        links += [Link(k.page + offset, k.rect_pt, k.target) for k in part.links]
        offset += part.page_count
    return bookmarks, links


def _stamp(pypdf: Any, writer: Any, page: Any, furniture: Any, wrap: tuple[Any, Any]) -> None:
    """Draw the furniture page's content over `page`, its resources renamed."""
    generic = pypdf.generic
    resources = page[generic.NameObject("/Resources")].get_object()
    names: list[bytes] = []
    source = furniture["/Resources"].get_object()
    for category, entries in source.items():
        if category == "/ProcSet":
            continue
        target = resources.get(category)
        if target is None:
            target = resources[generic.NameObject(category)] = generic.DictionaryObject()
        target = target.get_object()
        for name, value in entries.get_object().items():
            target[generic.NameObject(f"/{FURNITURE_PREFIX}{name[1:]}")] = value.clone(writer)
            names.append(re.escape(name[1:].encode("latin-1")))
    content = furniture.get_contents().get_data()
    if names:
        pattern = re.compile(rb"/(" + b"|".join(names) + rb")(?=[\s/\[\]<>(){}%]|$)")
        content = pattern.sub(lambda m: b"/" + FURNITURE_PREFIX.encode() + m.group(1), content)
    stream = generic.DecodedStreamObject()
    stream.set_data(content)
    contents = page.get("/Contents")
    existing = [] if contents is None else list(contents) if isinstance(contents.get_object(), list) else [contents]
    # The page's own drawing is wrapped in q/Q: the furniture starts from the default state.
    page[generic.NameObject("/Contents")] = generic.ArrayObject(
        [wrap[0], *existing, wrap[1], writer._add_object(stream.flate_encode())]
    )


def _add_outline(writer: Any, fit: Any, nodes: Sequence[_Node], parent: Any = None) -> None:
    for node in nodes:
        mark = node.bookmark
        assert mark is not None
        item = writer.add_outline_item(
            title=mark.label, page_number=mark.page, parent=parent, fit=fit.xyz(mark.x_pt, mark.y_pt, 0),
            is_open=mark.is_open,
        )
        _add_outline(writer, fit, node.children, item)


def merge_parts(parts: Sequence[PartLayout], furniture: PartLayout) -> bytes:
    """One PDF of `parts` (the first is the front: its information and language are kept),
    with `furniture` (one page per page of the parts) drawn over their pages."""
    pypdf = _import_pypdf()
    generic = pypdf.generic
    total = sum(part.page_count for part in parts)
    if furniture.page_count != total:
        raise RuntimeError(f"the page furniture has {furniture.page_count} pages for {total} report pages")
    readers = [pypdf.PdfReader(io.BytesIO(part.pdf)) for part in parts]
    writer = pypdf.PdfWriter()
    writer.pdf_header = readers[0].pdf_header
    for reader in readers:
        writer.append(reader, import_outline=False)
    wrap = []
    for operator in (b"q\n", b"\nQ\n"):
        stream = generic.DecodedStreamObject()
        stream.set_data(operator)
        wrap.append(writer._add_object(stream))
    furniture_pages = pypdf.PdfReader(io.BytesIO(furniture.pdf)).pages
    for page, over in zip(writer.pages, furniture_pages, strict=True):
        _stamp(pypdf, writer, page, over, (wrap[0], wrap[1]))
    bookmarks, links = _shifted(parts)
    _add_outline(writer, generic.Fit, outline_tree(bookmarks))
    known = set(writer.named_destinations)
    for link in links:
        if link.target not in known:
            log.warning("PDF: no anchor #%s for an internal link: left out", link.target)
            continue
        writer.add_annotation(link.page, generic.DictionaryObject({
            generic.NameObject("/Type"): generic.NameObject("/Annot"),
            generic.NameObject("/Subtype"): generic.NameObject("/Link"),
            generic.NameObject("/Rect"): generic.ArrayObject(generic.FloatObject(v) for v in link.rect_pt),
            generic.NameObject("/BS"): generic.DictionaryObject({generic.NameObject("/W"): generic.NumberObject(0)}),
            generic.NameObject("/Dest"): generic.TextStringObject(link.target),
        }))
    if readers[0].metadata:
        writer.add_metadata(dict(readers[0].metadata))
    language = readers[0].trailer["/Root"].get("/Lang")
    if language is not None:
        writer.root_object[generic.NameObject("/Lang")] = generic.TextStringObject(str(language))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()

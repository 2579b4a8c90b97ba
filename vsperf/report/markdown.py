"""The report in Markdown (GitHub-flavoured), translated from the RST report's docutils tree.

One template (report.rst.j2) is the single source of the report's content: the RST text is
parsed by docutils and its tree written out as Markdown here, so the formats cannot drift
apart. Grid tables become pipe tables, figures images with a caption, admonitions block
quotes; every section gets an explicit anchor, which the table of contents links to.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable

from docutils import nodes
from docutils.core import publish_doctree

# Characters that are Markdown syntax anywhere in a line; '_' is syntax only at a word's edge.
_SPECIAL = re.compile(r"([\\`*\[\]<>|])")
_EDGE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_LINE_START = re.compile(r"^(\s*)([#+\-=]|\d+[.)])(?=\s|$)")
_NUMBER = re.compile(r"^[-+]?\d[\d.,]*(e[-+]?\d+)?$|^n/a$", re.IGNORECASE)

DOCUTILS_SETTINGS = {
    "report_level": 5,  # problems are checked by the tests of the RST, not printed into the report
    "halt_level": 5,
    "warning_stream": io.StringIO(),
    "_disable_config": True,
    "input_encoding": "utf-8",
    "toc_backlinks": False,  # section titles stay plain text, not links back to the contents
}


def escape_text(text: str) -> str:
    """Plain text as Markdown that renders exactly as `text` (one line)."""
    out = _SPECIAL.sub(r"\\\1", text)
    return _EDGE_UNDERSCORE.sub(r"\\_", out)


def _escape_line_start(line: str) -> str:
    # "1. x" or "- x" or "# x" at a paragraph's start would become a list or a heading.
    return _LINE_START.sub(lambda m: f"{m.group(1)}\\{m.group(2)}", line, count=1)


class MarkdownWriter:
    """Walks a docutils document and returns its Markdown."""

    def __init__(self) -> None:
        self._blocks: dict[type[nodes.Node], Callable[[nodes.Element, int], list[str]]] = {
            nodes.section: self._section,
            nodes.paragraph: self._paragraph,
            nodes.bullet_list: self._list,
            nodes.enumerated_list: self._list,
            nodes.field_list: self._fields,
            nodes.docinfo: self._fields,
            nodes.table: self._table,
            nodes.figure: self._figure,
            nodes.image: self._image,
            nodes.topic: self._topic,
            nodes.literal_block: self._literal_block,
            nodes.block_quote: self._quote,
            nodes.transition: lambda node, depth: ["---", ""],
            nodes.definition_list: self._definitions,
            nodes.line_block: self._line_block,
        }

    def render(self, document: nodes.document) -> str:
        lines: list[str] = []
        title = next((c for c in document.children if isinstance(c, nodes.title)), None)
        if title is not None:
            lines += [f"# {self.inline(title)}", ""]
        for child in document.children:
            if child is not title:
                lines += self.block(child, 2)
        text = "\n".join(lines)
        return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"

    # -- blocks: each returns lines, ending with a blank line -------------------------------------
    def block(self, node: nodes.Node, depth: int) -> list[str]:
        if isinstance(node, nodes.comment | nodes.system_message | nodes.target | nodes.substitution_definition):
            return []
        if isinstance(node, nodes.Admonition) and isinstance(node, nodes.Element):
            return self._admonition(node, depth)
        for cls, handler in self._blocks.items():
            if type(node) is cls and isinstance(node, nodes.Element):
                return handler(node, depth)
        if isinstance(node, nodes.Element):  # containers, compounds, unknown blocks: their content
            return [line for child in node.children for line in self.block(child, depth)]
        return [escape_text(node.astext()), ""]

    def _children(self, node: nodes.Element, depth: int) -> list[str]:
        return [line for child in node.children for line in self.block(child, depth)]

    def _section(self, node: nodes.Element, depth: int) -> list[str]:
        lines = [f'<a id="{i}"></a>' for i in node["ids"][:1]]
        for child in node.children:
            if isinstance(child, nodes.title):
                lines += [f"{'#' * min(depth, 6)} {self.inline(child)}", ""]
            else:
                lines += self.block(child, depth + 1)
        return lines

    def _paragraph(self, node: nodes.Element, depth: int) -> list[str]:
        return [_escape_line_start(self.inline(node)), ""]

    def _list(self, node: nodes.Element, depth: int) -> list[str]:
        lines: list[str] = []
        for number, item in enumerate(node.children, start=int(node.get("start", 1))):
            marker = f"{number}. " if isinstance(node, nodes.enumerated_list) else "- "
            body = self._children(item, depth) if isinstance(item, nodes.Element) else []
            while body and body[-1] == "":
                body.pop()
            for i, line in enumerate(body):
                if i == 0:
                    lines.append(marker + line)
                else:
                    lines.append((" " * len(marker) + line) if line else "")
        return [line for line in lines if line != ""] + [""]

    def _fields(self, node: nodes.Element, depth: int) -> list[str]:
        lines = []
        for field in node.children:
            if isinstance(field, nodes.field):
                name = self.inline(field[0])
                body = " ".join(self.inline(p) for p in field[1].children)
            elif isinstance(field, nodes.Element):  # docinfo's known fields (author, date, ...)
                name, body = field.tagname.capitalize(), self.inline(field)
            else:
                continue
            lines.append(f"- **{name}:** {body}")
        return [*lines, ""]

    def _cell(self, entry: nodes.Element) -> str:
        parts = [self.inline(p) if isinstance(p, nodes.paragraph) else escape_text(p.astext()) for p in entry.children]
        return "<br>".join(p for p in parts if p) or " "

    def _table(self, node: nodes.Element, depth: int) -> list[str]:
        head: list[list[str]] = []
        body: list[list[str]] = []
        for row in node.findall(nodes.row):
            cells = [self._cell(e) for e in row.children if isinstance(e, nodes.entry)]
            (head if isinstance(row.parent, nodes.thead) else body).append(cells)
        columns = max((len(r) for r in head + body), default=0)
        if columns == 0:
            return []
        header = head[0] if head else [" "] * columns
        numeric = [bool(body) and all(_NUMBER.match(r[c]) for r in body if c < len(r)) for c in range(columns)]
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
        lines += ["| " + " | ".join(r + [" "] * (columns - len(r))) + " |" for r in body]
        return [*lines, ""]

    def _image(self, node: nodes.Element, depth: int) -> list[str]:
        return [f"![{escape_text(str(node.get('alt', '')))}]({node['uri']})", ""]

    def _figure(self, node: nodes.Element, depth: int) -> list[str]:
        lines: list[str] = []
        caption = ""
        for child in node.children:
            if isinstance(child, nodes.caption):
                caption = self.inline(child)
        # The alt text: the caption's first clause (the caption itself follows the image).
        alt = re.split(r"[:.]", caption, maxsplit=1)[0]
        for child in node.children:
            if isinstance(child, nodes.image):
                lines.append(f"![{alt or escape_text(str(child.get('alt', '')))}]({child['uri']})")
        if caption:
            lines += ["", f"*{caption}*"]
        return [*lines, ""]

    def _topic(self, node: nodes.Element, depth: int) -> list[str]:
        title = next((c for c in node.children if isinstance(c, nodes.title)), None)
        lines = [f"**{self.inline(title)}**", ""] if title is not None else []
        for child in node.children:
            if child is not title:
                lines += self.block(child, depth)
        return lines

    def _admonition(self, node: nodes.Element, depth: int) -> list[str]:
        title = next((c for c in node.children if isinstance(c, nodes.title)), None)
        label = self.inline(title) if title is not None else node.tagname.capitalize()
        body = [line for c in node.children if c is not title for line in self.block(c, depth)]
        while body and body[-1] == "":
            body.pop()
        quoted = [f"> **{label}:** {body[0]}" if body else f"> **{label}**"]
        quoted += [f"> {line}" if line else ">" for line in body[1:]]
        return [*quoted, ""]

    def _quote(self, node: nodes.Element, depth: int) -> list[str]:
        body = self._children(node, depth)
        return [f"> {line}" if line else ">" for line in body] + [""]

    def _literal_block(self, node: nodes.Element, depth: int) -> list[str]:
        return ["```", node.astext(), "```", ""]

    def _definitions(self, node: nodes.Element, depth: int) -> list[str]:
        lines = []
        for item in node.children:
            term = next((c for c in item.children if isinstance(c, nodes.term)), None)
            text = " ".join(self.inline(p) for d in item.findall(nodes.definition) for p in d.children)
            lines.append(f"- **{self.inline(term) if term is not None else ''}**: {text}")
        return [*lines, ""]

    def _line_block(self, node: nodes.Element, depth: int) -> list[str]:
        return [self.inline(line) + "  " for line in node.findall(nodes.line)] + [""]

    # -- inline ---------------------------------------------------------------------------------
    def inline(self, node: nodes.Node) -> str:
        if isinstance(node, nodes.Text):
            return escape_text(" ".join(node.astext().split("\n")))
        assert isinstance(node, nodes.Element)
        inner = "".join(self.inline(c) for c in node.children)
        if isinstance(node, nodes.strong):
            return f"**{inner}**"
        if isinstance(node, nodes.emphasis | nodes.title_reference):
            return f"*{inner}*"
        if isinstance(node, nodes.literal):
            text = node.astext()
            fence = "``" if "`" in text else "`"
            return f"{fence}{text}{fence}"
        if isinstance(node, nodes.reference):
            target = node.get("refuri") or (f"#{node['refid']}" if node.get("refid") else "")
            return f"[{inner}]({target})" if target else inner
        if isinstance(node, nodes.footnote_reference | nodes.system_message | nodes.target):
            return ""
        return inner


def parse_rst(rst_text: str) -> nodes.document:
    """The docutils tree of an RST document (the report), parsed once for every format."""
    return publish_doctree(rst_text, settings_overrides=dict(DOCUTILS_SETTINGS, warning_stream=io.StringIO()))


def rst_to_markdown(rst_text: str) -> str:
    """The Markdown of an RST document (the report)."""
    return MarkdownWriter().render(parse_rst(rst_text))

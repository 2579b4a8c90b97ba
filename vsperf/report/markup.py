"""reStructuredText building blocks: escaping, headings, grid tables, value formatting.

Every value the report template prints goes through `finalize`: plain strings are escaped
(a test description or an error message must never turn into RST markup), numbers get the
report's 3 decimals, None becomes "n/a". Text that is RST already is wrapped in `Rst`.
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from collections.abc import Sequence
from typing import Any

NOT_AVAILABLE = "n/a"
CELL_WRAP_CHARS = 60  # longer cell text wraps onto several lines of its grid-table cell


class Rst(str):
    """Text that is reStructuredText already: the template inserts it unescaped."""

    __slots__ = ()


# Characters that start or end inline markup anywhere in a line.
_INLINE = re.compile(r"([\\*`|])")
# An underscore is markup (reference, target) unless it sits between two alphanumerics.
_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# What would start a list, an enumeration, a field, a line block, a doctest, a comment or
# directive at a line's start.
_LEADING = re.compile(
    r"^(?:[-+*•‣⁃:#>|]|\.\.|(?:\d+|[A-Za-z]|[ivxlcdmIVXLCDM]+|#)[.)](?=\s|$)|\(\w+\)(?=\s|$))"
)
# "user@host" would become a mailto link (an SSH login such as root@192.0.2.10 is no address).
_EMAIL_AT = re.compile(r"(?<=\w)@(?=\w)")
# A line of one repeated punctuation character is a section underline or a transition.
_RULE = re.compile(r"^([^\w\s])\1*$")


def escape_line(text: str) -> str:
    """One line of plain text as RST that renders exactly as `text`."""
    out = _INLINE.sub(r"\\\1", text)
    out = _EMAIL_AT.sub(r"\\@", out)
    out = _UNDERSCORE.sub(r"\\_", out)
    out = out.replace("::", r":\:")  # a trailing '::' would announce a literal block
    if (_LEADING.match(out) or _RULE.match(out)) and not out.startswith("\\"):
        out = "\\" + out
    return out


def escape(text: object) -> str:
    """Plain text as a single line of RST (runs of white space, newlines too, become one space)."""
    return escape_line(" ".join(str(text).split()))


def wrapped(text: object, *, first: str = "", indent: str = "", width: int = 100) -> Rst:
    """Plain `text` as an escaped RST paragraph wrapped at `width` columns: the first line
    starts with `first` (e.g. "- " for a list item), the others with `indent`."""
    words = " ".join(str(text).split())
    lines = textwrap.wrap(
        words,
        max(width - len(first), 20),
        break_long_words=False,
        break_on_hyphens=False,
    ) or [""]
    return Rst("\n".join((first if i == 0 else indent) + escape_line(line) for i, line in enumerate(lines)))


def item(text: object, level: int = 0) -> Rst:
    """A bullet-list item holding plain `text`, wrapped; `level` 1 nests it in another item."""
    margin = "  " * level
    return wrapped(text, first=margin + "- ", indent=margin + "  ")


def display_width(text: str) -> int:
    """Columns `text` takes in a monospace table, as docutils counts them (wide CJK: 2)."""
    width = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def _pad(text: str, width: int, right: bool) -> str:
    fill = " " * (width - display_width(text))
    return fill + text if right else text + fill


def heading(text: object, char: str, *, overline: bool = False) -> Rst:
    """A section title underlined (and optionally overlined) with `char`."""
    title = escape(text)
    rule = char * max(display_width(title), 1)
    return Rst(f"{rule}\n{title}\n{rule}" if overline else f"{title}\n{rule}")


def format_value(value: Any) -> str:
    """A result value as the report prints it: floats with 3 decimals (as VSPERF's reports),
    integers plainly, None as n/a."""
    if value is None:
        return NOT_AVAILABLE
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.3f}" if value == value else NOT_AVAILABLE
    return str(value)


_NUMBER = re.compile(r"^[-+]?\d[\d.,]*(e[-+]?\d+)?$", re.IGNORECASE)


def _cell_lines(value: Any) -> list[str]:
    text = " ".join(format_value(value).split())
    lines = textwrap.wrap(text, CELL_WRAP_CHARS, break_long_words=False, break_on_hyphens=False)
    return [escape_line(line) for line in lines] or [""]


def grid_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> Rst:
    """An RST grid table (readable as plain text too); numbers are right-aligned."""
    cells = [[_cell_lines(value) for value in row] for row in [header, *rows]]
    columns = len(header)
    if any(len(row) != columns for row in cells):
        raise ValueError("every row of a table needs one value per column")
    widths = [max(display_width(line) for row in cells for line in row[c]) for c in range(columns)]
    numeric = [
        all(_NUMBER.match(format_value(row[c])) or format_value(row[c]) == NOT_AVAILABLE for row in rows)
        for c in range(columns)
    ]

    def rule(char: str) -> str:
        return "+" + "+".join(char * (w + 2) for w in widths) + "+"

    out = [rule("-")]
    for number, row in enumerate(cells):
        height = max(len(cell) for cell in row)
        for i in range(height):
            parts = []
            for c, cell in enumerate(row):
                line = cell[i] if i < len(cell) else ""
                parts.append(" " + _pad(line, widths[c], right=number > 0 and numeric[c]) + " ")
            out.append("|" + "|".join(parts) + "|")
        out.append(rule("=" if number == 0 else "-"))
    return Rst("\n".join(out))


def finalize(value: Any) -> Any:
    """Jinja2 `finalize` hook: what every {{ expression }} of a report template prints."""
    if isinstance(value, Rst):
        return value
    return escape(format_value(value))

"""A results store in a temporary folder, for the history tests."""

from __future__ import annotations

from pathlib import Path

from vsperf.history.db import Store, open_store, parse_url


def sqlite_store(folder: Path) -> Store:
    """A new SQLite store at folder/history.sqlite (close it, or use it in a with block)."""
    return open_store(parse_url(str(folder / "history.sqlite"), folder))

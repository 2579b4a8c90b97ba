"""vsperf.paths: the shipped data folders are found."""

from __future__ import annotations

import pytest

from vsperf.paths import data_dir


def test_the_shipped_folders_are_found() -> None:
    for name in ("conf", "testcases", "templates"):
        assert data_dir(name).is_dir()
    assert any(data_dir("conf").glob("*.yaml"))


def test_an_unknown_folder_is_named() -> None:
    with pytest.raises(FileNotFoundError, match="'nowhere' not found"):
        data_dir("nowhere")

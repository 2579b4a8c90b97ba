"""For the whole suite: runs that name no results directory write under a directory of the
session's, never the user's LOG_DIR (/tmp/vsperf) or its results store."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _log_dir_of_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """LOG_DIR (an environment variable named like the setting, so vsperf's child processes
    see it too): LOG_DIR/results_* and the default store LOG_DIR/vsperf-history.sqlite."""
    before = os.environ.get("LOG_DIR")
    os.environ["LOG_DIR"] = str(tmp_path_factory.mktemp("log_dir"))
    try:
        yield
    finally:
        if before is None:
            del os.environ["LOG_DIR"]
        else:
            os.environ["LOG_DIR"] = before

"""Read a results.json back (the only input of the report and of `vsperf report DIR`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from vsperf.errors import ConfigError
from vsperf.inputs import load_json, read_text_file
from vsperf.inputs.limits import RESULTS_MAX_BYTES
from vsperf.results.model import RESULTS_FILENAME, SCHEMA_VERSION, RunResults


def results_file(path_or_dir: Path | str) -> Path:
    """`path_or_dir` itself, or the results.json inside it when it is a directory."""
    path = Path(path_or_dir)
    return path / RESULTS_FILENAME if path.is_dir() else path


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 added frame mixes (a packet_size may be a mix's name) and optional trial fields:
    every version 1 file already is a version 2 file, with integer packet sizes."""
    return {**data, "schema_version": 2}


# schema_version -> the function that turns a file of that version into the next version's shape
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """`data` of any known schema_version in the shape of SCHEMA_VERSION."""
    while int(data["schema_version"]) < SCHEMA_VERSION:
        data = MIGRATIONS[int(data["schema_version"])](data)
    return data


def load_results(path_or_dir: Path | str) -> RunResults:
    """Load a run's results from results.json (or a directory holding one).

    Raises ConfigError, in one line naming the file, when it is missing, not a regular file, not
    UTF-8, bigger than RESULTS_MAX_BYTES, not strict JSON (NaN, nesting deeper than
    RESULTS_MAX_DEPTH), not a vsperf results file, or written by a newer vsperf (schema_version
    above SCHEMA_VERSION). It is read through vsperf.inputs, like every input file. A file of an
    older version is migrated (MIGRATIONS) to the current shape first.
    """
    path = results_file(path_or_dir)
    if not path.exists() and not path.is_symlink():
        raise ConfigError(f"{path}: no such results file (is this a vsperf results directory?)")
    text = read_text_file(path, f"results file {path}", RESULTS_MAX_BYTES)
    data = load_json(text, f"results file {path}")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: not a vsperf results file (top level is not an object)")
    version = data.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ConfigError(f"{path}: not a vsperf results file (no integer schema_version)")
    if version > SCHEMA_VERSION:
        raise ConfigError(
            f"{path} schema_version {version} is newer than this vsperf understands "
            f"({SCHEMA_VERSION}); upgrade vsperf"
        )
    if version < 1:
        raise ConfigError(f"{path}: schema_version {version} is not a vsperf results version")
    try:
        return RunResults.from_dict(migrate(data))
    except KeyError as exc:
        raise ConfigError(f"{path}: malformed results: missing key {exc.args[0]!r}") from None
    except (TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(f"{path}: malformed results: {exc}") from None

"""Where the shipped data folders (conf/, testcases/, templates/) are.

In a wheel they are packages inside vsperf (see pyproject's package-dir); in a source checkout
used without installing they sit at the top of the repository.
"""

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """Return the folder `name` (conf, testcases or templates) shipped with vsperf."""
    for candidate in (_PKG / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"vsperf data folder {name!r} not found next to {_PKG}")

"""The testbeds a run may use, in order: each --testbed (or TESTBED) is a testbed file or a pool
file, which lists testbed files (paths relative to the pool file)::

    # pool.yaml
    testbeds:
      - rack1.yaml
      - rack2.yaml

Every file is read and validated before any host is contacted: a pool file that is not one, a
testbed it names that does not exist or is not valid, a pool within a pool, the same testbed
twice, are each one line naming the file and the entry (exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vsperf.config.compound import ListOf, Struct
from vsperf.config.spec import SpecError, UnknownKey
from vsperf.config.types import NAME
from vsperf.errors import ConfigError
from vsperf.inputs import expand_path, load_yaml, read_text_file
from vsperf.inputs.limits import SETTINGS_FILE_MAX_BYTES
from vsperf.testbed.file import REQUIRED, parse_testbed
from vsperf.testbed.model import Testbed

POOL_KEY = "testbeds"
POOL = Struct({POOL_KEY: ListOf(NAME, min_len=1)})
POOL_MAX_TESTBEDS = 100  # testbeds of one run's pool: a lab's, not a cloud's


@dataclass(frozen=True)
class Candidate:
    """A testbed the run may use: its file, its content, and where it was named."""

    path: Path
    testbed: Testbed
    named_by: str  # "--testbed" (or TESTBED), or "pool FILE"


def _read(path: Path, what: str) -> Any:
    text = read_text_file(expand_path(path, what), what, SETTINGS_FILE_MAX_BYTES)
    return load_yaml(text, what)


def is_pool(data: object) -> bool:
    """True for a pool file's content (a mapping with the key `testbeds`)."""
    return isinstance(data, Mapping) and POOL_KEY in data


def _pool_entries(path: Path, data: Mapping[str, Any]) -> list[Path]:
    try:
        for key in data:
            if key not in POOL.fields:
                raise UnknownKey("", str(key), POOL.fields)
        names = POOL.fields[POOL_KEY].validate(data[POOL_KEY], POOL_KEY)
    except SpecError as exc:
        raise ConfigError(f"pool {path}: {exc} (a pool file lists testbed files: {POOL_KEY}: [FILE, ...])") from None
    return [(path.parent / Path(name).expanduser()) for name in names]


def _testbed(path: Path, data: object, what: str) -> Testbed:
    if not isinstance(data, Mapping):
        raise ConfigError(f"{what}: expected a mapping: a testbed (keys {', '.join(REQUIRED)}) or a pool "
                          f"({POOL_KEY}: [FILE, ...])")
    return parse_testbed(data, path)


def candidates(given: Sequence[str]) -> list[Candidate]:
    """The testbeds of `given` (testbed and pool files), in order, each once; ConfigError (one
    line) for any file that is not what it should be."""
    found: list[Candidate] = []
    seen: dict[Path, str] = {}

    def add(path: Path, data: object, named_by: str, what: str) -> None:
        key = path.resolve()
        if key in seen:
            raise ConfigError(f"{what}: testbed {path} is given twice (first by {seen[key]}); name each testbed once")
        seen[key] = named_by
        found.append(Candidate(path, _testbed(path, data, f"testbed {path}"), named_by))

    for name in given:
        path = Path(name)
        data = _read(path, f"testbed {path}")
        if not is_pool(data):
            add(path, data, "--testbed", f"--testbed {path}")
            continue
        for i, entry in enumerate(_pool_entries(path, data)):
            where = f"pool {path}: {POOL_KEY}[{i}]"
            if not entry.exists():
                raise ConfigError(f"{where}: no testbed file {entry} (a pool names testbed files relative to "
                                  f"itself)")
            content = _read(entry, where)
            if is_pool(content):
                raise ConfigError(f"{where}: {entry} is a pool; a pool lists testbed files, not pools")
            add(entry, content, f"pool {path}", where)
    if len(found) > POOL_MAX_TESTBEDS:
        raise ConfigError(f"testbeds: {len(found)} given, at most {POOL_MAX_TESTBEDS}")
    return found

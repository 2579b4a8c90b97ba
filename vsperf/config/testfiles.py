"""Test-case files as VSPERF wrote them: which tests each file adds, to which list.

A test-case file is a YAML list of test cases, or a file holding PERFORMANCE_TESTS and/or
INTEGRATION_TESTS (VSPERF's Python form, e.g. upstream's conf/01_testcases.conf and
conf/integration/01_testcases.conf, or a YAML mapping). Files read together (TEST_CASE_FILES,
`-f`, `-d`) share their names, in order, as VSPERF's settings files did: upstream's
`01a_testcases_l34_vxlan.conf` extends the INTEGRATION_TESTS and uses the STEP_* lists of
`01_testcases.conf`. A file that only adds to a list (`X = X + [...]`, `X += [...]`) adds its
new tests; a file that assigns a list afresh adds all of it.

The file variables (`_NAME`) of the files read so far that a test's TestSteps read as `$_NAME`
come with the test, under its own Parameters: VSPERF's steps read them as settings, and
`settings setValue` changes them while the test runs.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vsperf.config.params import load_yaml
from vsperf.config.pyconf import is_file_variable, looks_like_pyconf, read_conf_names
from vsperf.config.schema import SETTINGS_SCHEMA
from vsperf.errors import ConfigError
from vsperf.inputs import read_text_file
from vsperf.inputs.limits import SETTINGS_FILE_MAX_BYTES

log = logging.getLogger(__name__)

TEST_LISTS = ("PERFORMANCE_TESTS", "INTEGRATION_TESTS")


@dataclass(frozen=True)
class FileTests:
    """The test definitions one file adds, and the list each came from."""

    path: Path
    performance: tuple[Any, ...] = ()
    integration: tuple[Any, ...] = ()


def _added(previous: list[Any] | None, now: Any) -> list[Any]:
    if not isinstance(now, list):
        return now  # type: ignore[no-any-return]  # the catalog says what is wrong with it
    if previous is not None and now[:len(previous)] == previous:
        return now[len(previous):]
    return now


def _with_variables(test: Any, names: dict[str, Any]) -> Any:
    """`test` with the file variables its TestSteps read under its Parameters (see the docstring)."""
    if not isinstance(test, dict) or "TestSteps" not in test:
        return test
    text = repr(test["TestSteps"])
    used = {n: v for n, v in names.items() if is_file_variable(n) and f"${n}" in text}
    if not used:
        return test
    own = test.get("Parameters")
    return {**test, "Parameters": {**used, **own} if isinstance(own, dict) else used}


def read_test_files(paths: Iterable[Path]) -> list[FileTests]:
    """The tests of each file, in order (ConfigError naming the file and the line)."""
    names: dict[str, Any] = {}
    out: list[FileTests] = []
    for path in paths:
        where = f"test-case file {path}"
        text = read_text_file(path, where, SETTINGS_FILE_MAX_BYTES)
        # settings in a test-case file are not applied; its other names are its tests' building blocks
        if path.suffix in (".conf", ".py") or looks_like_pyconf(text):
            conf = read_conf_names(text, where, names, warn_lowercase=False)
            for name, why in conf.unavailable.items():
                if name in TEST_LISTS:
                    raise ConfigError(f"{where}: {name} is not computed: {why}")
            data: Any = {name: _added(names.get(name), conf.names[name]) for name in TEST_LISTS if name in conf.values}
            data = {name: [_with_variables(t, conf.names) for t in tests] if isinstance(tests, list) else tests
                    for name, tests in data.items()}
            others = sorted(n for n in conf.values if n in SETTINGS_SCHEMA and n not in TEST_LISTS)
            names = conf.names
        else:
            # The same strict YAML as settings files: only true/false are booleans.
            data = load_yaml(text, where)
            if isinstance(data, list) or data is None:
                data = {"PERFORMANCE_TESTS": data or []}
            if not isinstance(data, dict) or not any(name in data for name in TEST_LISTS):
                raise ConfigError(f"{where}: expected a list of test cases, got {type(data).__name__}")
            others = sorted(str(k) for k in data if k not in TEST_LISTS)
        if not any(name in data for name in TEST_LISTS):
            log.warning("%s: holds no PERFORMANCE_TESTS nor INTEGRATION_TESTS (settings? give them with "
                        "--conf-file)", where)
            out.append(FileTests(path))
            continue
        if others:
            log.warning("%s: ignoring %s: a test-case file is read for PERFORMANCE_TESTS and INTEGRATION_TESTS only "
                        "(settings go in --conf-file)", where, ", ".join(others))
        for name in TEST_LISTS:
            if name in data and not isinstance(data[name], list):
                raise ConfigError(f"{where}: {name}: expected a list of test cases, got {type(data[name]).__name__}")
        out.append(FileTests(path, tuple(data.get("PERFORMANCE_TESTS") or ()),
                             tuple(data.get("INTEGRATION_TESTS") or ())))
    return out

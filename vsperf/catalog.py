"""The test-case catalog: VSPERF's test cases as YAML, validated, and selected by name.

A test-case file holds a list of mappings with VSPERF's keys. Files ship in testcases/;
users add theirs with the TEST_CASE_FILES setting (files or folders of *.yaml).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vsperf.config.params import load_yaml
from vsperf.errors import ConfigError, UnknownNameError
from vsperf.paths import data_dir

DEPLOYMENT_RE = re.compile(r"^(p2p|pvp|pvvp\d*|pvpv\d*|clean)$")
NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
FRAME_MODIFICATIONS = ("vlan",)
LOAD_KEYS: dict[str, type | tuple[type, ...]] = {
    "tool": str, "load": (int, float), "reserved": int, "pattern": str, "load_memory": (int, float),
}
LOAD_PATTERNS = ("c", "m", "cm", "i")

# Key in the YAML file -> (required, type, help)
TEST_KEYS: dict[str, tuple[bool, type | tuple[type, ...], str]] = {
    "Name": (True, str, "the test's name, as typed on the command line"),
    "Deployment": (True, str, "p2p, pvp, pvvp[N], pvpv[N] or clean"),
    "Description": (True, str, "the LTD identifier or a one-line description"),
    "Parameters": (False, dict, "settings the test overrides"),
    "Frame Modification": (False, str, "vlan: the switch pushes a VLAN tag"),
    "Load": (False, dict, "CPU or memory load during traffic (tool, load, reserved, pattern, load_memory)"),
}


@dataclass(frozen=True)
class TestCase:
    """One test case of the catalog."""

    name: str
    deployment: str
    description: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
    frame_modification: str | None = None
    load: Mapping[str, Any] | None = None
    source: str = ""  # the file it came from

    @property
    def traffic_type(self) -> str:
        """The traffic type the test's Parameters set (VSPERF's default when they do not)."""
        traffic = self.parameters.get("TRAFFIC") or {}
        return str(traffic.get("traffic_type", "rfc2544_throughput"))


def _closest(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _type_name(t: type | tuple[type, ...]) -> str:
    names = {"str": "a string", "dict": "a mapping", "int": "an integer", "float": "a number"}
    types = t if isinstance(t, tuple) else (t,)
    return " or ".join(names.get(x.__name__, x.__name__) for x in types)


def _validate(entry: Any, where: str) -> TestCase:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: a test case must be a mapping, got {type(entry).__name__}")
    for key, value in entry.items():
        if key not in TEST_KEYS:
            raise ConfigError(f"{where}: unknown key {key!r}{_closest(str(key), TEST_KEYS)}")
        expected = TEST_KEYS[key][1]
        if not isinstance(value, expected) or isinstance(value, bool):
            raise ConfigError(
                f"{where}: {key} must be {_type_name(expected)}, got {type(value).__name__} {value!r}"
            )
    for key, (required, _, _) in TEST_KEYS.items():
        if required and key not in entry:
            raise ConfigError(f"{where}: missing required key {key!r}")
    name = entry["Name"]
    if not NAME_RE.match(name):
        raise ConfigError(f"{where}: Name {name!r} may only hold letters, digits, '_', '-' and '.'")
    deployment = entry["Deployment"]
    if not DEPLOYMENT_RE.match(deployment):
        raise ConfigError(
            f"{where}: unknown Deployment {deployment!r}; valid: p2p, pvp, pvvp[N], pvpv[N], clean"
        )
    mod = entry.get("Frame Modification")
    if mod is not None and mod not in FRAME_MODIFICATIONS:
        raise ConfigError(f"{where}: unknown Frame Modification {mod!r}; valid: {', '.join(FRAME_MODIFICATIONS)}")
    load = entry.get("Load")
    if load is not None:
        _validate_load(load, where)
    return TestCase(
        name=name,
        deployment=deployment,
        description=entry["Description"].strip(),
        parameters=entry.get("Parameters") or {},
        frame_modification=mod,
        load=load,
        source=where.split(":")[0],
    )


def _validate_load(load: Mapping[str, Any], where: str) -> None:
    for key, value in load.items():
        if key not in LOAD_KEYS:
            raise ConfigError(f"{where}: unknown Load key {key!r}{_closest(str(key), LOAD_KEYS)}")
        if not isinstance(value, LOAD_KEYS[key]) or isinstance(value, bool):
            raise ConfigError(f"{where}: Load.{key} must be {_type_name(LOAD_KEYS[key])}, got {value!r}")
    if not 0 <= float(load.get("load", 100)) <= 100:
        raise ConfigError(f"{where}: Load.load is a percentage between 0 and 100, got {load['load']!r}")
    if load.get("pattern", "c") not in LOAD_PATTERNS:
        raise ConfigError(f"{where}: Load.pattern must be one of {', '.join(LOAD_PATTERNS)}, got {load['pattern']!r}")


def load_file(path: Path) -> list[TestCase]:
    """Read and validate one test-case file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read test-case file {path}: {exc.strerror}") from exc
    # The same strict YAML as settings files: only true/false are booleans.
    data = load_yaml(text, f"test-case file {path}")
    if data is None:
        return []
    if not isinstance(data, list):
        raise ConfigError(f"test-case file {path}: expected a list of test cases, got {type(data).__name__}")
    tests: list[TestCase] = []
    for i, entry in enumerate(data, start=1):
        label = entry.get("Name") if isinstance(entry, dict) else None
        where = f"{path}: test #{i}" + (f" ({label})" if label else "")
        tests.append(_validate(entry, where))
    return tests


def _files(paths: Iterable[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(sorted(p.glob("*.yaml")))
        elif p.exists():
            out.append(p)
        else:
            raise ConfigError(f"test-case file {p} does not exist (setting TEST_CASE_FILES)")
    return out


@dataclass(frozen=True)
class Catalog:
    """Every known test case by name, in file order."""

    tests: tuple[TestCase, ...]

    @classmethod
    def load(cls, extra: Sequence[str | Path] = ()) -> Catalog:
        """The shipped test cases plus the user's files; a later file may redefine a test."""
        by_name: dict[str, TestCase] = {}
        for path in _files([data_dir("testcases"), *(Path(p).expanduser() for p in extra)]):
            for test in load_file(path):
                by_name[test.name] = test
        return cls(tuple(by_name.values()))

    def names(self) -> list[str]:
        return [t.name for t in self.tests]

    def get(self, name: str) -> TestCase:
        for test in self.tests:
            if test.name == name:
                return test
        raise UnknownNameError(f"unknown test {name!r}{_closest(name, self.names())}; `vsperf --list` shows them")

    def select(self, names: Sequence[str] = (), filters: str | None = None) -> list[TestCase]:
        """Tests named on the command line, then VSPERF's `-t "substr,!exclude"` filter.

        With neither, every test of the catalog runs (as VSPERF does).
        """
        chosen = [self.get(n) for n in names] if names else list(self.tests)
        if filters:
            include = [f.strip() for f in filters.split(",") if f.strip() and not f.strip().startswith("!")]
            exclude = [f.strip()[1:] for f in filters.split(",") if f.strip().startswith("!")]
            if include and not names:
                chosen = [t for t in chosen if any(s in t.name for s in include)]
            elif include:
                chosen += [t for t in self.tests if any(s in t.name for s in include) and t not in chosen]
            chosen = [t for t in chosen if not any(s and s in t.name for s in exclude)]
            if not chosen:
                raise UnknownNameError(f"no test matches --tests {filters!r}; `vsperf --list` shows them")
        return chosen

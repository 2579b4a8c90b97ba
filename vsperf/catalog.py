"""The test-case catalog: VSPERF's test cases as YAML, validated, and selected by name.

A test-case file holds a list of mappings with VSPERF's keys. Files ship in testcases/;
users add theirs with the TEST_CASE_FILES setting (files or folders of *.yaml and *.conf), or as
VSPERF did, with PERFORMANCE_TESTS and INTEGRATION_TESTS in a conf file (YAML or VSPERF's Python
form): the same keys, validated the same way. VSPERF's test keywords vSwitch, VNF, Trafficgen and
Collector become the test's VSWITCH, VNF, TRAFFICGEN and COLLECTOR settings. The tests of
INTEGRATION_TESTS form the integration set (`vsperf --integration`), the others the performance
set. A test's TestSteps are checked as a whole here (vsperf.steps.model); a test vsperf cannot
run here (a VPP switch, a step it does not run) is listed, left out of a run of every test, and
refused with one line when named.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vsperf.config.testfiles import read_test_files
from vsperf.config.types import show
from vsperf.config.vsperf_compat import backend_name, missing_backend
from vsperf.deploy.topology import parse_deployment
from vsperf.errors import ConfigError, PrerequisiteError, UnknownNameError
from vsperf.inputs import expand_path
from vsperf.paths import data_dir
from vsperf.steps.model import Step, parse_steps

log = logging.getLogger(__name__)

DEPLOYMENT_RE = re.compile(r"p2p|pvp|pvvp\d{0,3}|pvpv\d{0,3}|clean|op2p|ptunp")  # fullmatch
# VSPERF's deployments vsperf does not have yet: why.
UNSUPPORTED_DEPLOYMENTS: dict[str, str] = {}
TUNNEL_TYPES = ("vxlan", "gre", "geneve")
TUNNEL_OPERATIONS = ("encapsulation", "decapsulation")
TEST_MODIFIERS = ("framemod", "other")  # VSPERF documents the key, and never read it
NAME_RE = re.compile(r"[A-Za-z0-9_.-]+")  # fullmatch: a trailing newline is not part of a name
# A name becomes part of file names (result_<idx>_<Name>_<Deployment>.csv, plots) and of every
# table of the report; a description is printed in the report and `vsperf --list`.
NAME_MAX_CHARS = 100
DESCRIPTION_MAX_CHARS = 2000
FRAME_MODIFICATIONS = ("vlan", "mpls", "mac", "dscp", "ttl", "ip_addr", "ip_port")
LOAD_KEYS: dict[str, type | tuple[type, ...]] = {
    "tool": str, "load": (int, float), "reserved": int, "pattern": str, "load_memory": (int, float),
    "options": str,
}
LOAD_PATTERNS = ("c", "m", "cm", "i")

# VSPERF's test keywords -> the setting they set for the test (over --vswitch, --vnf, --trafficgen).
KEYWORD_SETTINGS = {"vSwitch": "VSWITCH", "VNF": "VNF", "Trafficgen": "TRAFFICGEN", "Collector": "COLLECTOR"}
# Key in the YAML file -> (required, type, help)
TEST_KEYS: dict[str, tuple[bool, type | tuple[type, ...], str]] = {
    "Name": (True, str, "the test's name, as typed on the command line"),
    "Deployment": (True, str, "p2p, pvp, pvvp[N], pvpv[N], clean, op2p or ptunp"),
    "Description": (False, str, "the LTD identifier or a one-line description"),
    "Parameters": (False, dict, "settings the test overrides"),
    "Frame Modification": (False, str, "what the switch changes in every frame: vlan, mpls, mac, dscp, ttl, "
                                       "ip_addr or ip_port"),
    "Load": (False, dict, "CPU or memory load during traffic (tool, load, reserved, pattern, load_memory)"),
    **{keyword: (False, str, f"{setting} of this test") for keyword, setting in KEYWORD_SETTINGS.items()},
    "Tunnel Type": (False, str, "op2p and ptunp: vxlan, gre or geneve (default: the TUNNEL_TYPE setting)"),
    "Tunnel Operation": (False, str, "op2p: encapsulation or decapsulation (the switch adds or strips the tunnel)"),
    "TestSteps": (False, list, "VSPERF's step-driven test: the steps it runs after the deployment"),
    "Test Modifier": (False, str, "VSPERF's FrameMod or Other: documentation only (VSPERF never read it)"),
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
    # why vsperf cannot run this test here ("" when it can), and whether that is a missing
    # prerequisite (PrerequisiteError) rather than an unsupported feature (ConfigError)
    unavailable: str = ""
    unavailable_prerequisite: bool = False
    integration: bool = False  # from INTEGRATION_TESTS: run with --integration
    steps: tuple[Step, ...] | None = None  # TestSteps, checked (None: none)
    tunnel_type: str | None = None  # op2p/ptunp: the test's Tunnel Type (None: TUNNEL_TYPE)
    tunnel_operation: str | None = None  # op2p: encapsulation or decapsulation

    def check_available(self) -> None:
        """Raise the one-line error saying why this test cannot run, if it cannot."""
        if self.unavailable:
            error = PrerequisiteError if self.unavailable_prerequisite else ConfigError
            raise error(f"test {self.name}: {self.unavailable}")

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


def _keyword_parameters(entry: Mapping[str, Any], where: str) -> tuple[dict[str, Any], str, bool]:
    """Parameters with VSPERF's keywords applied, and why the test cannot run ('' if it can)."""
    parameters = dict(entry.get("Parameters") or {})
    for keyword, setting in KEYWORD_SETTINGS.items():
        if keyword in entry:
            parameters[setting] = entry[keyword]
    for setting in ("VSWITCH", "VNF", "TRAFFICGEN", "LOADGEN"):
        if setting not in parameters:
            continue
        missing = missing_backend(setting, parameters[setting])
        if missing is not None:
            return parameters, f"needs {missing}", isinstance(missing, PrerequisiteError)
        parameters[setting] = backend_name(setting, parameters[setting], where)
    if entry["Deployment"] in UNSUPPORTED_DEPLOYMENTS:
        return parameters, UNSUPPORTED_DEPLOYMENTS[entry["Deployment"]], False
    return parameters, "", False


def _choice(entry: Mapping[str, Any], key: str, choices: tuple[str, ...], where: str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if str(value).lower() not in choices:
        raise ConfigError(f"{where}: unknown {key} {value!r}{_closest(str(value).lower(), choices)}; valid: "
                          f"{', '.join(choices)}")
    return str(value).lower()


def _tunnel(entry: Mapping[str, Any], where: str) -> tuple[str | None, str | None]:
    """The test's Tunnel Type and Tunnel Operation, checked against its Deployment."""
    tunnel = _choice(entry, "Tunnel Type", TUNNEL_TYPES, where)
    operation = _choice(entry, "Tunnel Operation", TUNNEL_OPERATIONS, where)
    _choice(entry, "Test Modifier", TEST_MODIFIERS, where)
    deployment = entry["Deployment"]
    if deployment == "op2p" and operation is None:
        raise ConfigError(f"{where}: Deployment op2p needs a Tunnel Operation ({', '.join(TUNNEL_OPERATIONS)})")
    if deployment not in ("op2p", "ptunp") and (tunnel or operation):
        key = "Tunnel Type" if tunnel else "Tunnel Operation"
        raise ConfigError(f"{where}: {key} goes with Deployment op2p or ptunp, not {deployment}")
    return tunnel, operation


def _steps(entry: Mapping[str, Any], name: str) -> tuple[tuple[Step, ...] | None, str]:
    """The test's checked TestSteps, or why they cannot run (the message without 'test NAME: ')."""
    if "TestSteps" not in entry:
        return None, ""
    try:
        return parse_steps(name, entry["TestSteps"]), ""
    except ConfigError as exc:
        return None, str(exc).removeprefix(f"test {name}: ")


def _guest_problem(parameters: Mapping[str, Any]) -> str:
    """Why a test's Parameters need guests vsperf does not have ('' if nothing). (Checked here,
    before the run: a step-driven test naming them would stop the whole run.)"""
    nics = parameters.get("GUEST_NICS_NR")
    if any(str(n) != "2" for n in (nics if isinstance(nics, list | tuple) else [nics] if nics is not None else [])):
        return f"GUEST_NICS_NR {nics}: vsperf's guests have exactly 2 NICs (T-Rex inside a VM needs 4)"
    return ""


def _validate(entry: Any, where: str, integration: bool = False) -> TestCase:
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
    if not NAME_RE.fullmatch(name):
        raise ConfigError(f"{where}: Name {show(name)} may only hold letters, digits, '_', '-' and '.'")
    if len(name) > NAME_MAX_CHARS:
        raise ConfigError(f"{where}: Name is {len(name)} characters long; at most {NAME_MAX_CHARS} (it becomes "
                          f"part of file names)")
    if len(str(entry.get("Description", ""))) > DESCRIPTION_MAX_CHARS:
        raise ConfigError(f"{where}: Description is {len(entry['Description']):,} characters long; at most "
                          f"{DESCRIPTION_MAX_CHARS:,} (the report prints it)")
    deployment = entry["Deployment"]
    if deployment not in UNSUPPORTED_DEPLOYMENTS:
        if not DEPLOYMENT_RE.fullmatch(deployment):
            raise ConfigError(
                f"{where}: unknown Deployment {show(deployment)}; valid: p2p, pvp, pvvp[N], pvpv[N], clean"
            )
        try:  # the number of VNFs, bounded as every deployment of a run is (simulated DUT included)
            parse_deployment(deployment)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    mod = entry.get("Frame Modification")
    if mod is not None and str(mod).lower() not in FRAME_MODIFICATIONS:
        raise ConfigError(f"{where}: unknown Frame Modification {mod!r}; valid: {', '.join(FRAME_MODIFICATIONS)}")
    load = entry.get("Load")
    if load is not None:
        _validate_load(load, where)
    tunnel, operation = _tunnel(entry, where)
    parameters, unavailable, prerequisite = _keyword_parameters(entry, where)
    steps, steps_problem = _steps(entry, name)
    if steps is not None and not steps_problem:
        steps_problem = _guest_problem(parameters)
    if steps_problem and not unavailable:
        unavailable = steps_problem
    return TestCase(
        name=name,
        deployment=deployment,
        description=str(entry.get("Description", "")).strip(),
        parameters=parameters,
        frame_modification=mod,
        load=load,
        source=where.split(":")[0],
        unavailable=unavailable,
        unavailable_prerequisite=prerequisite,
        integration=integration,
        steps=steps,
        tunnel_type=tunnel,
        tunnel_operation=operation,
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
    if str(load.get("options", "")).strip():
        raise ConfigError(f"{where}: Load.options (extra load generator options) is not supported by vsperf; "
                          f"remove it")


def load_files(paths: Sequence[Path]) -> list[TestCase]:
    """Read and validate test-case files, in order (they share their names, as VSPERF's files did:
    see vsperf.config.testfiles): the tests of their PERFORMANCE_TESTS, then INTEGRATION_TESTS."""
    tests: list[TestCase] = []
    for found in read_test_files(paths):
        tests += load_entries(found.performance, f"{found.path}")
        tests += load_entries(found.integration, f"{found.path}", integration=True)
    return tests


def load_file(path: Path) -> list[TestCase]:
    """Read and validate one test-case file (see `load_files`)."""
    return load_files([path])


def load_entries(entries: Sequence[Any], origin: str, *, integration: bool = False) -> list[TestCase]:
    """Validate test-case mappings (a file's list, PERFORMANCE_TESTS, or INTEGRATION_TESTS with
    `integration`) coming from `origin`."""
    tests: list[TestCase] = []
    first: dict[str, int] = {}
    for i, entry in enumerate(entries, start=1):
        label = entry.get("Name") if isinstance(entry, dict) else None
        if isinstance(label, str) and not (NAME_RE.fullmatch(label) and len(label) <= NAME_MAX_CHARS):
            label = show(label)  # a name with a newline must not break the message's one line
        where = f"{origin}: test #{i}" + (f" ({label})" if label else "")
        test = _validate(entry, where, integration)
        if test.name in first:
            raise ConfigError(f"{where}: test #{first[test.name]} has the same Name; give each test its own")
        first[test.name] = i
        tests.append(test)
    return tests


def _files(paths: Iterable[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(sorted([*p.glob("*.yaml"), *p.glob("*.conf")]))
        elif p.exists():
            out.append(p)
        else:
            raise ConfigError(f"test-case file {p} does not exist (setting TEST_CASE_FILES)")
    return out


@dataclass(frozen=True)
class Catalog:
    """Every known test case by name, in file order (`view` keeps one set: performance or
    integration)."""

    tests: tuple[TestCase, ...]
    # the tests a run without test names runs (PERFORMANCE_TESTS, INTEGRATION_TESTS when given);
    # empty: every test
    default_names: tuple[str, ...] = ()
    other_set: tuple[str, ...] = ()  # a view: the names of the other set's tests (a hint when named)
    integration: bool = False  # a view: of the integration set

    @classmethod
    def load(cls, extra: Sequence[str | Path] = (), performance_tests: Sequence[Any] = (),
             performance_tests_origin: str = "PERFORMANCE_TESTS", integration_tests: Sequence[Any] = (),
             integration_tests_origin: str = "INTEGRATION_TESTS") -> Catalog:
        """The shipped test cases, the user's files, then `performance_tests` and
        `integration_tests` (VSPERF's PERFORMANCE_TESTS and INTEGRATION_TESTS, from a conf file);
        a later one may redefine a test of its set."""
        by_name: dict[tuple[bool, str], TestCase] = {
            (test.integration, test.name): test for test in load_files(_files([data_dir("testcases")]))}
        shipped = dict(by_name)
        paths = _files([expand_path(p, f'test-case file {p}') for p in extra])
        for test in load_files(paths):
            key = (test.integration, test.name)
            if key in by_name and key not in shipped:
                raise ConfigError(f"test-case file {test.source}: test {test.name} is also defined in "
                                  f"{by_name[key].source}; give each test its own Name")
            if key in shipped:
                log.info("%s: test %s replaces the shipped one", test.source, test.name)
            shipped.pop(key, None)
            by_name[key] = test
        custom = [*load_entries(performance_tests, performance_tests_origin),
                  *load_entries(integration_tests, integration_tests_origin, integration=True)]
        for test in custom:
            by_name.pop((test.integration, test.name), None)  # a redefined test moves to its new place
            by_name[(test.integration, test.name)] = test
        return cls(tuple(by_name.values()), tuple(t.name for t in custom))

    def view(self, *, integration: bool) -> Catalog:
        """The integration set (INTEGRATION_TESTS, `vsperf --integration`) or the performance set."""
        mine = tuple(t for t in self.tests if t.integration == integration)
        names = {t.name for t in mine}
        return Catalog(mine, tuple(n for n in self.default_names if n in names),
                       tuple(t.name for t in self.tests if t.integration != integration), integration)

    def names(self) -> list[str]:
        """Every test's name, in catalog order."""
        return [t.name for t in self.tests]

    def get(self, name: str) -> TestCase:
        """The test called `name` (UnknownNameError naming the closest one)."""
        for test in self.tests:
            if test.name == name:
                return test
        if name in self.other_set:
            hint = "run it without --integration" if self.integration else "add --integration"
            kind = "a performance test" if self.integration else "an integration test (INTEGRATION_TESTS)"
            raise UnknownNameError(f"test {name!r} is {kind}: {hint}")
        listing = "`vsperf --integration --list`" if self.integration else "`vsperf --list`"
        raise UnknownNameError(f"unknown test {name!r}{_closest(name, self.names())}; {listing} shows them")

    def select(self, names: Sequence[str] = (), filters: str | None = None) -> list[TestCase]:
        """Tests named on the command line, then VSPERF's `-t "substr,!exclude"` filter
        (substrings matched ignoring case, as VSPERF does).

        With neither, every test of the catalog runs (as VSPERF does), or only PERFORMANCE_TESTS'
        when a conf file gave them. A named test that cannot run here raises its one-line error;
        such tests are left out of the others, with a warning.
        """
        pool = [self.get(n) for n in self.default_names] if self.default_names else list(self.tests)
        chosen = [self.get(n) for n in names] if names else pool
        if filters is not None:
            words = [f.strip().lower() for f in filters.split(",")]
            include = [w for w in words if w and not w.startswith("!")]
            exclude = [w[1:] for w in words if w.startswith("!") and w[1:]]
            if not include and not exclude:  # an empty $TESTS in a CI job must not run every test
                raise UnknownNameError(f"--tests {filters!r} names no test; give substrings such as "
                                       f"'tput,!vpp' (`vsperf --list` shows the tests)")

            def matches(test: TestCase, subs: list[str]) -> bool:
                return any(s in test.name.lower() for s in subs)
            if include and not names:
                chosen = [t for t in chosen if matches(t, include)]
            elif include:
                chosen += [t for t in pool if matches(t, include) and t not in chosen]
            chosen = [t for t in chosen if not matches(t, exclude)]
            if not chosen:
                raise UnknownNameError(f"no test matches --tests {filters!r}; `vsperf --list` shows them")
        for name in names:
            self.get(name).check_available()
        runnable = [t for t in chosen if not t.unavailable]
        left_out = [t.name for t in chosen if t.unavailable]
        if left_out and not runnable:
            chosen[0].check_available()
        if left_out:
            log.warning("left out %d test(s) vsperf cannot run here: %s (vsperf --list says why)",
                        len(left_out), ", ".join(left_out))
        return runnable

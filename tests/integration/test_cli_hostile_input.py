"""A campaign of generated bad input through the `vsperf` command, as a careless or hostile user
types it: the exit-code promise (tests/integration/promise.py) must hold for every example.

Property-based (hypothesis, derandomized so CI sees the same examples every run): invalid values
of every scalar setting through each way settings come in; YAML documents built to explode
(alias bombs, values containing themselves, deep nesting, duplicate keys) wherever YAML is read;
files that are not what they claim (FIFOs, devices, directories, oversized, binary, UTF-16,
invalid UTF-8) in every role a file has; results.json files with NaN, infinity, deep nesting or
cut short. Each example is one `vsperf` process on the simulated DUT: a few minutes in all.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from promise import DUMMY, expect_refusal, invoke

from vsperf.config.schema import SETTINGS_SCHEMA
from vsperf.config.types import Bool, Float, Int, Str
from vsperf.inputs.limits import MAX_NODES

CAMPAIGN = settings(deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                           HealthCheck.data_too_large])
SCALARS = {name: s.spec for name, s in SETTINGS_SCHEMA.items() if isinstance(s.spec, Int | Float | Str | Bool)}
TESTCASE = "- Name: hostile_t\n  Deployment: p2p\n  Description: d\n"
TESTBED = ("hosts: {dut: {address: 198.18.0.2, known_hosts_file: /nonexistent}}\ndut_host: dut\n"
           "trafficgen_host: dut\nports:\n  - dut: {interface: eth0}\n    trafficgen: {interface: eth1}\n")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostile")


@pytest.fixture(scope="module")
def good_run(base: Path) -> Path:
    """A real results directory (the simulated DUT), the starting point of damaged copies."""
    out = base / "good_run"
    outcome = invoke(["phy2phy_tput", *DUMMY, "--results-dir", str(out), "--test-params",
                      "TRAFFICGEN_PKT_SIZES=(64,128)"], base)
    assert outcome.code == 0, outcome.stderr
    return out


def fresh(base: Path) -> Path:
    """A new, empty directory for one example (hypothesis reuses the test's fixtures)."""
    return Path(tempfile.mkdtemp(dir=base))


# --- invalid values of every scalar setting -----------------------------------------------------

def _invalid(spec: Any) -> st.SearchStrategy[str]:
    """Texts (as typed after KEY=) that `spec` must refuse."""
    wrong_type = st.sampled_from(["[1, 2]", "{a: 1}"])
    if isinstance(spec, Int):
        above = st.integers(1, 10**40).map(lambda k: str((spec.max or 0) + k))
        below = st.integers(1, 10**6).map(lambda k: str(spec.min - k)) if spec.min is not None else above
        return st.one_of(above, below, st.just("1.5"), st.just("'12'"), wrong_type)
    if isinstance(spec, Float):
        top = spec.max if spec.max is not None else spec.lt
        above = st.floats(1, 1e300).map(lambda k: repr(top + abs(top) * 10 + k))
        return st.one_of(above, st.sampled_from([".nan", ".inf", "-.inf", "'fast'", "1e999"]), wrong_type)
    if isinstance(spec, Bool):
        return st.one_of(st.sampled_from(["maybe", "2", "'on'", "'1'"]), wrong_type)
    if spec.choices:
        return st.one_of(st.from_regex(r"zz[a-z]{0,10}", fullmatch=True), wrong_type)
    return st.one_of(st.integers(1, 300).map(lambda k: "y" * (spec.max_len + k)), wrong_type)


@st.composite
def bad_setting(draw: st.DrawFn) -> tuple[str, str, str]:
    name = draw(st.sampled_from(sorted(SCALARS)))
    return name, draw(_invalid(SCALARS[name])), draw(st.sampled_from(["--test-params", "conf", "env"]))


@settings(CAMPAIGN, max_examples=15)
@given(case=bad_setting())
def test_invalid_setting_values(base: Path, case: tuple[str, str, str]) -> None:
    name, text, channel = case
    here = fresh(base)
    args = ["phy2phy_tput", *DUMMY, "--results-dir", "out"]
    env = {}
    if channel == "--test-params":
        args += ["--test-params", f"{name}={text}"]
    elif channel == "conf":
        (here / "my.yaml").write_text(f"{name}: {text}\n")
        args += ["--conf-file", "my.yaml"]
    else:
        args.append("--load-env")
        env[name] = text
    expect_refusal(args, here, name, env=env)


# --- YAML built to explode, wherever YAML is read -----------------------------------------------

@st.composite
def hostile_yaml(draw: st.DrawFn) -> str:
    """One flow-style YAML document (usable on a command line, in an environment variable or
    inside any file) that the bounded loader must refuse."""
    kind = draw(st.sampled_from(["bomb", "self", "deep", "duplicate"]))
    if kind == "bomb":
        width = draw(st.integers(6, 12))
        levels = draw(st.integers(4, 10).filter(lambda n: width ** n > MAX_NODES))
        parts = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
        parts += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
        return "{" + ", ".join(parts) + "}"
    if kind == "self":
        inner = "*a"
        for _ in range(draw(st.integers(0, 5))):
            inner = draw(st.sampled_from([f"[x, {inner}]", f"{{k: {inner}}}"]))
        return f"&a [1, {inner}]"
    if kind == "deep":
        depth = draw(st.integers(65, 3000))
        return "[" * depth + "]" * depth
    key = draw(st.from_regex(r"[a-z]{1,8}", fullmatch=True))
    doc = f"{{{key}: 1, {key}: 2}}"
    for _ in range(draw(st.integers(0, 4))):
        doc = f"{{outer: {doc}}}"
    return doc


@settings(CAMPAIGN, max_examples=12)
@given(doc=hostile_yaml(), where=st.sampled_from(["--test-params", "env", "conf", "testcase", "testbed"]),
       name=st.sampled_from(["TRAFFIC", "TRAFFICGEN_PKT_SIZES", "NOT_A_SETTING"]))
def test_hostile_yaml_everywhere(base: Path, doc: str, where: str, name: str) -> None:
    here = fresh(base)
    args = ["phy2phy_tput", *DUMMY, "--results-dir", "out"]
    env: dict[str, str] = {}
    needle = {"--test-params": "--test-params", "env": "environment variable", "conf": "conf file",
              "testcase": "test-case file", "testbed": "testbed"}[where]
    if where == "--test-params":
        args += ["--test-params", f"{name}={doc}"]
    elif where == "env":
        args.append("--load-env")
        env["TRAFFIC"] = doc  # only names of settings are read from the environment
    elif where == "conf":
        (here / "c.yaml").write_text(f"{name}: {doc}\n")
        args += ["--conf-file", "c.yaml"]
    elif where == "testcase":
        (here / "t.yaml").write_text(TESTCASE + f"  Parameters: {doc}\n")
        args += ["-f", "t.yaml"]
    else:
        (here / "bed.yaml").write_text(TESTBED + f"extra: {doc}\n")
        args += ["--testbed", "bed.yaml"]
    expect_refusal(args, here, needle, env=env)


# --- files that are not what they claim ---------------------------------------------------------

ROLES = ("--conf-file", "-f", "--testbed", "report", "compare")


def _place(here: Path, kind: str, data: bytes) -> str:
    """Make the file of `kind` in `here` (or name a device); its path as given to vsperf."""
    path = here / "input.yaml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind in ("/dev/zero", "/dev/null", "/dev/urandom"):
        return kind
    elif kind == "oversized":
        with path.open("wb") as fh:
            fh.truncate(2 * 1024 * 1024)  # sparse: 2 MiB on paper, nothing on disk
    elif kind == "utf16":
        path.write_bytes(TESTCASE.encode("utf-16"))
    else:  # bytes with an invalid UTF-8 sequence or a NUL somewhere in them
        path.write_bytes(data)
    return str(path)


@st.composite
def broken_bytes(draw: st.DrawFn) -> bytes:
    text = TESTCASE.encode()
    at = draw(st.integers(0, len(text)))
    bad = draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x00", b"\xf8\x88\x80\x80\x80"]))
    return text[:at] + bad + text[at:] + draw(st.binary(max_size=64))


@settings(CAMPAIGN, max_examples=14)
@given(kind=st.sampled_from(["fifo", "directory", "/dev/zero", "/dev/null", "/dev/urandom", "oversized", "utf16",
                             "bytes"]),
       role=st.sampled_from(ROLES), data=broken_bytes())
def test_files_that_are_not_what_they_claim(base: Path, kind: str, role: str, data: bytes) -> None:
    here = fresh(base)
    if role in ("report", "compare"):
        (here / "run").mkdir()
        target = here / "run" / "results.json"
        name = _place(here, kind, data)
        if name.startswith("/dev/"):
            target.symlink_to(name)
        else:
            os.rename(name, target)
        args = ["report", "run"] if role == "report" else ["compare", "run", "run"]
        expect_refusal(args, here, "results file run/results.json")
        return
    if kind == "directory" and role == "-f":
        kind = "fifo"  # a directory is what -d (the same option) takes: a folder of test-case files
    path = _place(here, kind, data)
    args = ["phy2phy_tput", *DUMMY, "--results-dir", "out", role, path]
    expect_refusal(args, here, path)


# --- results.json damaged -----------------------------------------------------------------------

@st.composite
def damaged_results(draw: st.DrawFn, text: str) -> bytes:
    kind = draw(st.sampled_from(["constant", "deep", "cut", "utf16"]))
    if kind == "constant":
        spots = [i for i, ch in enumerate(text) if ch == ":" and text[i + 2: i + 3].isdigit()]
        at = draw(st.sampled_from(spots))
        end = at + 2
        while text[end].isdigit() or text[end] in ".e-+":
            end += 1
        value = draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999"]))
        return (text[: at + 2] + value + text[end:]).encode()
    if kind == "deep":
        depth = draw(st.integers(101, 100_000))
        return ('{"schema_version": 1, "x": ' + "[" * depth + "]" * depth + "}").encode()
    if kind == "cut":
        return text[: draw(st.integers(1, len(text) - 2))].encode()
    return text.encode("utf-16")


@pytest.fixture(scope="module")
def good_text(good_run: Path) -> str:
    return (good_run / "results.json").read_text()


@settings(CAMPAIGN, max_examples=8)
@given(data=st.data(), command=st.sampled_from(["report", "compare-a", "compare-b"]))
def test_damaged_results_files(base: Path, good_run: Path, good_text: str, data: st.DataObject,
                               command: str) -> None:
    here = fresh(base)
    (here / "bad").mkdir()
    (here / "bad" / "results.json").write_bytes(data.draw(damaged_results(good_text)))
    args = {"report": ["report", "bad"], "compare-a": ["compare", "bad", str(good_run)],
            "compare-b": ["compare", str(good_run), "bad"]}[command]
    expect_refusal(args, here, "results file bad/results.json")


def test_the_good_run_is_a_valid_starting_point(good_run: Path) -> None:
    data = json.loads((good_run / "results.json").read_text())
    assert data["status"] == "finished" and [t["status"] for t in data["tests"]] == ["passed"]


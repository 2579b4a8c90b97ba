"""Each item of the hostile-input report (issue 28) replayed through the `vsperf` command: places
vsperf cannot write, comparisons that compare nothing, nonsense values, test-case and testbed
files with mistakes. The exit-code promise of tests/integration/promise.py holds for each; the
cases that need their own file system (read-only, full) mount a small tmpfs and need root.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from promise import DUMMY, expect_refusal, invoke

RUN = ["phy2phy_tput", *DUMMY]
TESTBED = ("hosts: {{dut: {{address: 127.0.0.1, port: 1, known_hosts_file: {kh}{key}}}}}\ndut_host: dut\n"
           "trafficgen_host: dut\nports:\n  - dut: {{interface: eth0}}\n    trafficgen: {{interface: eth1}}\n")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two runs of the same test on DUTs of different capacity, and one of another test."""
    base = tmp_path_factory.mktemp("runs")
    found = {}
    for name, test, capacity in (("a", "phy2phy_tput", 5e6), ("slower", "phy2phy_tput", 2.5e6),
                                 ("other", "back2back", 5e6)):
        outcome = invoke([test, *DUMMY, "--results-dir", str(base / name), "--test-params",
                          f"TRAFFICGEN_PKT_SIZES=(64,);TRAFFICGEN_DUMMY_DUT={{'capacity_fps': {capacity}}}"], base)
        assert outcome.code == 0, outcome.stderr
        found[name] = base / name
    empty = json.loads((found["a"] / "results.json").read_text())
    (base / "empty").mkdir()
    (base / "empty" / "results.json").write_text(json.dumps({**empty, "tests": []}))
    found["empty"] = base / "empty"
    return found


@contextlib.contextmanager
def tmpfs(where: Path, size: str, *, read_only: bool = False, fill: bool = False) -> Iterator[Path]:
    """A small tmpfs at `where` (root), optionally filled or read-only; unmounted at the end."""
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
    try:
        if fill:
            with contextlib.suppress(OSError), (where / "filler").open("wb") as fh:
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
        if read_only:
            subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


# --- 1. places vsperf cannot write --------------------------------------------------------------

@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--results-dir", "afile/sub"], "which is a regular file, not a directory"),
        (["--results-dir", "/proc/vsperf-hostile"], "cannot create anything in /proc"),
        (["--results-dir", "/sys/vsperf-hostile"], "cannot create anything in /sys"),
        (["--results-dir", "n" * 300], "longer than the 255 bytes"),
        (["--test-params", "LOG_DIR=afile"], "LOG_DIR (from --test-params) "),
        (["--test-params", "LOG_DIR=~nosuchuser/x"], "'~nosuchuser': no such user's home directory"),
        (["--results-dir", "out", "--xunit-dir", "afile"], "--xunit-dir "),
    ],
)
def test_output_places(tmp_path: Path, args: list[str], needle: str) -> None:
    (tmp_path / "afile").write_text("x")
    expect_refusal([*RUN, *args], tmp_path, needle)


@pytest.mark.root
def test_read_only_and_full_file_systems(tmp_path: Path, runs: dict[str, Path]) -> None:
    with tmpfs(tmp_path / "ro", "1m", read_only=True):
        expect_refusal([*RUN, "--results-dir", "ro/run"], tmp_path, "Read-only file system")
    with tmpfs(tmp_path / "full", "1m", fill=True):
        expect_refusal([*RUN, "--results-dir", "full/run"], tmp_path, "free on its file system, vsperf needs 16 MiB")
        expect_refusal(["compare", str(runs["a"]), str(runs["a"]), "--json", "full/c.json"], tmp_path,
                       "free on its file system")
    with tmpfs(tmp_path / "copy", "4m") as mounted:
        shutil.copytree(runs["a"], mounted / "run")
        subprocess.run(["mount", "-o", "remount,ro", str(mounted)], check=True)
        expect_refusal(["report", "copy/run"], tmp_path, "report directory", "Read-only file system")


@pytest.mark.parametrize(
    ("target", "needle"),
    [(".", "is a directory"), ("missing/c.json", "does not exist"), ("/dev/full", "is a character device")],
)
def test_compare_json_places(tmp_path: Path, runs: dict[str, Path], target: str, needle: str) -> None:
    expect_refusal(["compare", str(runs["a"]), str(runs["a"]), "--json", target], tmp_path, needle)


# --- 4. comparisons that compare nothing, thresholds that guard nothing -------------------------

@pytest.mark.parametrize(
    ("b", "extra", "needle"),
    [
        ("other", [], "nothing compared"),
        ("empty", [], "nothing compared"),
        ("a", ["--metrics", ","], "no metric to compare"),
        ("a", ["--threshold", "nan"], "the compare threshold must be a number above 0 and at most 1000 %"),
        ("a", ["--threshold", "inf"], "at most 1000 %"),
        ("a", ["--threshold", "1e308"], "at most 1000 %"),
    ],
)
def test_compare_refusals(tmp_path: Path, runs: dict[str, Path], b: str, extra: list[str], needle: str) -> None:
    expect_refusal(["compare", str(runs["a"]), str(runs[b]), *extra], tmp_path, needle)


def test_the_environment_does_not_turn_a_gate_green(tmp_path: Path, runs: dict[str, Path]) -> None:
    outcome = invoke(["compare", str(runs["a"]), str(runs["slower"])], tmp_path,
                     env={"COMPARE_THRESHOLD_PERCENT": "999"})
    assert outcome.code == 1 and "REGRESSION" in outcome.stdout, outcome.stdout + outcome.stderr


# --- 6. nonsense values -------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--test-params", "TRAFFICGEN_DURATION=1e-9"], "TRAFFICGEN_DURATION: expected a number in 0.001..604800"),
        (["--test-params", "TRAFFICGEN_PORT_SPEED_GBPS=1e12"], "TRAFFICGEN_PORT_SPEED_GBPS"),
        (["--test-params", "TRAFFICGEN_PORT_SPEED_GBPS=1e-12"], "TRAFFICGEN_PORT_SPEED_GBPS"),
        (["--test-params", "TRAFFICGEN_RFC2544_TESTS=" + "1" + "0" * 30], "expected an integer in 1..100"),
        (["--test-params", "TRAFFICGEN_RFC2544_TESTS=1e30"], "TRAFFICGEN_RFC2544_TESTS"),
        (["--test-params", "TRAFFIC={'frame_rate': 0}"], "TRAFFIC.frame_rate"),
        (["--test-params", "CRITERIA={'nosuchtest': {'throughput_rx_fps': {'min': 1}}}"], "no test is called"),
        (["-t", ""], "names no test"),
        (["-t", ","], "names no test"),
        (["-t", "!"], "names no test"),
    ],
)
def test_nonsense_values(tmp_path: Path, args: list[str], needle: str) -> None:
    expect_refusal([*RUN, "--results-dir", "out", *args], tmp_path, needle)


def test_a_matrix_of_no_metric_fails_the_run(tmp_path: Path) -> None:
    outcome = invoke([*RUN, "--results-dir", "out", "--matrix", "--test-params",
                      "TRAFFICGEN_PKT_SIZES=(64,);MATRIX_METRIC=throughput_fps"], tmp_path)
    assert outcome.code == 1 and "Traceback" not in outcome.stderr
    assert outcome.lines[-1].startswith("vsperf: error: --matrix: MATRIX_METRIC 'throughput_fps': no test of this")


def test_vsperfs_true_is_a_boolean(tmp_path: Path) -> None:
    """docs/userguide.rst and docs/from-vsperf.rst agree with the code: 'True' reads as true."""
    outcome = invoke(["--list-settings", "--test-params", "TRAFFIC={'bidir': 'True'};TRAFFICGEN_RFC2544_VERIFY=Yes"],
                     tmp_path)
    assert outcome.code == 0, outcome.stderr
    settings = {line.split(" = ")[0]: line for line in outcome.stdout.splitlines() if " = " in line}
    assert "bidir: true" in settings["TRAFFIC"] and settings["TRAFFICGEN_RFC2544_VERIFY"].startswith(
        "TRAFFICGEN_RFC2544_VERIFY = true")


# --- 7, 8. test-case files and sizes ------------------------------------------------------------

@pytest.mark.parametrize(
    ("files", "needle"),
    [
        ({"t.yaml": "- Name: t\n  Deployment: pvvp0\n"}, "deployment 'pvvp0'"),
        ({"t.yaml": "- Name: t\n  Deployment: pvvp99999999\n"}, "unknown Deployment 'pvvp99999999'"),
        ({"t.yaml": f"- Name: {'t' * 300}\n  Deployment: p2p\n"}, "Name is 300 characters long; at most 100"),
        ({"t.yaml": '- Name: "t\\n"\n  Deployment: p2p\n'}, "may only hold letters, digits"),
        ({"t.yaml": "- Name: t\n  Deployment: p2p\n- Name: t\n  Deployment: pvp\n"}, "has the same Name"),
        ({"d1/a.yaml": "- Name: t\n  Deployment: p2p\n", "d2/b.yaml": "- Name: t\n  Deployment: pvp\n"},
         "test t is also defined in"),
        ({"t.yaml": f"- Name: t\n  Deployment: p2p\n  Description: {'d' * 1_000_000}\n"}, "Description is 1,000,000"),
    ],
)
def test_test_case_files(tmp_path: Path, files: dict[str, str], needle: str) -> None:
    args = []
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
        args += ["-d", str(Path(name).parent)] if "/" in name else ["-f", name]
    expect_refusal([*RUN, "--results-dir", "out", *args], tmp_path, needle)


def test_a_megabyte_document_id(tmp_path: Path) -> None:
    (tmp_path / "big.yaml").write_text("REPORT_DOCUMENT_ID: " + "x" * 1_000_000 + "\n")
    expect_refusal([*RUN, "--results-dir", "out", "--conf-file", "big.yaml"], tmp_path,
                   "REPORT_DOCUMENT_ID: 1,000,000 characters, more than the 200 this setting holds")


# --- 9. testbed files ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("case", "needle"),
    [
        ("sexagesimal", "hosts.dut.port: expected an integer (TCP port), got str '37:02'"),
        ("duplicate", "duplicate key 'dut_host'"),
        ("garbage key", "is not a private key vsperf can read"),
        ("no key no agent", "no key_file and no SSH agent"),
        ("known_hosts directory", "is a directory, not a regular file"),
        ("known_hosts binary", "not UTF-8 text"),
        ("known_hosts bad line", "line 1 is not a known_hosts entry"),
    ],
)
def test_testbed_files(tmp_path: Path, case: str, needle: str) -> None:
    kh, key = tmp_path / "known_hosts", ""
    kh.write_text("")
    if case == "garbage key":
        (tmp_path / "id").write_bytes(b"\x00\x01garbage")
        key = f", key_file: {tmp_path / 'id'}"
    elif case == "known_hosts directory":
        kh = tmp_path / "khdir"
        kh.mkdir()
    elif case == "known_hosts binary":
        kh.write_bytes(b"\xf9\x8f\x01\x02")
    elif case == "known_hosts bad line":
        kh.write_text("x ssh-ed25519 !!!notbase64\n")
    text = TESTBED.format(kh=kh, key=key)
    if case == "sexagesimal":
        text = text.replace("port: 1", "port: 37:02")
    elif case == "duplicate":
        text += "dut_host: dut\n"
    (tmp_path / "bed.yaml").write_text(text)
    expect_refusal([*RUN, "--results-dir", "out", "--testbed", "bed.yaml"], tmp_path, needle)

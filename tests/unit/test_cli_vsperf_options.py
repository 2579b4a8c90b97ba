"""VSPERF's command line as its users type it: sweeps, bare keys, -t ignoring case, --list-tests,
--load-env, --verbosity critical, -m/-f/-d, --xunit-dir and the trafficgen modes (dummy generator)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FAST = "TRAFFICGEN_DURATION=1;TRAFFICGEN_PKT_SIZES=(64,)"


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "vsperf", "--trafficgen", "dummy", "--report-format", "rst", *args]


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAFFIC", "VSWITCH", "VNF"))}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra or {})
    return env


def vsperf(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), capture_output=True, text=True, env=environment(env), timeout=120)


def results(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "results.json").read_text())
    return data


def settings_lines(proc: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert proc.returncode == 0, proc.stderr
    return {line.split(" = ")[0]: line for line in proc.stdout.splitlines() if " = " in line}


def test_list_tests_is_an_alias_of_list() -> None:
    proc = vsperf("--list-tests")
    assert proc.returncode == 0 and "phy2phy_tput_mod_vlan_cont" in proc.stdout


def test_tests_filter_ignores_case(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = vsperf("-t", "PHY2PHY_CONT,Back2Back,!PVP,!pvvp,!rfc9004", "--results-dir", str(out), "--test-params", FAST)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [t["name"] for t in results(out)["tests"]] == ["back2back", "phy2phy_cont"]


def test_test_params_list_sweeps_the_tests(tmp_path: Path) -> None:
    out = tmp_path / "run"
    sweep = "['TRAFFICGEN_PKT_SIZES=(64,);TRAFFICGEN_DURATION=1', 'TRAFFICGEN_PKT_SIZES=(128,);TRAFFICGEN_DURATION=1']"
    proc = vsperf("phy2phy_cont", "--test-params", sweep, "--matrix", "--results-dir", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    tests = results(out)["tests"]
    assert [t["name"] for t in tests] == ["phy2phy_cont", "phy2phy_cont"]
    assert [t["results"][0]["packet_size"] for t in tests] == [64, 128]
    assert tests[1]["parameters"]["TEST_PARAMS"] == "TRAFFICGEN_PKT_SIZES=(128,);TRAFFICGEN_DURATION=1"
    assert (out / "matrix.rst").is_file()
    # --test-params given several times: the same sweep
    out2 = tmp_path / "run2"
    proc = vsperf("phy2phy_cont", "--test-params", "TRAFFICGEN_PKT_SIZES=(256,)", "--test-params",
                  "TRAFFICGEN_PKT_SIZES=(512,)", "--results-dir", str(out2))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [t["results"][0]["packet_size"] for t in results(out2)["tests"]] == [256, 512]


def test_bare_key_means_true_and_environment_needs_load_env() -> None:
    env = {"TRAFFICGEN_RFC2544_TESTS": "3"}
    lines = settings_lines(vsperf("--list-settings", "--test-params", "TRAFFICGEN_RFC2544_VERIFY", env=env))
    assert "TRAFFICGEN_RFC2544_VERIFY = true" in lines["TRAFFICGEN_RFC2544_VERIFY"]
    assert "environment" not in lines["TRAFFICGEN_RFC2544_TESTS"]  # ignored without --load-env
    lines = settings_lines(vsperf("--list-settings", "--load-env", "--verbosity", "critical", env=env))
    assert lines["TRAFFICGEN_RFC2544_TESTS"].startswith("TRAFFICGEN_RFC2544_TESTS = 3 ")
    assert "critical" in lines["VERBOSITY"]


def test_test_spec_and_test_dir_add_test_files(tmp_path: Path) -> None:
    folder = tmp_path / "tests"
    folder.mkdir()
    (folder / "a.yaml").write_text("- {Name: dir_tput, Deployment: p2p}\n")
    spec = tmp_path / "b.yaml"
    spec.write_text("- {Name: spec_tput, Deployment: p2p}\n")
    proc = vsperf("--list", "-d", str(folder), "-f", str(spec))
    assert proc.returncode == 0, proc.stderr
    assert "dir_tput" in proc.stdout and "spec_tput" in proc.stdout


def test_mode_trafficgen_sends_traffic_once_and_writes_result_csv(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = vsperf("-m", "trafficgen", "phy2phy_tput", "--results-dir", str(out), "--xunit-dir", str(tmp_path / "x"),
                  "--test-params", "TRAFFICGEN_DURATION=1;TRAFFIC={'traffic_type': 'rfc2544_continuous', "
                  "'l2': {'framesize': 128}}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "test names are ignored" in proc.stderr
    [test] = results(out)["tests"]
    assert test["name"] == "trafficgen" and [r["packet_size"] for r in test["results"]] == [128]
    header = (out / "result.csv").read_text().splitlines()[0]
    assert "throughput_rx_fps" in header and "packet_size" in header
    assert (tmp_path / "x" / "xunit.xml").is_file()


def _held_run(tmp_path: Path, mode: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Start a held run with stdin closed, wait for its prompt, send SIGTERM, collect it."""
    out = tmp_path / "run"
    proc = subprocess.Popen(command("-m", mode, "phy2phy_cont", "--results-dir", str(out), "--test-params", FAST),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
                            env=environment())
    seen = b""
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 120
        # raw reads of the pipe: a buffered readline could hold the prompt while select waits
        while b"Send SIGTERM to continue" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stderr], [], [], 1.0)
            if ready:
                chunk = os.read(proc.stderr.fileno(), 65536)
                if not chunk:
                    break
                seen += chunk
        assert b"Send SIGTERM to continue" in seen, seen.decode()
        assert b"phy2phy_cont: p2p is deployed" in seen
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout.decode(), (seen + stderr).decode()), out


def test_mode_trafficgen_off_holds_until_sigterm_and_sends_nothing(tmp_path: Path) -> None:
    done, out = _held_run(tmp_path, "trafficgen-off")
    assert done.returncode == 0, done.stderr[-2000:]
    [test] = results(out)["tests"]
    assert test["status"] == "passed" and test["results"] == []


def test_mode_trafficgen_pause_holds_then_sends(tmp_path: Path) -> None:
    done, out = _held_run(tmp_path, "trafficgen-pause")
    assert done.returncode == 0, done.stderr[-2000:]
    [test] = results(out)["tests"]
    assert test["results"][0]["metrics"]["throughput_rx_fps"] > 0

"""TRex on the local lab through the `vsperf` command (root and a TRex built from source).

vsperf starts TRex's server in the generator ports' namespace on vdevs over the lab's veths and
drives it through TRex's client in a worker process; these tests check what a user would:
exact frame counts at rates the lab sustains (per stream and per port, from the run's log),
results on disk, latency with its distribution, failures as one line, nothing left behind.
They skip, saying what to install, where TRex is missing (trex_install.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import command, environment, leftovers, results, vsperf
from trex_install import trex_base_dir, trex_params, trex_servers, trex_skip_reason, trex_workers, trial_lines

pytestmark = pytest.mark.root


@pytest.fixture(autouse=True)
def _trex() -> None:
    reason = trex_skip_reason()
    if reason:
        pytest.skip(reason)


def run(tmp_path: Path, test: str, vswitch: str, *extra: str, **params: str) -> tuple[dict[str, Any], str]:
    """`vsperf TEST --trafficgen trex` with short trials (`params` added) to its end: results.json
    and the run's log."""
    out = tmp_path / "run"
    args = [test, "--trafficgen", "trex", "--vswitch", vswitch, "--results-dir", str(out), "--test-params",
            trex_params(**params), *extra]
    proc = vsperf(*args, timeout_s=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(out)
    assert leftovers(data["run_id"]) == [], "the run left something behind"
    assert trex_servers(data["run_id"]) == {}
    return data, (out / "overall.log").read_text()


def assert_exact(data: dict[str, Any], log: str, directions: int = 2) -> list[dict[str, Any]]:
    """Every rate trial sent exactly what it planned (rate x duration, split over the directions),
    every stream was received whole, and the ports counted the same frames."""
    test = data["tests"][0]
    assert test["status"] == "passed", test["error"]
    gen = next(c for c in test["components"] if c["role"] == "trafficgen")
    assert gen["name"] == "trex" and gen["version"].startswith("v3.")
    trials = [t for r in test["results"] for t in r["trials"]]
    assert trials
    for trial in trials:
        if trial["kind"] == "rate":
            per_direction = max(1, round(trial["requested_rate_fps"] / directions * trial["duration_s"]))
            assert trial["tx_frames"] == directions * per_direction, trial
        assert trial["rx_frames"] == trial["tx_frames"], trial  # no loss at these rates
    counted = trial_lines(log)
    assert len(counted) == len(trials)
    for streams, ports in counted:
        assert all(sent == received > 0 for sent, received in streams.values()), streams
        # port 0's frames are port 1's: nothing but the test's frames on the wire
        if directions == 2:
            assert ports[0][0] == ports[1][1] and ports[1][0] == ports[0][1], ports
        else:
            assert ports[0][0] == ports[1][1] and ports[1][0] == 0, ports
    return trials


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs"])
def test_phy2phy_tput_counts_every_frame(tmp_path: Path, vswitch: str) -> None:
    data, log = run(tmp_path, "phy2phy_tput", vswitch)
    trials = assert_exact(data, log)
    metrics = data["tests"][0]["results"][0]["metrics"]
    assert metrics["frame_loss_percent"] == 0.0
    # the search's first trial passes: 0.02 % of line rate, every frame received
    assert metrics["throughput_rx_fps"] == pytest.approx(trials[0]["requested_rate_fps"], rel=0.01)
    csv = next((tmp_path / "run").glob("result_0_*.csv")).read_text()
    assert "trex" in csv


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs"])
def test_back2back_bursts_counted_exactly(tmp_path: Path, vswitch: str) -> None:
    # bursts of 0.1 s at the rate TRex bursts at here (~100-300 kframes/s: its probe measures it)
    data, log = run(tmp_path, "back2back", vswitch, TRAFFICGEN_DURATION="0.1", TRAFFICGEN_B2B_GRANULARITY_FRAMES="2000")
    test = data["tests"][0]
    assert test["status"] == "passed", test["error"]
    trials = test["results"][0]["trials"]
    assert trials and all(t["kind"] == "burst" for t in trials)
    # a burst at line rate is more than TRex sends on a veth: flagged, never counted as the DUT's loss
    assert all("generator_under_delivery" in t["flags"] for t in trials)
    counted = trial_lines(log)
    assert len(counted) == len(trials)
    for trial, (streams, ports) in zip(trials, counted, strict=True):
        sent = [streams[1][0], streams[3][0]]
        assert sum(sent) == trial["tx_frames"] and max(sent) - min(sent) <= 1  # the burst, split in two
        assert streams[1][1] + streams[3][1] == trial["rx_frames"] <= trial["tx_frames"]
        # the ports counted exactly the streams' frames: nothing else on the wire
        assert ports[0] == (streams[1][0], streams[3][1]) and ports[1] == (streams[3][0], streams[1][1])
    metrics = test["results"][0]["metrics"]
    assert metrics["b2b_frames"] > 0
    assert any(t["tx_frames"] == metrics["b2b_frames"] and t["rx_frames"] == t["tx_frames"] for t in trials)


def test_pvp_through_a_netns_vnf(tmp_path: Path) -> None:
    data, log = run(tmp_path, "pvp_tput", "linux-bridge", "--vnf", "netns")
    assert_exact(data, log)


def test_unidirectional_and_multistream_vlan(tmp_path: Path) -> None:
    data, log = run(tmp_path, "phy2phy_tput_mod_vlan", "ovs",
                    TRAFFIC="{'bidir': 'False', 'multistream': 64, 'stream_type': 'L3'}")
    assert_exact(data, log, directions=1)
    assert data["tests"][0]["frame_modification"] == "vlan"


def test_latency_with_its_distribution(tmp_path: Path) -> None:
    data, log = run(tmp_path, "phy2phy_latency", "linux-bridge", TRAFFICGEN_THROUGHPUT_PERCENT="0.02",
                    TRAFFICGEN_LATENCY_DURATION_S="2", TRAFFICGEN_LATENCY_REPETITIONS="2",
                    TRAFFICGEN_TREX_LATENCY_PPS="500")
    assert_exact(data, log)
    metrics = data["tests"][0]["results"][0]["metrics"]
    assert 0 < metrics["min_latency_ns"] <= metrics["avg_latency_ns"] <= metrics["max_latency_ns"]
    assert metrics["min_latency_ns"] <= metrics["p50_latency_ns"] <= metrics["p99_latency_ns"] \
        <= metrics["max_latency_ns"]
    for trial in data["tests"][0]["results"][0]["trials"]:
        # each direction's latency stream: a tenth of 2,976 frames/s (below 500) for 2 s
        assert trial["latency"]["samples"] == 2 * round(2976.19 * 0.1 * 2)
        assert "latency_sampled" in trial["flags"]


def test_no_latency_streams_without_latency_pps(tmp_path: Path) -> None:
    data, log = run(tmp_path, "phy2phy_tput", "linux-bridge", TRAFFICGEN_TREX_LATENCY_PPS="0")
    assert_exact(data, log)
    assert all(set(streams) == {1, 3} for streams, _ in trial_lines(log))  # no latency stream (2, 4)
    assert data["tests"][0]["results"][0]["metrics"]["avg_latency_ns"] is None


def test_an_imix_is_one_stream_per_size_and_counted_per_size(tmp_path: Path) -> None:
    """TRex sends IMIX 64:7,570:4,1518:1 as a stream per size and direction (and their latency
    streams) at the mix's shares: every stream received whole, the trial's frames received per
    size in exactly the mix's proportions of what it sent."""
    data, log = run(tmp_path, "phy2phy_tput", "linux-bridge", TRAFFICGEN_PKT_SIZES="('IMIX',)")
    trials = assert_exact(data, log)
    result = data["tests"][0]["results"][0]
    assert result["packet_size"] == "64:7,570:4,1518:1"
    for trial, (streams, _ports) in zip(trials, trial_lines(log), strict=True):
        assert len(streams) == 12  # 3 sizes x 2 directions, each with its latency stream
        per_direction = trial["tx_frames"] // 2
        group, rest = divmod(per_direction, 12)
        assert rest == 0 or trial["rx_frames_by_size"], trial
        by_size = dict(trial["rx_frames_by_size"])
        assert sum(by_size.values()) == trial["rx_frames"]
        if rest == 0:
            assert by_size == {64: 2 * 7 * group, 570: 2 * 4 * group, 1518: 2 * group}
        assert by_size[64] > by_size[570] > by_size[1518] > 0
    assert any("a stream of its own" in note for t in trials for note in t.get("notes", []))


def _start_long_trial(out: Path) -> subprocess.Popen[str]:
    """`vsperf phy2phy_cont` with TRex and a 30 s trial, writing to `out` (the caller stops it)."""
    args = ["phy2phy_cont", "--trafficgen", "trex", "--vswitch", "linux-bridge", "--results-dir", str(out),
            "--test-params", trex_params(TRAFFICGEN_DURATION="30")]
    return subprocess.Popen(command(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=environment())


def _servers_of(proc: subprocess.Popen[str]) -> dict[int, str]:
    """The TRex servers once the run `proc` started one (within 2 min)."""
    deadline = time.monotonic() + 120
    while not trex_servers() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    started = trex_servers()
    assert started, f"no TRex server started (vsperf exit {proc.poll()})"
    return started


def test_server_killed_mid_trial_fails_the_test_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _start_long_trial(out)
    try:
        started = _servers_of(proc)
        time.sleep(6.0)  # into the 30 s trial
        for pid in started:
            os.kill(pid, signal.SIGKILL)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, err[-2000:]
    errors = [line for line in err.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and "TRex server on host local" in errors[0] and "exited" in errors[0], err[-2000:]
    assert "Traceback" not in err
    data = results(out)
    test = data["tests"][0]
    assert test["status"] == "failed" and "TRex server" in test["error"]
    run_id = data["run_id"]
    assert leftovers(run_id) == [] and trex_servers(run_id) == {}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_interrupted_or_killed_run_leaves_nothing(tmp_path: Path, sig: signal.Signals) -> None:
    workers_before = set(trex_workers())
    out = tmp_path / "run"
    proc = _start_long_trial(out)
    try:
        started = _servers_of(proc)
        time.sleep(5.0)
        proc.send_signal(sig)
        proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    run_id = next(iter(started.values()))
    if sig == signal.SIGKILL:
        assert trex_servers(run_id), "TRex did not outlive vsperf: nothing left for the next run to stop"
        # the next run on the local lab removes what the killed one left, TRex's server included
        nxt = vsperf("phy2phy_tput", "--trafficgen", "trex", "--vswitch", "linux-bridge", "--results-dir",
                     str(tmp_path / "next"), "--test-params", trex_params())
        assert nxt.returncode == 0, nxt.stderr[-2000:]
        # TRex's DPDK runtime directory was in the killed run's journal (Host.dpdk_file_prefix)
        assert f"run {run_id}: dir /var/run/dpdk/vsp{run_id}t removed" in nxt.stderr, nxt.stderr[-2000:]
    deadline = time.monotonic() + 10  # the worker ends with its input (vsperf gone) once TRex is gone
    while set(trex_workers()) - workers_before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert set(trex_workers()) - workers_before == set()
    assert trex_servers(run_id) == {} and leftovers(run_id) == []


def test_a_client_the_server_refuses_is_one_line(tmp_path: Path) -> None:
    # TRex's own client, but announcing another API version: the server refuses it. A copy laid out
    # as in TRex's tree (the client finds its libraries in external_libs, four directories up).
    base = Path(str(trex_base_dir()))
    client = tmp_path / "tree" / "automation" / "trex_control_plane" / "interactive"
    client.parent.mkdir(parents=True)
    subprocess.run(["cp", "-r", str(base / "automation" / "trex_control_plane" / "interactive"), str(client)],
                   check=True)
    (tmp_path / "tree" / "external_libs").symlink_to(base / "external_libs")
    stl_client = client / "trex" / "stl" / "trex_stl_client.py"
    text = stl_client.read_text()
    assert "'major': 5" in text
    stl_client.write_text(text.replace("'major': 5", "'major': 4"))
    out = tmp_path / "run"
    proc = vsperf("phy2phy_tput", "--trafficgen", "trex", "--vswitch", "linux-bridge", "--results-dir", str(out),
                  "--test-params", trex_params(TRAFFICGEN_TREX_CLIENT_PATH=str(client)))
    assert proc.returncode == 1, proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and "refused vsperf's TRex client" in errors[0], proc.stderr[-2000:]
    data = results(out)
    assert leftovers(data["run_id"]) == [] and trex_servers(data["run_id"]) == {}
    assert json.loads((out / "results.json").read_text())["tests"][0]["status"] == "failed"

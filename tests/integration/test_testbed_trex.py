"""`vsperf ... --trafficgen trex --testbed`: TRex's server on sshd host B (the generator host) over
SSH, on B's cable ends (net_af_packet vdevs), its RPC ports on B reached through `direct-tcpip`
channels of vsperf's SSH connection; TRex's client in a worker process on this machine; the
Linux bridge on sshd host A; real frames over the test's veth "cables".

TRex is not packaged: these tests skip, saying what to install, where it is missing
(trex_install.py). The hosts share this machine's filesystem and process table: "nothing left"
is checked there (no server of the run, no DPDK runtime or run directory) and in the hosts'
namespaces; that the server ran on host B over SSH is checked in the command log.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from testbed_bed import Bed, assert_nothing_left, finish, open_bed, running
from trex_install import trex_base_dir, trex_params, trex_servers, trex_skip_reason, trial_lines

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    reason = trex_skip_reason()
    if reason:
        pytest.skip(reason)
    with open_bed(tmp_path_factory.mktemp("testbed_trex"), "v9x", 124) as opened:
        yield opened


def trex_args(bed: Bed, results: Path, **params: str) -> list[str]:
    """phy2phy_tput with TRex on host B, short trials at low rates (trex_install.SHORT)."""
    return ["phy2phy_tput", "--vswitch", "linux-bridge", "--trafficgen", "trex", "--testbed",
            str(bed.testbed_file()), "--results-dir", str(results), "--test-params", trex_params(**params)]


def assert_no_trex_left(run_id: str) -> None:
    assert trex_servers(run_id) == {}
    assert list(Path("/var/run/dpdk").glob(f"vsp{run_id}*")) == []
    assert not Path(f"/tmp/vsperf-{run_id}-trex").exists()


def test_trex_on_the_generator_host(bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "run"
    proc = bed.vsperf(*trex_args(bed, results), cwd=tmp_path)
    _out, err = finish(proc, 600)
    assert proc.returncode == 0, err[-3000:]
    data = json.loads((results / "results.json").read_text())
    test = data["tests"][0]
    assert test["status"] == "passed" and data["simulated"] is False, test["error"]
    gen = next(c for c in test["components"] if c["role"] == "trafficgen")
    assert gen["name"] == "trex" and gen["version"].startswith("v3.") and gen["details"]["host"] == bed.gen
    trials = test["results"][0]["trials"]
    for trial in trials:  # exact counts: sent as planned, every frame received, through host A's bridge
        assert trial["tx_frames"] == 2 * max(1, round(trial["requested_rate_fps"] / 2 * trial["duration_s"]))
        assert trial["rx_frames"] == trial["tx_frames"]
    for streams, _ports in trial_lines((results / "overall.log").read_text()):
        assert all(sent == received > 0 for sent, received in streams.values())
    run_id = str(data["run_id"])
    log = (results / "commands.log").read_text()
    started = [line for line in log.splitlines() if "_t-rex-64" in line and "[background]" in line]
    assert len(started) == 1 and f"[{bed.gen}] [background] ssh " in started[0]  # on host B, none here
    assert f"--cfg /tmp/vsperf-{run_id}-trex/trex_cfg.yaml" in started[0]
    assert re.search(rf"\[{bed.gen}\] scp .*:/tmp/vsperf-{run_id}-trex/trex_cfg.yaml", log)
    # the RPC and event ports through the SSH connection, never over B's network
    assert re.search(rf"\[{bed.gen}\] \[forward\] ssh .* -N -L 4501:127.0.0.1:4501 root@", log)
    assert re.search(rf"\[{bed.gen}\] \[forward\] ssh .* -N -L 4500:127.0.0.1:4500 root@", log)
    assert_nothing_left(bed, run_id, before, links_before)
    assert_no_trex_left(run_id)


def _listener(bed: Bed, port: int) -> subprocess.Popen[bytes]:
    """Another program listening on TCP `port` of host B (its namespace)."""
    code = (f"import socket, time; s = socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(); "
            f"print('up', flush=True); time.sleep(600)")
    proc = subprocess.Popen(["ip", "netns", "exec", bed.ns["b"], sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"up"
    return proc


def test_rpc_port_in_use_on_the_generator_host_is_one_line(bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    other = _listener(bed, 4501)
    try:
        results = tmp_path / "run"
        proc = bed.vsperf(*trex_args(bed, results), cwd=tmp_path)
        _out, err = finish(proc, 600)
    finally:
        other.kill()
        other.wait()
    assert proc.returncode == 1, err[-2000:]
    errors = [line for line in err.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and "Traceback" not in err, err[-2000:]
    assert (f"host {bed.gen}: TCP port 4501 (TRAFFICGEN_TREX_SYNC_PORT) is in use by another program" in errors[0]
            and "set TRAFFICGEN_TREX_SYNC_PORT to a free port" in errors[0]), errors[0]
    run_id = json.loads((results / "results.json").read_text())["run_id"]
    assert_nothing_left(bed, run_id, before, links_before)
    assert_no_trex_left(run_id)


def test_vsperf_killed_mid_trial_next_run_stops_trex_on_the_host(bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    args = trex_args(bed, tmp_path / "killed", TRAFFICGEN_DURATION="30")
    with running(bed.vsperf(*args, cwd=tmp_path)) as proc:
        deadline = time.monotonic() + 180
        while not trex_servers() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        started = trex_servers()
        assert started, f"no TRex server started (vsperf exit {proc.poll()})"
        time.sleep(6.0)  # into the first trial
        proc.kill()  # SIGKILL: no teardown at all
    run_id = next(iter(started.values()))
    assert trex_servers(run_id), "TRex did not outlive vsperf: nothing left for the next run to stop"
    # The next run that opens the testbed's hosts (a deploying one: --trafficgen dummy deploys nothing
    # and opens none) releases the killed run's journal there, TRex's server first.
    nxt = bed.vsperf(*bed.args(tmp_path / "next", "(64,)"), cwd=tmp_path)
    _out, err = finish(nxt, 600)
    assert nxt.returncode == 0, err[-2000:]
    assert re.search(rf"removed leftover of a killed run: run {run_id}: host \S+: process TRex server \(pid \d+\) "
                     rf"stopped", err), \
        err[:3000]
    assert_no_trex_left(run_id)
    assert_nothing_left(bed, run_id, before, links_before)


def test_a_server_already_running_on_the_generator_host(bed: Bed, tmp_path: Path) -> None:
    """TRAFFICGEN_TREX_START_SERVER false: vsperf uses the user's server there, and leaves it running."""
    base = str(trex_base_dir())
    cfg = tmp_path / "trex_cfg.yaml"
    interfaces = ", ".join(f"'--vdev=net_af_packet{i},iface={b},blocksz=4096,framesz=2048,framecnt=8192'"
                           for i, (_, b) in enumerate(bed.cables))
    cfg.write_text(f"- version: 2\n  interfaces: [{interfaces}]\n  low_end: true\n  prefix: {bed.tag}trex\n")
    server = subprocess.Popen(["ip", "netns", "exec", bed.ns["b"], "sh", "-c", 'cd "$1" && exec ./_t-rex-64 -i '
                               '--iom 0 --no-scapy-server --cfg "$2"', "sh", base, str(cfg)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(3.0)
        assert server.poll() is None, "the user's TRex did not start"
        results = tmp_path / "run"
        proc = bed.vsperf(*trex_args(bed, results, TRAFFICGEN_TREX_START_SERVER="false"), cwd=tmp_path)
        _out, err = finish(proc, 600)
        assert proc.returncode == 0, err[-3000:]
        test = json.loads((results / "results.json").read_text())["tests"][0]
        assert test["status"] == "passed", test["error"]
        assert all(t["rx_frames"] == t["tx_frames"] > 0 for t in test["results"][0]["trials"])
        log = (results / "commands.log").read_text()
        assert "_t-rex-64" not in log  # nothing started
        assert re.search(rf"\[{bed.gen}\] \[forward\] ssh .* -N -L 4501:127.0.0.1:4501 root@", log)
        assert server.poll() is None, "vsperf stopped the user's server"
    finally:
        server.send_signal(2)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        subprocess.run(["rm", "-rf", f"/var/run/dpdk/{bed.tag}trex"], check=False)


def test_trafficgen_mode_sends_through_the_users_dut(bed: Bed, tmp_path: Path) -> None:
    """--mode trafficgen: TRex on host B's ports, through a bridge the user made on host A."""
    bridge = f"{bed.tag}ub"
    ip = ["ip", "-n", bed.ns["a"]]
    subprocess.run([*ip, "link", "add", bridge, "type", "bridge"], check=True)
    try:
        for a_end, _ in bed.cables:
            subprocess.run([*ip, "link", "set", a_end, "master", bridge, "up"], check=True)
        subprocess.run([*ip, "link", "set", bridge, "up"], check=True)
        before, links_before = bed.states(), bed.links()
        results = tmp_path / "run"
        args = trex_args(bed, results)
        proc = bed.vsperf(*args[:1], "--mode", "trafficgen", *args[3:], cwd=tmp_path)
        _out, err = finish(proc, 600)
        assert proc.returncode == 0, err[-3000:]
        test = json.loads((results / "results.json").read_text())["tests"][0]
        assert test["status"] == "passed", test["error"]
        assert test["results"][0]["metrics"]["throughput_rx_fps"] > 0  # frames crossed the user's bridge
        assert "vswitch" not in {c["role"] for c in test["components"]}
        run_id = json.loads((results / "results.json").read_text())["run_id"]
        assert_nothing_left(bed, run_id, before, links_before)
        assert_no_trex_left(run_id)
    finally:
        subprocess.run([*ip, "link", "del", bridge], check=False)
        for a_end, _ in bed.cables:
            subprocess.run([*ip, "link", "set", a_end, "down"], check=False)

"""`vsperf phy2phy_tput|pvp_tput|back2back --trafficgen trafgen --testbed`: netsniff-ng trafgen on
sshd host B (the generator host), the Linux bridge on sshd host A, real frames over the test's
veth "cables"; the receive counters run on host B too (the trafgen receive agent).

The hosts share this machine's filesystem and process table: "nothing left" is checked in the
hosts' namespaces (links, qdiscs, port state), on the shared filesystem and in the process
table; that trafgen ran on host B over SSH is checked in the command log.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from sshd_hosts import run_sshd
from testbed_bed import Bed, assert_nothing_left, finish, open_bed, running

from vsperf.host.ports import PortState

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    if shutil.which("trafgen") is None:
        pytest.skip("trafgen missing: apt-get install netsniff-ng")
    with open_bed(tmp_path_factory.mktemp("testbed_trafgen"), "v9t", 104) as opened:
        yield opened


def trafgens_of(bed: Bed, run_id: str | None = None) -> dict[int, str]:
    """PID -> run id of the trafgen processes (and the receive agents) sending from or
    counting on this bed's host B ports (the shared process table)."""
    found: dict[int, str] = {}
    for proc in psutil.process_iter(["cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        match = re.search(r"/tmp/vsperf-(\w+)-(trafgen/port\d\.cfg|files/agent\.py)", cmd)
        if match and (run_id is None or match.group(1) == run_id) and (
                match.group(2) == "files/agent.py" or any(f"--dev {b}" in cmd for _, b in bed.cables)):
            found[proc.pid] = match.group(1)
    return found


def qdiscs_of_b(bed: Bed) -> dict[str, list[str]]:
    """The qdisc kinds on host B's cable ends (vsperf adds clsact and a tbf pacer while it runs)."""
    kinds: dict[str, list[str]] = {}
    for _, b_if in bed.cables:
        out = subprocess.run(["tc", "-n", bed.ns["b"], "-j", "qdisc", "show", "dev", b_if], capture_output=True,
                             text=True, check=True).stdout
        kinds[b_if] = sorted(q["kind"] for q in json.loads(out or "[]"))
    return kinds


@pytest.mark.parametrize("name", ["phy2phy_tput", "pvp_tput", "back2back"])
def test_trafgen_on_the_generator_host(bed: Bed, tmp_path: Path, name: str) -> None:
    before, links_before, qdiscs_before = bed.states(), bed.links(), qdiscs_of_b(bed)
    results = tmp_path / "run"
    proc = bed.vsperf(*bed.args(results, "(64,)", test=name, trafficgen="trafgen"), cwd=tmp_path)
    _out, err = finish(proc, 600)
    assert proc.returncode == 0, err
    data = json.loads((results / "results.json").read_text())
    test = data["tests"][0]
    assert test["status"] == "passed" and data["simulated"] is False
    trials, metrics = test["results"][0]["trials"], test["results"][0]["metrics"]
    # real frames: sent by trafgen on host B, through host A's switch (and VNF), counted on host B
    assert sum(t["rx_frames"] for t in trials) > 1000 and all(t["tx_frames"] > 0 for t in trials)
    assert (metrics["b2b_frames"] if name == "back2back" else metrics["throughput_rx_fps"]) > 100
    assert any(c["role"] == "trafficgen" and c["name"] == "trafgen" and re.match(r"\d", c["version"])
               for c in test["components"])
    run_id = str(data["run_id"])
    log = (results / "commands.log").read_text()
    gen_address = re.escape(bed.ctl["b"][1])
    assert re.search(rf"\[{bed.gen}\] \[background\] ssh .* trafgen --dev {bed.cables[0][1]} "
                     rf"--conf /tmp/vsperf-{run_id}-trafgen/port0.cfg", log)
    assert re.search(rf"\[{bed.gen}\] scp .* root@{gen_address}:/tmp/vsperf-{run_id}-trafgen/port0.cfg", log)
    assert re.search(rf"\[{bed.gen}\] \[background\] ssh .* python3 /tmp/vsperf-{run_id}-files/agent.py", log)
    if name != "back2back":  # rate trials are paced on host B (bursts go out as fast as trafgen sends)
        assert re.search(rf"\[{bed.gen}\] ssh .* tc qdisc replace dev {bed.cables[0][1]} root tbf", log)
    started = [line for line in log.splitlines() if " trafgen --dev " in line]
    assert started and all(f"[{bed.gen}] [background] ssh " in line for line in started)  # none on this machine
    assert_nothing_left(bed, run_id, before, links_before)
    assert trafgens_of(bed, run_id) == {}
    assert not Path(f"/tmp/vsperf-{run_id}-trafgen").exists()
    assert qdiscs_of_b(bed) == qdiscs_before


def agent_of(bed: Bed) -> psutil.Process | None:
    """The trafgen receive agent running on host B (None: none)."""
    return next((psutil.Process(p) for p in trafgens_of(bed) if "agent.py" in " ".join(psutil.Process(p).cmdline())),
                None)


# The agent either sees its channel end and cleans host B's ports itself, or outlives it (here: it
# is stopped with SIGSTOP before vsperf is killed, as an agent whose channel the host kept open
# would be) and leaves its clsact and the pacer: the next run deletes them from the journal.
@pytest.mark.parametrize("agent_outlives", [False, True], ids=["agent_ends", "agent_outlives_its_channel"])
def test_vsperf_killed_mid_trial_next_run_stops_remote_trafgen(bed: Bed, tmp_path: Path,
                                                               agent_outlives: bool) -> None:
    before, links_before, qdiscs_before = bed.states(), bed.links(), qdiscs_of_b(bed)
    assert not any(k in ("clsact", "tbf") for kinds in qdiscs_before.values() for k in kinds)
    agent: psutil.Process | None = None
    results = tmp_path / "killed"
    # 30 s trials: trafgen still sends when vsperf is killed, and long after
    args = [a.replace("TRAFFICGEN_DURATION=1;", "TRAFFICGEN_DURATION=30;") for a in
            bed.args(results, "(64,)", trafficgen="trafgen")]
    assert any("TRAFFICGEN_DURATION=30;" in a for a in args)
    with running(bed.vsperf(*args, cwd=tmp_path)) as proc:
        deadline = time.monotonic() + 120
        senders: dict[int, str] = {}
        while time.monotonic() < deadline and proc.poll() is None:
            senders = {p: r for p, r in trafgens_of(bed).items()
                       if "agent.py" not in " ".join(psutil.Process(p).cmdline())}
            if senders:
                break
            time.sleep(0.1)
        assert senders, f"no trafgen started (vsperf exit {proc.poll()})"
        time.sleep(1.0)
        if agent_outlives:
            agent = agent_of(bed)
            assert agent is not None
            agent.suspend()  # SIGSTOP: it will not read the end of its input
        proc.kill()  # SIGKILL: no teardown at all
    try:
        _killed_then_next_run(bed, tmp_path, senders, agent, before, links_before, qdiscs_before)
    finally:
        if agent is not None and agent.is_running():  # the test failed before the next run: by PID
            agent.resume()
            agent.terminate()


def _killed_then_next_run(bed: Bed, tmp_path: Path, senders: dict[int, str], agent: psutil.Process | None,
                          before: dict[str, PortState], links_before: dict[str, set[str]],
                          qdiscs_before: dict[str, list[str]]) -> None:
    run_id = next(iter(senders.values()))
    if agent is not None:
        # The agent outlived vsperf: its clsact and the pacer stay on host B's ports until the next run.
        time.sleep(1.0)
        assert agent.is_running() and agent.status() == psutil.STATUS_STOPPED
        left_kinds = [k for kinds in qdiscs_of_b(bed).values() for k in kinds]
        assert "clsact" in left_kinds and "tbf" in left_kinds, left_kinds
        nxt = _next_run(bed, tmp_path)
        assert "clsact qdisc deleted" in nxt and "root qdisc tbf deleted" in nxt, nxt
        assert not agent.is_running() or agent.status() == psutil.STATUS_ZOMBIE  # killed by PID
        assert trafgens_of(bed, run_id) == {}
        assert_nothing_left(bed, run_id, before, links_before)
        assert qdiscs_of_b(bed) == qdiscs_before
        return
    # The receive agent saw the end of its input (its SSH channel closed with vsperf) and took its
    # counters and pacers off host B's ports; trafgen (no input to lose) still sends.
    deadline = time.monotonic() + 10
    while any("agent.py" in " ".join(psutil.Process(p).cmdline()) for p in trafgens_of(bed, run_id)) \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    left = trafgens_of(bed, run_id)
    assert left and not any("agent.py" in " ".join(psutil.Process(p).cmdline()) for p in left), left
    assert qdiscs_of_b(bed) == qdiscs_before
    assert Path(f"/tmp/vsperf-{run_id}-trafgen").exists()
    nxt = _next_run(bed, tmp_path)
    assert "removed leftover of a killed run" in nxt and "trafgen port0" in nxt, nxt
    assert trafgens_of(bed, run_id) == {}
    assert not Path(f"/tmp/vsperf-{run_id}-trafgen").exists()
    assert_nothing_left(bed, run_id, before, links_before)
    assert qdiscs_of_b(bed) == qdiscs_before


def _next_run(bed: Bed, tmp_path: Path) -> str:
    """A run with the testbed after the killed one (exit 0); its stderr (what it restored)."""
    nxt = bed.next_run(tmp_path)
    assert nxt.returncode == 0, nxt.stderr
    print(nxt.stderr)  # shown with -s: what a user sees
    return nxt.stderr


def test_generator_host_without_trafgen_exit_2_one_line_nothing_created(bed: Bed, tmp_path: Path) -> None:
    # The hosts share this machine's filesystem: host B "lacks" trafgen (/usr/sbin/trafgen) when
    # its sshd gives its sessions a PATH without /usr/sbin.
    server = bed.servers["b"]
    config = server.directory / "sshd_config"
    original = config.read_text()
    before, links_before = bed.states(), bed.links()
    server.kill()
    config.write_text(original.replace("SetEnv SHLVL=1", "SetEnv SHLVL=1 PATH=/usr/bin:/bin"))
    try:
        run_sshd(server)
        proc = bed.vsperf(*bed.args(tmp_path / "run", "(64,)", trafficgen="trafgen"), cwd=tmp_path)
        _out, err = finish(proc, 300)
    finally:
        server.kill()
        config.write_text(original)
        run_sshd(server)
    assert proc.returncode == 2, err
    lines = [line for line in err.splitlines() if "error" in line.lower()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert f"host {bed.gen}: trafgen is missing: apt-get install netsniff-ng there" in lines[0], err
    assert bed.states() == before and bed.links() == links_before
    assert not (tmp_path / "run" / "results.json").exists()


def test_generator_port_with_a_configured_root_qdisc_exit_2_one_line_nothing_created(bed: Bed,
                                                                                      tmp_path: Path) -> None:
    # Someone's qdisc on host B's port: vsperf's pacer would replace it and could not rebuild it.
    b_if = bed.cables[0][1]
    before, links_before = bed.states(), bed.links()
    tc = ["tc", "-n", bed.ns["b"], "qdisc"]
    subprocess.run([*tc, "add", "dev", b_if, "root", "handle", "1:", "htb"], check=True)
    try:
        proc = bed.vsperf(*bed.args(tmp_path / "run", "(64,)", trafficgen="trafgen"), cwd=tmp_path)
        _out, err = finish(proc, 300)
        kinds = qdiscs_of_b(bed)[b_if]
    finally:
        subprocess.run([*tc, "del", "dev", b_if, "root"], check=True)
    assert proc.returncode == 2, err
    lines = [line for line in err.splitlines() if "error" in line.lower()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert f"host {bed.gen}: interface {b_if} has root qdisc htb" in lines[0], err
    assert f"(tc qdisc del dev {b_if} root)" in lines[0], err
    assert kinds == ["htb"]  # left as it was
    assert bed.states() == before and bed.links() == links_before
    assert not (tmp_path / "run" / "results.json").exists()

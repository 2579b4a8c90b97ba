"""`vsperf phy2phy_tput --trafficgen pktgen --testbed` with the generator host `local` (this
machine, no SSH): the bed's host B ends of the cables are moved into this machine's root
namespace for the module, host A (sshd) is the DUT with its Linux bridge. pktgen is started
through the testbed session, so it is in the run's journal: after a SIGKILL of vsperf the next
run stops it (there is no lab state on a testbed). pktgen is not packaged: skipped, saying so,
where there is none (docs/trafficgens.rst)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_pktgen_lab import pktgen_binary
from test_testbed_pktgen import PARAMS, pktgens_of, skip_without_pktgen
from testbed_bed import Bed, open_bed, running

from vsperf.host.journal import DEFAULT_STATE_ROOT, JOURNAL_FILE

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    skip_without_pktgen()
    with open_bed(tmp_path_factory.mktemp("testbed_local_pktgen"), "v9l", 122) as opened:
        # host B's ends become this machine's own interfaces (the `local` generator host's NICs)
        for _, b_if in opened.cables:
            subprocess.run(["ip", "-n", opened.ns["b"], "link", "set", b_if, "netns", "1"], check=True)
        try:
            for _, b_if in opened.cables:
                subprocess.run(["ip", "link", "set", b_if, "up"], check=True)
            yield opened
        finally:
            for _, b_if in opened.cables:
                subprocess.run(["ip", "link", "del", b_if], check=False, capture_output=True)


def local_testbed(bed: Bed) -> Path:
    """lab.yaml: host A the DUT over SSH, the generator host `local` (this machine)."""
    a = bed.servers["a"]
    path = bed.dir / "local-gen.yaml"
    path.write_text(textwrap.dedent(f"""
        hosts:
          {bed.dut}: {{address: {a.address}, port: {a.port}, key_file: {a.client_key},
                  known_hosts_file: {a.known_hosts}}}
          local: {{}}
        dut_host: {bed.dut}
        trafficgen_host: local
        ports:
          - dut: {{interface: {bed.cables[0][0]}}}
            trafficgen: {{interface: {bed.cables[0][1]}}}
          - dut: {{interface: {bed.cables[1][0]}}}
            trafficgen: {{interface: {bed.cables[1][1]}}}
        """))
    return path


def args(bed: Bed, results: Path, duration_s: int = 1) -> list[str]:
    return [sys.executable, "-m", "vsperf", "phy2phy_tput", "--vswitch", "linux-bridge", "--trafficgen", "pktgen",
            "--testbed", str(local_testbed(bed)), "--test-params",
            f"TRAFFICGEN_DURATION={duration_s};TRAFFICGEN_PKT_SIZES=(64,);TRAFFICGEN_PKTGEN_BINARY={pktgen_binary()}"
            f"{PARAMS}", "--results-dir", str(results)]


def local_states(bed: Bed) -> dict[str, tuple[bool, int]]:
    """(up, MTU) of the local host's cable ends."""
    out = subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True, check=True).stdout
    ends = {b_if for _, b_if in bed.cables}
    return {link["ifname"]: ("UP" in link["flags"], link["mtu"]) for link in json.loads(out)
            if link["ifname"] in ends}


def test_pktgen_on_a_local_generator_host(bed: Bed, tmp_path: Path) -> None:
    before = local_states(bed)
    results = tmp_path / "run"
    proc = subprocess.run(args(bed, results), capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    data = json.loads((results / "results.json").read_text())
    test = data["tests"][0]
    assert test["status"] == "passed", test["error"]
    trials = test["results"][0]["trials"]
    assert trials and all(0 < t["rx_frames"] <= t["tx_frames"] for t in trials)  # through host A's bridge
    run_id = str(data["run_id"])
    started = [line for line in (results / "commands.log").read_text().splitlines()
               if f"--file-prefix=vsp{run_id}pg" in line]
    assert len(started) == 1 and "ssh" not in started[0]  # on this machine
    assert "python3 " in started[0] and "/vsperf/trafficgen/pktgen/ptyexec.py" in started[0]  # this machine's copy
    assert pktgens_of(run_id) == {} and list(Path("/tmp").glob(f"vsperf-{run_id}-*")) == []
    assert not (DEFAULT_STATE_ROOT / run_id / JOURNAL_FILE).exists()
    assert local_states(bed) == before


def test_vsperf_killed_mid_trial_next_run_stops_local_pktgen(bed: Bed, tmp_path: Path) -> None:
    before = local_states(bed)
    results = tmp_path / "killed"
    with running(subprocess.Popen(args(bed, results, duration_s=30), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, cwd=tmp_path)) as proc:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None and not pktgens_of():
            time.sleep(0.2)
        started = pktgens_of()
        assert started, f"no pktgen started (vsperf exit {proc.poll()})"
        time.sleep(3.0)  # into the first trial
        proc.kill()  # SIGKILL: no teardown at all
    run_id = next(iter(started.values()))
    try:
        assert pktgens_of(run_id), "pktgen did not outlive vsperf: nothing left for the next run to stop"
        assert (DEFAULT_STATE_ROOT / run_id / JOURNAL_FILE).exists()  # recorded in the run's journal
        nxt = bed.next_run(tmp_path, local_testbed(bed))
        assert nxt.returncode == 0, nxt.stderr
        assert "removed leftover of a killed run" in nxt.stderr and "pktgen 0" in nxt.stderr, nxt.stderr
        assert pktgens_of(run_id) == {}
        assert list(Path("/tmp").glob(f"vsperf-{run_id}-*")) == []
        assert local_states(bed) == before
    finally:  # a failed test leaves no pktgen of its own behind
        for pid in pktgens_of(run_id):
            subprocess.run(["kill", "-9", str(pid)], check=False)

"""Shared testbeds for real (vsperf.pool): sshd hosts in network namespaces, runs started together.

- two runs on one testbed: one waits for the other (--testbed-wait), a third is refused in one
  line naming the holder, nothing touched; vsgen's frame counts exact in both (no frame of the
  other run counted);
- a pool of two testbeds sharing their generator host, four runs started together: all pass,
  each testbed runs one at a time (from the recorded times), each run names its testbed;
- the holder SIGKILLed mid-trial on another controller (its journal gone with it): the next run
  takes over once the lease expired by the host's clock and cleans the hosts from the journal
  mirrored there; the DUT's sshd killed under a holder: it stops in one line, its lock expires;
- an entry whose object is gone for good: dropped with one warning, never retried;
- bad input: pool files, every testbed busy, a lock directory root cannot read, a controller
  clock days off the hosts'.

What this cannot prove: the hosts share this machine's kernel and /run (their locks are told
apart by their network namespaces) and one controller runs every vsperf (a second controller is
a PID namespace of its own, or a faked clock).
"""

from __future__ import annotations

import itertools
import json
import re
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from pool_beds import (
    LIBFAKETIME,
    PoolBed,
    clock_env,
    holders,
    lock_file,
    lock_state,
    pool_bed,
    remove_lock_files,
    run,
    vsperf_argv,
)
from sshd_hosts import SSHD, SshdServer, run_sshd
from testbed_bed import Bed, assert_nothing_left, open_bed, running, wait_for_results

from vsperf.host.journal import DEFAULT_STATE_ROOT

pytestmark = pytest.mark.root

LEASE = "TESTBED_LEASE_S=6"
HOLD = "TRAFFICGEN_DUMMY_DUT={'wall_clock': True}"  # the simulated DUT's trials last their duration


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    with open_bed(tmp_path_factory.mktemp("pool_sharing"), "v9s", 130) as opened:
        try:
            yield opened
        finally:
            remove_lock_files(list(opened.ns.values()))


def dummy(testbed: Path | str, results: Path, *extra: str, duration: int = 1, params: str = "",
          hold: str = HOLD) -> list[str]:
    """`phy2phy_cont` with the simulated DUT held for `duration` s on `testbed`."""
    return ["phy2phy_cont", "--trafficgen", "dummy", "--testbed", str(testbed), "--results-dir", str(results),
            "--report-format", "md", "--test-params",
            f"TRAFFICGEN_PKT_SIZES=(64,);TRAFFICGEN_DURATION={duration};REPORT_PLOTS=False;LOG_DIR={results.parent};"
            f"{hold}{params}", *extra]


def results(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((path / "results.json").read_text())
    return data


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "error" in line.lower()]


def moment(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


# --- one testbed, two runs ----------------------------------------------------------------------


def test_two_runs_together_one_waits_a_third_is_refused_and_frame_counts_are_exact(bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    testbed = bed.testbed_file()
    runs = [tmp_path / f"run{i}" for i in (1, 2)]
    args = [[*bed.args(r, "(64,)", test="phy2phy_cont", params=";REPORT_PLOTS=False"), "--testbed-wait", "300",
             "--report-format", "md"] for r in runs]
    procs = [bed.vsperf(*a, cwd=tmp_path) for a in args]
    with running(procs[0]) as first, running(procs[1]) as second:
        deadline = time.monotonic() + 120
        while not any((r / "results.json").exists() for r in runs) and time.monotonic() < deadline:
            time.sleep(0.1)
        holding = next(r for r in runs if (r / "results.json").exists())
        holder = json.loads((holding / "results.json").read_text())["run_id"]
        third = run(vsperf_argv(*bed.args(tmp_path / "run3", "(64,)", test="phy2phy_cont")), tmp_path)
        outs = [p.communicate(timeout=300) for p in (first, second)]
    assert third.returncode == 2 and len(errors(third.stderr)) == 1, third.stderr
    assert re.search(rf"^vsperf: error: testbed {re.escape(str(testbed))} is busy: host {bed.dut} is held by run "
                     rf"{holder} \(\w+@\S+, pid \d+, started .* by its controller's clock\), its lease renewed \d+ s "
                     rf"ago; wait for it with --testbed-wait SECONDS", third.stderr, re.M), third.stderr
    assert not (tmp_path / "run3").exists()  # nothing touched
    assert [p.returncode for p in procs] == [0, 0], outs
    data = [results(r) for r in runs]
    for run_data in data:
        trials = run_data["tests"][0]["results"][0]["trials"]
        # every frame sent was received, and nothing else: no frame of the other run counted
        assert trials and all(t["tx_frames"] == t["rx_frames"] > 10_000 for t in trials)
        assert run_data["environment"]["testbed"]["file"] == str(testbed)
    first_run, second_run = sorted(data, key=lambda d: moment(d["environment"]["testbed"]["taken_at"]))
    assert moment(second_run["environment"]["testbed"]["taken_at"]) >= moment(first_run["finished_at"])
    assert second_run["environment"]["testbed"]["waited_s"] > 1
    for run_data in data:
        assert_nothing_left(bed, run_data["run_id"], before, links_before)
    assert holders(bed.ns["a"]) == [] and holders(bed.ns["b"]) == [] and not lock_file(bed.ns["a"]).exists()


# --- a pool ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PoolBed]:
    with pool_bed(tmp_path_factory.mktemp("pool_bed"), "v9w", 132) as opened:
        yield opened


def test_a_pool_of_two_testbeds_and_four_runs_started_together(pool: PoolBed, tmp_path: Path) -> None:
    pool_file = pool.pool()
    outs = [tmp_path / f"run{i}" for i in range(4)]
    procs = [subprocess.Popen(vsperf_argv(*dummy(pool_file, out, "--testbed-wait", "300", duration=2)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path) for out in outs]
    ended = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, ended
    used: dict[str, list[dict[str, Any]]] = {}
    for (_out, err), out in zip(ended, outs, strict=True):
        data = results(out)
        taken = data["environment"]["testbed"]["file"]
        assert re.search(rf"INFO testbed {re.escape(taken)} taken", err)  # each run says which one it used
        assert data["settings"]["TESTBED"] == taken and data["environment"]["testbed"]["pool"] == [
            str(pool.dir / "lab1.yaml"), str(pool.dir / "lab2.yaml")]
        used.setdefault(taken, []).append(data)
    assert sorted(Path(t).name for t in used) == ["lab1.yaml", "lab2.yaml"]
    for runs in used.values():  # one at a time on each testbed: taken only after the previous one finished
        runs.sort(key=lambda d: moment(d["environment"]["testbed"]["taken_at"]))
        for earlier, later in itertools.pairwise(runs):
            assert moment(later["environment"]["testbed"]["taken_at"]) >= moment(earlier["finished_at"])
    assert all(holders(ns) == [] for ns in pool.ns.values())


# --- a holder that dies ---------------------------------------------------------------------------


def test_holder_killed_on_another_controller_is_taken_over_after_its_lease_and_cleaned_from_the_hosts(
        bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    killed = tmp_path / "killed"
    args = [*bed.args(killed, "(64,1518)", params=f";{LEASE};REPORT_PLOTS=False")]
    proc = subprocess.Popen(vsperf_argv(*args, controller="other"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    with running(proc):
        data = wait_for_results(killed / "results.json", proc, 300)
        run_id = str(data["run_id"])
        time.sleep(1.0)  # inside the 1518 B trial
        proc.kill()  # SIGKILL: no teardown, no release of its lock
    # Its controller is lost with its journal: only what it mirrored on the hosts is left.
    journal = DEFAULT_STATE_ROOT / run_id / "journal.json"
    assert json.loads(journal.read_text())["entries"]
    journal.unlink()
    held = lock_state(bed.ns["a"])["holds"]
    assert [h["holder"]["run_id"] for h in held] == [run_id] and held[0]["journal"]
    assert any(name.startswith(f"vsp{run_id}b") for name in bed.links()["a"])  # its bridge on host A
    nxt = run(vsperf_argv(*dummy(bed.testbed_file(), tmp_path / "next", "--testbed-wait", "60", params=f";{LEASE}")),
              tmp_path)
    assert nxt.returncode == 0, nxt.stderr
    assert re.search(r"INFO waiting for a testbed \(\d+ s of 60 s\): .* busy \(host \S+ is held by run "
                     rf"{run_id} ", nxt.stderr), nxt.stderr
    taking = [line for line in nxt.stderr.splitlines() if "taking over" in line]
    assert taking and re.search(rf"host {bed.dut}: taking over from run {run_id} .*: its lease expired \(not renewed "
                                r"for \d+ s by the host's clock; lease 6 s\); cleaning what it left first", taking[0])
    assert re.search(rf"removed leftover of a killed run: run {run_id}: host {bed.dut}: link vsp{run_id}b\d+ deleted",
                     nxt.stderr), nxt.stderr
    assert_nothing_left(bed, run_id, before, links_before)
    assert holders(bed.ns["a"]) == [] and holders(bed.ns["b"]) == []


def test_dut_sshd_killed_under_the_holder_it_stops_in_one_line_and_its_lock_expires(bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    out = tmp_path / "lost"
    proc = subprocess.Popen(vsperf_argv(*dummy(bed.testbed_file(), out, duration=120, params=f";{LEASE}"),
                                        controller="other"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not (out / "results.json").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        run_id = results(out)["run_id"]
        bed.servers["a"].kill()  # the DUT host drops off the network
        killed_at = time.monotonic()
        _out, err = proc.communicate(timeout=60)
        stopped_after = time.monotonic() - killed_at
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
        run_sshd(bed.servers["a"])
    assert proc.returncode == 1 and stopped_after < 10, err
    assert errors(err) == [next(line for line in err.splitlines() if "ERROR run stopped" in line)], err
    assert re.search(rf"ERROR run stopped: testbed \S+: its lock not renewed for \d+ s \(lease 6 s\): lost the SSH "
                     rf"connection to host {bed.dut}", err), err
    assert results(out)["tests"][0]["status"] == "interrupted" and "Traceback" not in err
    assert holders(bed.ns["b"]) == []  # given back where the host answered
    assert holders(bed.ns["a"]) == [run_id]  # kept where it did not: it expires
    status = run(vsperf_argv("testbed", "status", str(bed.testbed_file())), tmp_path)
    assert f"held by run {run_id}" in status.stdout and status.returncode == 0
    time.sleep(6)
    status = run(vsperf_argv("testbed", "status", str(bed.testbed_file())), tmp_path)
    assert status.stdout.startswith(f"testbed {bed.testbed_file()}: free") and "lease EXPIRED" in status.stdout
    nxt = run(vsperf_argv(*dummy(bed.testbed_file(), tmp_path / "next")), tmp_path)
    assert nxt.returncode == 0 and f"taking over from run {run_id}" in nxt.stderr, nxt.stderr
    assert_nothing_left(bed, run_id, before, links_before)
    assert holders(bed.ns["a"]) == [] and not lock_file(bed.ns["a"]).exists()


# --- the one release path ---------------------------------------------------------------------------


def test_what_is_gone_for_good_is_dropped_with_one_warning_and_never_retried(bed: Bed, tmp_path: Path) -> None:
    spare = (f"{bed.tag}a9", f"{bed.tag}b9")  # a third cable, which "the user" deletes after the kill
    subprocess.run(["ip", "link", "add", spare[0], "netns", bed.ns["a"], "type", "veth", "peer", "name", spare[1],
                    "netns", bed.ns["b"]], check=True)
    try:
        doc = yaml.safe_load(bed.testbed_file().read_text())
        doc["ports"].append({"dut": {"interface": spare[0]}, "trafficgen": {"interface": spare[1]}})
        three = tmp_path / "three.yaml"
        three.write_text(yaml.safe_dump(doc))
        script = textwrap.dedent(f"""
            import os, signal
            from pathlib import Path
            from vsperf.executor import CommandLog
            from vsperf.host.hosts import RunHosts
            from vsperf.testbed.file import load_testbed
            hosts = RunHosts.open(load_testbed(Path({str(three)!r})), run_id="g0ne", command_log=CommandLog(None),
                                  state_root=Path({str(tmp_path)!r}))
            for host, interface in list(hosts.checked):
                hosts.use_port(hosts.hosts[host], interface, mtu_bytes=1600)
            os.kill(os.getpid(), signal.SIGKILL)
            """)
        killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert killed.returncode == -9, killed.stderr
    finally:
        subprocess.run(["ip", "-n", bed.ns["a"], "link", "del", spare[0]], capture_output=True)
    script = textwrap.dedent(f"""
        import logging
        from pathlib import Path
        from vsperf.executor import CommandLog
        from vsperf.host.hosts import RunHosts
        from vsperf.testbed.file import load_testbed
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
        with RunHosts.open(load_testbed(Path({str(bed.testbed_file())!r})), run_id="n3xt",
                           command_log=CommandLog(None), state_root=Path({str(tmp_path)!r})):
            pass
        """)
    first = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    lines = [line for line in first.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    gone = [line for line in lines if " is gone" in line]
    assert sorted(gone) == sorted([
        f"WARNING host {bed.dut}: port {spare[0]} is gone: not restored, and forgotten (vsperf will not look for it "
        f"again)",
        f"WARNING host {bed.gen}: port {spare[1]} is gone: not restored, and forgotten (vsperf will not look for it "
        f"again)"]), first.stderr
    assert not [line for line in lines if line.startswith("ERROR")]
    assert all(s.mtu_bytes == 1500 for s in bed.states().values())  # what is still there is put back
    again = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and again.stderr.strip() == "", again.stderr  # nothing retried, nothing said


# --- bad input --------------------------------------------------------------------------------------


def wait_listening(srv: SshdServer) -> None:
    """Until `srv` accepts connections (at most 10 s)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection((srv.address, srv.port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)


def one_line_exit_2(proc: subprocess.CompletedProcess[str], pattern: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = errors(proc.stderr)
    assert len(lines) == 1 and re.search(pattern, lines[0]), proc.stderr
    assert "Traceback" not in proc.stderr


def test_pool_files_that_are_not_and_every_testbed_busy(bed: Bed, tmp_path: Path) -> None:
    before = bed.states()
    not_one = tmp_path / "notpool.yaml"
    not_one.write_text(f"testbeds: {bed.testbed_file()}\n")
    one_line_exit_2(run(vsperf_argv(*dummy(not_one, tmp_path / "r1")), tmp_path),
                    r"pool .*notpool\.yaml: testbeds: expected a list of a string, got str .*\(a pool file lists "
                    r"testbed files: testbeds: \[FILE, \.\.\.\]\)$")
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(f"testbeds: [{bed.testbed_file()}, rack9.yaml]\n")
    one_line_exit_2(run(vsperf_argv(*dummy(unknown, tmp_path / "r2")), tmp_path),
                    r"pool .*unknown\.yaml: testbeds\[1\]: no testbed file .*rack9\.yaml")
    copy = tmp_path / "copy.yaml"  # the same hosts and ports under another name: busy with the first
    copy.write_text(bed.testbed_file().read_text())
    with running(bed.vsperf(*dummy(bed.testbed_file(), tmp_path / "holder", duration=30), cwd=tmp_path)) as holder:
        deadline = time.monotonic() + 60
        while not (tmp_path / "holder" / "results.json").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        run_id = results(tmp_path / "holder")["run_id"]
        busy = run(vsperf_argv(*dummy(bed.testbed_file(), tmp_path / "r3", "--testbed", str(copy))), tmp_path)
        holder.terminate()  # SIGTERM: it tears down and gives its lock back
        holder.wait(timeout=60)
    one_line_exit_2(busy, rf"no testbed of 2 could be taken: \S+lab\.yaml busy \(host {bed.dut} is held by run "
                          rf"{run_id} .*\); \S+copy\.yaml busy \(host {bed.dut} is held by run {run_id} .*\); wait for "
                          r"one with --testbed-wait SECONDS$")
    assert not (tmp_path / "r3").exists() and bed.states() == before
    assert holders(bed.ns["a"]) == [] and holders(bed.ns["b"]) == []


def test_a_lock_directory_root_cannot_read_is_one_line(bed: Bed, tmp_path: Path) -> None:
    srv = bed.servers["a"]
    locks = tmp_path / "nobodys-locks"
    locks.mkdir(mode=0o700)
    subprocess.run(["chown", "nobody", str(locks)], check=True)
    doc = yaml.safe_load(bed.testbed_file().read_text())
    doc["hosts"][bed.dut]["lock_dir"] = str(locks)
    testbed = tmp_path / "nobody.yaml"
    testbed.write_text(yaml.safe_dump(doc))
    # Host A's sessions without CAP_DAC_OVERRIDE: root there cannot read another user's directory,
    # as on a host where the lock directory was made by someone else and vsperf logs in unprivileged.
    srv.kill()
    limited = subprocess.Popen(["ip", "netns", "exec", srv.netns or "", "setpriv", "--bounding-set",
                                "-dac_override,-dac_read_search", SSHD, "-D", "-e", "-f",
                                str(srv.directory / "sshd_config")], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        srv.pid = limited.pid
        wait_listening(srv)
        refused = run(vsperf_argv(*dummy(testbed, tmp_path / "r")), tmp_path)
    finally:
        srv.kill()
        limited.wait(timeout=10)
        run_sshd(srv)
    one_line_exit_2(refused, rf"host {bed.dut}: lock directory {locks}: cannot read its state \(.*[Pp]ermission "
                             r"denied\); make it root's and readable \(chown root: and chmod 755 it\), or give the "
                             r"host another lock_dir in the testbed file$")
    assert not (tmp_path / "r").exists() and holders(bed.ns["b"]) == []  # nothing taken, nothing touched


@pytest.mark.skipif(not LIBFAKETIME.exists(), reason="libfaketime missing: apt-get install libfaketime")
def test_leases_do_not_depend_on_the_controllers_clock(bed: Bed, tmp_path: Path) -> None:
    testbed = bed.testbed_file()
    no_sleep = "TRAFFICGEN_DUMMY_DUT={'wall_clock': False}"  # see clock_env: no wall-clock trials under a faked clock
    # The holder's controller is three days behind the hosts: a lease judged by its clock would
    # look expired to everyone; one ahead would look renewed in the future. It holds the testbed
    # in --mode trafficgen-off (deployed, nothing sent, until SIGTERM).
    holder = subprocess.Popen(vsperf_argv(*dummy(testbed, tmp_path / "holder", "--mode", "trafficgen-off",
                                                 params=f";{LEASE}", hold=no_sleep), controller="other"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                              env=clock_env("-3d"))
    with running(holder):
        deadline = time.monotonic() + 60
        while not (tmp_path / "holder" / "results.json").exists() and time.monotonic() < deadline:
            if holder.poll() is not None:
                pytest.fail(f"the holder ended: {holder.communicate()}")
            time.sleep(0.1)
        data = results(tmp_path / "holder")
        assert datetime.fromisoformat(data["started_at"]).timestamp() < time.time() - 2 * 86400  # its clock is off
        time.sleep(8)  # more than a lease: it renews, by the host's clock
        ahead = run(vsperf_argv(*dummy(testbed, tmp_path / "ahead", hold=no_sleep)), tmp_path, env=clock_env("+3d"))
        one_line_exit_2(ahead, rf"is busy: host {bed.dut} is held by run {data['run_id']} .*, its lease renewed "
                               r"[0-5] s ago;")
        holder.kill()
        killed_at = time.monotonic()
    time.sleep(7)  # its lease of 6 s, by the host's clock
    nxt = run(vsperf_argv(*dummy(testbed, tmp_path / "next", hold=no_sleep)), tmp_path, env=clock_env("+3d"))
    assert nxt.returncode == 0, nxt.stderr
    waited = time.monotonic() - killed_at
    assert re.search(rf"taking over from run {data['run_id']} .*: its lease expired \(not renewed for (\d+) s by the "
                     r"host's clock; lease 6 s\)", nxt.stderr), nxt.stderr
    renewed = int(re.findall(r"not renewed for (\d+) s by the host's clock", nxt.stderr)[0])
    assert 6 <= renewed <= waited + 2  # the host's count since the last renewal, not three days

"""The DUT host's extras on a testbed, end to end through the CLI (sshd host A = DUT, host B =
vsgen; see testbed_bed.py): a test's CPU load (stress-ng) on host A, Frame Modification vlan by
host A's OVS, and the DUT actions over SSH: rfc2544_reset (the switch restarted) and an RFC 2889
address test (its learned addresses flushed). Each run leaves nothing behind; a run killed with
SIGKILL during its load leaves stress-ng running on host A, and the next run stops it."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil
import pytest
from cli_helpers import small_load_conf
from testbed_bed import Bed, assert_nothing_left, finish, open_bed, running, skip_missing_switch

from vsperf.backends import build_registries
from vsperf.config.loader import load_settings
from vsperf.deploy.build import DeploymentSpec, build_deployment
from vsperf.executor import CommandLog
from vsperf.host.hosts import RunHosts
from vsperf.host.workdir import new_run_id
from vsperf.testbed.file import load_testbed
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.vsgen.backend import VsgenTrafficGenerator

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    with open_bed(tmp_path_factory.mktemp("dut_extras"), "v9h", 112) as opened:
        yield opened


def _load_conf(tmp_path: Path) -> Path:
    """A conf file adding test v9h_cpu_load (a small CPU load: cli_helpers.SMALL_LOAD_TEST) to the catalog."""
    return small_load_conf(tmp_path, "v9h_cpu_load")


def _run(bed: Bed, tmp_path: Path, test: str, vswitch: str, params: str = "", *extra: str) -> dict[str, Any]:
    """`vsperf TEST --testbed` at 64 B with 1 s trials; exit 0; its results.json."""
    results = tmp_path / "run"
    proc = bed.vsperf(*bed.args(results, "(64,)", vswitch, test=test, params=params), *extra, cwd=tmp_path)
    _out, err = finish(proc, 600)
    assert proc.returncode == 0, err
    data: dict[str, Any] = json.loads((results / "results.json").read_text())
    assert data["tests"][0]["status"] == "passed", data["tests"][0].get("error")
    data["commands"] = (results / "commands.log").read_text()
    data["overall"] = (results / "overall.log").read_text()
    return data


def _stress_pid(overall_log: str, host: str) -> int:
    """The PID of the load's stress-ng on `host`, as the run logged it."""
    found = re.search(rf"stress-ng load started on host {host} \(pid (\d+)\)", overall_log)
    assert found, overall_log
    return int(found.group(1))


def _is_stress_ng(pid: int) -> bool:
    try:
        return psutil.Process(pid).name() == "stress-ng"
    except psutil.NoSuchProcess:
        return False


def test_cpu_load_runs_on_the_dut_host_and_stops(bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    data = _run(bed, tmp_path, "v9h_cpu_load", "linux-bridge", "", "--conf-file", str(_load_conf(tmp_path)))
    test = data["tests"][0]
    assert test["results"][0]["trials"][0]["rx_frames"] > 0
    load = next(c for c in test["components"] if c["role"] == "loadgen")
    assert load["name"] == "stress-ng" and load["details"]["host"] == bed.dut and load["details"]["load"] == "20"
    # started over host A's SSH with that host's CPU count (one worker: all but the reserved one)
    assert re.search(rf"\[{bed.dut}\] ssh .* 'timeout -k 2 \d+ getconf _NPROCESSORS_ONLN'", data["commands"])
    workers = str(max(1, (psutil.cpu_count() or 1) - 1))  # host A's CPUs are this machine's
    assert re.search(rf"\[{bed.dut}\] \[background\] ssh .* stress-ng --timeout 0 --metrics-brief --cpu "
                     rf"{workers} --cpu-load 20", data["commands"]), data["commands"]
    pid = _stress_pid(data["overall"], bed.dut)
    # pidstat (the default collector) read its process on host A
    assert re.search(rf"\[{bed.dut}\] ssh .* 'timeout -k 2 \d+ cat /proc/{pid}/stat /proc/{pid}/io'", data["commands"])
    assert not _is_stress_ng(pid)
    assert_nothing_left(bed, data["run_id"], before, links_before)


def test_vsperf_killed_during_its_load_the_next_run_stops_it(bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "killed"
    # Two frame sizes: the load runs around both, long enough to be killed during it.
    pid = 0
    with running(bed.vsperf(*bed.args(results, "(64,1518)", test="v9h_cpu_load"), "--conf-file",
                            str(_load_conf(tmp_path)), cwd=tmp_path)) as proc:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and not pid:
            log = results / "overall.log"
            found = re.search(rf"stress-ng load started on host {bed.dut} \(pid (\d+)\)",
                              log.read_text() if log.exists() else "")
            pid = int(found.group(1)) if found else 0
            time.sleep(0.1)
        assert pid, f"no load started (vsperf exit {proc.poll()})"
        run_id = json.loads((results / "results.json").read_text())["run_id"]
        proc.kill()  # SIGKILL: no teardown at all
    time.sleep(1.0)
    assert _is_stress_ng(pid)  # still running on host A (its SSH channel's end does not stop it)
    nxt = bed.next_run(tmp_path)
    assert nxt.returncode == 0, nxt.stderr
    assert (f"removed leftover of a killed run: run {run_id}: host {bed.dut}: process stress-ng (pid {pid}) "
            "stopped") in nxt.stderr
    assert not _is_stress_ng(pid)
    assert_nothing_left(bed, str(run_id), before, links_before)


def test_mod_vlan_frames_arrive_tagged(bed: Bed, tmp_path: Path) -> None:
    skip_missing_switch("ovs")
    before, links_before = bed.states(), bed.links()
    data = _run(bed, tmp_path, "phy2phy_tput_mod_vlan_cont", "ovs", ";VSWITCH_VLAN_ID=123")
    test = data["tests"][0]
    assert test["frame_modification"] == "vlan"
    trials = test["results"][0]["trials"]
    # vsgen on host B counted tagged test frames (untagged ones would be flagged rx_untagged_frames)
    assert trials and all(t["rx_frames"] > 0 for t in trials)
    assert not any({"rx_untagged_frames", "rx_wrong_vlan"} & set(t["flags"]) for t in trials)
    assert_nothing_left(bed, data["run_id"], before, links_before)


def test_without_the_push_vsgen_flags_untagged_frames(bed: Bed, tmp_path: Path) -> None:
    """The check above can fail: the same OVS on host A without the push, the generator's ports
    expecting tag 123, and vsgen on host B flags the frames that arrive untagged."""
    skip_missing_switch("ovs")
    before, links_before = bed.states(), bed.links()
    run_id, settings, traffic = new_run_id(), load_settings(env={}).merged({"VSWITCH": "ovs"}, "test"), Traffic()
    command_log = CommandLog(tmp_path / "commands.log")
    spec = DeploymentSpec(name="p2p", vswitch="ovs", vnf="auto", settings=settings)
    hosts = RunHosts.open(load_testbed(bed.testbed_file()), run_id=run_id, command_log=command_log)
    with hosts, build_deployment(spec, build_registries(), hosts, traffic) as dep, \
            VsgenTrafficGenerator(settings, hosts.trafficgen) as gen:
        gen.start([replace(p, rx_vlan_id=123) for p in dep.gen_ports if isinstance(p, GenPort)])
        result = gen.trial(traffic, 2000.0, 1.0)
    assert result.rx_frames > 0 and "rx_untagged_frames" in result.flags
    assert_nothing_left(bed, run_id, before, links_before)


def test_rfc2544_reset_restarts_ovs_on_the_dut_host(bed: Bed, tmp_path: Path) -> None:
    skip_missing_switch("ovs")
    before, links_before = bed.states(), bed.links()
    short = ";TRAFFICGEN_RESET_DURATION_S=6;TRAFFICGEN_RESET_AT_S=1;TRAFFICGEN_RESET_REPETITIONS=1"
    data = _run(bed, tmp_path, "phy2phy_reset", "ovs", short)
    metrics = data["tests"][0]["results"][0]["metrics"]
    assert 0 < metrics["reset_time_s"] < 6
    # the restart: ovs-vswitchd asked to exit and started again, both over host A's SSH
    log = data["commands"]
    starts = re.findall(rf"\[{bed.dut}\] ssh .* ovs-vswitchd unix:\S+ .* --detach'", log)
    exits = re.findall(rf"\[{bed.dut}\] ssh .*/ovs-vswitchd\.ctl exit'", log)
    assert len(starts) == 2 and len(exits) >= 1, log
    # pidstat followed the restarted daemon: the old ovs-vswitchd until the reset, the new one after
    groups = [g for g in data["tests"][0]["results"][0]["statistics"] if g.startswith("Process: ovs-vswitchd")]
    assert len(groups) == 2, groups
    assert "exited during traffic" not in data["overall"]
    assert_nothing_left(bed, data["run_id"], before, links_before)


def test_rfc2889_learning_flushes_ovs_addresses_on_the_dut_host(bed: Bed, tmp_path: Path) -> None:
    skip_missing_switch("ovs")
    before, links_before = bed.states(), bed.links()
    data = _run(bed, tmp_path, "phy2phy_learning", "ovs", ";TRAFFICGEN_RFC2889_LEARNING_ADDRESSES=256")
    metrics = data["tests"][0]["results"][0]["metrics"]
    assert metrics["address_learning_rate_fps"] > 0 and metrics["learning_addresses"] == 256
    assert re.search(rf"\[{bed.dut}\] ssh .* ovs-appctl .* fdb/flush vsp{data['run_id']}b0'", data["commands"])
    assert_nothing_left(bed, data["run_id"], before, links_before)

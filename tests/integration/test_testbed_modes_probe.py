"""`--mode trafficgen` on a testbed, end to end through the CLI (sshd host A, host B = vsgen; see
testbed_bed.py): host A is the user's DUT, a bridge the test makes between its two cable ends;
vsperf sends through it from host B's ports without deploying, checking or touching anything on
host A, and leaves host B's ports as they were. And `--mode trafficgen-off`: the test's deployment
on the testbed, held until SIGTERM, nothing sent. And the KVM probe of GUEST_ACCEL=auto, run
on host A over SSH (the QEMU tests force tcg)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from testbed_bed import Bed, assert_nothing_left, finish, open_bed, running

from vsperf.config.loader import load_settings
from vsperf.executor import CommandLog, LocalExecutor
from vsperf.host.hosts import RunHosts
from vsperf.host.workdir import new_run_id
from vsperf.testbed.file import load_testbed
from vsperf.vnf.qemu.accel import KVM_OPEN_SCRIPT, PROBE_FILE, PROBE_TIMEOUT_S, choose_accel
from vsperf.vnf.qemu.image import ImageBuilder
from vsperf.vnf.qemu.qemu import QEMU_BINARY
from vsperf.vswitch.linux_bridge import host_kernel_config_option

pytestmark = pytest.mark.root

# Short searches (bed.args sets TRAFFICGEN_DURATION=1 and the frame sizes)
SHORT = ("TRAFFICGEN_RESIDUAL_WAIT_S=0.3;TRAFFICGEN_RFC2544_MAX_RATE_PERCENT=0.3;"
         "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT=0.1")
PARAMS = f"TRAFFICGEN_DURATION=1;{SHORT}"


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    with open_bed(tmp_path_factory.mktemp("modes_probe"), "v9m", 118) as opened:
        yield opened


@pytest.fixture
def users_dut(bed: Bed) -> Iterator[str]:
    """The user's DUT on host A: a bridge of its two cable ends, made and removed by the test."""
    ns, bridge = bed.ns["a"], f"{bed.tag}br"

    def ip(*args: str) -> None:
        subprocess.run(["ip", "-n", ns, *args], check=True, capture_output=True)

    ip("link", "add", bridge, "type", "bridge", "forward_delay", "0", "stp_state", "0")
    try:
        for a_end, _b_end in bed.cables:
            ip("link", "set", a_end, "master", bridge, "up")
        ip("link", "set", bridge, "up")
        yield bridge
    finally:
        ip("link", "del", bridge)
        for a_end, _b_end in bed.cables:
            ip("link", "set", a_end, "down")


def test_trafficgen_mode_sends_through_the_users_dut(bed: Bed, users_dut: str, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "run"
    proc = bed.vsperf("phy2phy_tput", "--mode", "trafficgen", "--trafficgen", "vsgen", "--testbed",
                      str(bed.testbed_file()), "--test-params", PARAMS, "--results-dir", str(results), cwd=tmp_path)
    _out, err = finish(proc, 600)
    assert proc.returncode == 0, err
    data: dict[str, Any] = json.loads((results / "results.json").read_text())
    test = data["tests"][0]
    assert test["status"] == "passed", test.get("error")
    assert test["results"][0]["metrics"]["throughput_rx_fps"] > 0  # frames crossed host A's bridge
    roles = {c["role"] for c in test["components"]}
    assert "vswitch" not in roles and "vnf" not in roles
    ports = [c for c in test["components"] if c["role"] == "port"]
    assert [p["details"]["interface"] for p in ports] == [b_end for _a_end, b_end in bed.cables]
    assert (results / "result.csv").is_file()  # VSPERF's traffic-only result file
    # On host A only reads (the report's host description, the collectors' /proc/stat and ps):
    # nothing is created, changed or started there. The preflight's commands are in the log too:
    # it looks up the collectors' programs there (a fixed `command -v` script, which only reads).
    on_a = [line.split(" -- ", 1)[1] for line in (results / "commands.log").read_text().splitlines()
            if f"[{bed.dut}] ssh" in line]
    lookup = re.compile(r"""^'timeout -k 2 \d+ sh -c '"'"'command -v "\$1"'"'"' sh (\S+)'$""")
    looked_up = {m.group(1) for command in on_a if (m := lookup.match(command))}
    assert looked_up == {"getconf", "ps"}, on_a
    programs = {re.sub(r"^'timeout -k 2 \d+ ", "", command).split()[0] for command in on_a if not lookup.match(command)}
    assert "cat" in programs and programs <= {"cat", "getconf", "ps"}, on_a
    # The user's bridge still joins host A's ends; host B's ports are back as they were.
    assert_nothing_left(bed, str(data["run_id"]), before, links_before)
    assert users_dut in bed.links()["a"]


def test_trafficgen_off_deploys_on_host_a_holds_and_tears_down(bed: Bed, tmp_path: Path) -> None:
    """--mode trafficgen-off: the test's deployment on the testbed, vsperf holds (SIGTERM goes on)
    and sends nothing, then everything is put back."""
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "off"
    proc = bed.vsperf(*bed.args(results, "(64,)"), "--mode", "trafficgen-off", cwd=tmp_path)
    with running(proc):
        seen = bed.held(proc)
        proc.send_signal(signal.SIGTERM)
        _out, err = finish(proc, 120)
    assert proc.returncode == 0, seen + err
    data: dict[str, Any] = json.loads((results / "results.json").read_text())
    assert data["tests"][0]["results"] == []  # nothing sent
    assert_nothing_left(bed, str(data["run_id"]), before, links_before)


def test_the_kvm_probe_runs_over_ssh_on_the_dut_host_and_is_asked_once(bed: Bed, tmp_path: Path) -> None:
    """GUEST_ACCEL=auto on a testbed: the probe guest boots on host A over its SSH channel, its
    answer comes back within the probe's limit, nothing of it is left, and the answer is cached
    per host: the next run asks no guest. (This machine's /dev/kvm opens, but its KVM guests hang:
    the probe runs its full PROBE_TIMEOUT_S here and answers tcg.)"""
    if shutil.which(QEMU_BINARY) is None:
        pytest.skip(f"{QEMU_BINARY} missing: apt-get install qemu-system-x86")
    settings = load_settings()
    image = ImageBuilder(LocalExecutor(), Path(str(settings["GUEST_IMAGE_CACHE_DIR"])).expanduser(),
                         metapackage=str(settings["GUEST_KERNEL_PACKAGE"])).get()
    cache, log_path = tmp_path / "cache", tmp_path / "commands.log"
    run_id = new_run_id()
    with RunHosts.open(load_testbed(bed.testbed_file()), run_id=run_id, command_log=CommandLog(log_path)) as hosts:
        host = hosts.dut
        kernel = host.stage_file(image.kernel_path, "vmlinuz")
        initrd = host.stage_file(image.initrd_path, "initrd.gz")
        started = time.monotonic()
        first = choose_accel("auto", host, image, kernel, initrd, cache, tmp_path / "probe-console.log")
        probe_s = time.monotonic() - started
        again = choose_accel("auto", host, image, kernel, initrd, cache, tmp_path / "probe-console.log")
        # the probe guest was stopped and forgotten
        assert [e for e in hosts.journal if e.kind == "process"] == []
    assert first == again and first in ("kvm", "tcg")
    assert probe_s < PROBE_TIMEOUT_S + 15, probe_s
    commands = log_path.read_text()
    assert commands.count(f"[{bed.dut}] [background] ssh") == 1 and "-accel kvm" in commands  # one probe guest
    assert KVM_OPEN_SCRIPT.split()[0] in commands  # /dev/kvm opened on host A first
    known = json.loads((cache / PROBE_FILE).read_text())
    assert list(known) == [f"{bed.dut}|{os.uname().release}|{QEMU_BINARY}|{image.key}"]
    assert not [p for p in psutil.process_iter(["cmdline"]) if "-accel" in (p.info["cmdline"] or [])
                and str(kernel) in (p.info["cmdline"] or [])]


def test_linux_bridge_vlan_push_checks_host_as_kernel(bed: Bed, tmp_path: Path) -> None:
    """Frame Modification vlan with linux-bridge: host A's kernel config is read over its SSH
    (/boot/config-RELEASE, else /proc/config.gz) before the bridge is made. Host A's kernel is this
    machine's: where it lacks bridge VLAN filtering (this development machine's has no
    CONFIG_VLAN_8021Q), the test fails with one line naming host A and nothing is created there."""
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "vlan"
    proc = bed.vsperf(*bed.args(results, "(64,)", test="phy2phy_tput_mod_vlan", params=";" + SHORT), cwd=tmp_path)
    _out, err = finish(proc, 600)
    data: dict[str, Any] = json.loads((results / "results.json").read_text())
    test = data["tests"][0]
    if host_kernel_config_option(LocalExecutor(), "CONFIG_BRIDGE_VLAN_FILTERING") is False:
        assert proc.returncode == 1 and test["status"] == "failed", err
        assert test["error"] == (f"linux-bridge cannot push VLAN tags on the kernel of host {bed.dut} "
                                 "(CONFIG_BRIDGE_VLAN_FILTERING is off): use --vswitch ovs for Frame Modification vlan")
    else:
        assert proc.returncode == 0 and test["status"] == "passed", err
        assert test["results"][0]["metrics"]["throughput_rx_fps"] > 0  # tagged frames counted on host B
    config_reads = [line for line in (results / "commands.log").read_text().splitlines()
                    if "gzip -dc /proc/config.gz" in line or "cat /boot/config-" in line]
    assert config_reads and all(f"[{bed.dut}] ssh" in line for line in config_reads), config_reads
    assert_nothing_left(bed, str(data["run_id"]), before, links_before)

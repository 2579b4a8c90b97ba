"""op2p decapsulation through `--trafficgen otg` on the local lab (root): the otg backend writes
each tunnel type's outer headers into its OTG flow, `vsperf otg-server` (vsgen behind the OTG API)
sends the frames, Open vSwitch strips the tunnel. A capture on the switch's end of the receiving
port (tcpdump there, read back with tshark) shows only the inner test frames, and the test passes
with the frames sent received. (vsperf's own TRAFFIC capture needs --trafficgen vsgen: the OTG
server's receiver hands no frames to the kernel, so the capture here is the switch's side.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import environment, leftovers, params_text, results, vsperf
from conftest import lab_skip_reason
from otg_server_proc import otg_server_process
from tshark_fields import GOOD, frames, tshark_reason

from vsperf.config.loader import load_settings
from vsperf.host import netlink as netdev
from vsperf.host.cpus import sender_cpus

pytest.importorskip("snappi", reason="pip install 'vsperf[otg]'")

pytestmark = pytest.mark.root

INNER = ("198.18.0.1", "198.18.1.1")  # TRAFFIC's l3 addresses
CAPTURED = 5
TEST = """
- Name: {kind}_dec
  Deployment: op2p
  Tunnel Type: {kind}
  Tunnel Operation: decapsulation
  Description: op2p {kind} decapsulation through the otg generator
  Parameters:
    TRAFFIC: {{traffic_type: rfc2544_continuous, frame_rate: 0.1, bidir: false}}
"""
PARAMS = {
    "TRAFFICGEN_DURATION": "2",
    "TRAFFICGEN_PKT_SIZES": "(128,)",
    "TRAFFICGEN_RESIDUAL_WAIT_S": "0.3",
    "HISTORY": "False",
    # AF_PACKET ports: what OVS sends through them passes the kernel's taps, where tcpdump sees it
    # (AF_XDP's transmit bypasses them).
    "VSWITCH_OVS_PORT_TYPE": "system",
}


@pytest.fixture(autouse=True)
def _lab() -> None:
    reason = lab_skip_reason() or tshark_reason()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="module")
def otg_server() -> Iterator[str]:
    """`vsperf otg-server` on a free loopback port, serving the lab's namespaces; stopped by PID."""
    cpus = ",".join(str(c) for c in sender_cpus(load_settings(), "VSGEN_CPUS", sorted(os.sched_getaffinity(0))))
    argv = [sys.executable, "-m", "vsperf", "otg-server", "--listen", "127.0.0.1:0", "--netns-prefix", "vsp",
            "--residual-wait", "0.3", "--cpus", cpus]
    with otg_server_process(argv, "http://127.0.0.1:", environment()) as url:
        yield url


def switch_end_of_port0(before: set[str]) -> tuple[str, str] | None:
    """(namespace, interface) of the switch's end of generator port 0 in a run started after
    `before` (the namespaces then), once both exist: vsp<run>s and vsp<run>p0."""
    for netns in set(netdev.list_netns()) - before:
        if netns.startswith("vsp") and netns.endswith("s"):
            ifname = netns[:-1] + "p0"
            shown = subprocess.run(["ip", "-n", netns, "link", "show", ifname], capture_output=True, check=False)
            if shown.returncode == 0:
                return netns, ifname
    return None


def run_capturing(kind: str, tmp_path: Path, location: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`vsperf KIND_dec --trafficgen otg`, with tcpdump capturing the first frames the switch sends
    to generator port 0 (the receiver) from the moment its port exists; tcpdump stopped by PID."""
    tests = tmp_path / "tests.yaml"
    tests.write_text(TEST.format(kind=kind))
    conf = tmp_path / "conf.yaml"
    conf.write_text(f"TEST_CASE_FILES: [{tests}]\n")
    pcap = tmp_path / "switch_p0.pcap"
    argv = [sys.executable, "-m", "vsperf", "--conf-file", str(conf), f"{kind}_dec", "--vswitch", "ovs",
            "--trafficgen", "otg", "--results-dir", str(tmp_path / "run"),
            "--test-params", params_text(PARAMS, TRAFFICGEN_OTG_LOCATION=location)]
    before = set(netdev.list_netns())
    run = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment())
    tcpdump: subprocess.Popen[bytes] | None = None
    try:
        while tcpdump is None and run.poll() is None:
            found = switch_end_of_port0(before)
            if found is None:
                time.sleep(0.05)
                continue
            netns, ifname = found
            # `ip netns exec` execs tcpdump: the PID is tcpdump's
            tcpdump = subprocess.Popen(["ip", "netns", "exec", netns, "tcpdump", "-i", ifname, "-Q", "out", "-c",
                                        str(CAPTURED), "-w", str(pcap), "-U", "-n", "-s", "0", "udp or ip proto 47"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out, err = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            run.send_signal(signal.SIGINT)  # vsperf tears its lab down on SIGINT
            run.wait(timeout=120)
        if tcpdump is not None:
            try:
                tcpdump.wait(timeout=5)
            except subprocess.TimeoutExpired:
                tcpdump.send_signal(signal.SIGTERM)
                tcpdump.wait(timeout=10)
    assert tcpdump is not None, f"the switch's port 0 never appeared: {err[-2000:]}"
    return subprocess.CompletedProcess(argv, run.returncode, out, err), pcap


@pytest.mark.parametrize("kind", ["vxlan", "gre", "geneve"])
def test_otg_sends_each_tunnel_and_the_switch_strips_it(tmp_path: Path, otg_server: str, kind: str) -> None:
    proc, pcap = run_capturing(kind, tmp_path, otg_server)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(tmp_path / "run")
    (test,) = data["tests"]
    assert (test["name"], test["deployment"], test["status"]) == (f"{kind}_dec", "op2p", "passed"), test["error"]
    component = {c["role"]: c for c in test["components"]}["trafficgen"]
    assert component["name"] == "otg" and component["version"].startswith("vsgen ")
    (result,) = test["results"]
    assert result["metrics"]["throughput_rx_fps"] > 0
    (trial,) = result["trials"]
    assert trial["tx_frames"] > 1000 and trial["rx_frames"] >= 0.99 * trial["tx_frames"], trial
    seen = frames(pcap, "ip.src", "ip.dst", "ip.checksum.status", "udp.dstport", "vxlan.vni", "gre.key",
                  "geneve.vni", "frame.len")
    assert len(seen) == CAPTURED, seen
    for frame in seen:  # the inner test frame only: no outer header, no tunnel's key
        assert (frame["ip.src"], frame["ip.dst"]) == ([INNER[0]], [INNER[1]]), frame
        assert frame["vxlan.vni"] == frame["gre.key"] == frame["geneve.vni"] == [], frame
        assert frame["ip.checksum.status"] == [GOOD] and frame["frame.len"] == ["124"], frame  # 128 B less FCS
    assert leftovers(data["run_id"]) == []


def test_a_decapsulation_trial_is_refused_in_one_line_for_a_generator_without_tunnel_frames(
        tmp_path: Path) -> None:
    tests = tmp_path / "tests.yaml"
    tests.write_text(TEST.format(kind="gre"))
    conf = tmp_path / "conf.yaml"
    conf.write_text(f"TEST_CASE_FILES: [{tests}]\n")
    out = tmp_path / "run"
    proc = vsperf("--conf-file", str(conf), "gre_dec", "--vswitch", "ovs", "--trafficgen", "trafgen",
                  "--results-dir", str(out))
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith(
        "Tunnel Type gre, Tunnel Operation decapsulation: needs a generator that builds tunnel frames: "
        "--trafficgen vsgen or otg"), proc.stderr
    assert not out.exists()


def test_two_decapsulation_tests_in_one_run_each_get_their_frames_through(tmp_path: Path, otg_server: str) -> None:
    """The lab makes its ports again for the second test under the same names: the server opens
    them anew (an engine kept on the deleted ones sent into nothing: every frame lost)."""
    tests = tmp_path / "tests.yaml"
    tests.write_text(TEST.format(kind="vxlan") + TEST.format(kind="gre"))
    conf = tmp_path / "conf.yaml"
    conf.write_text(f"TEST_CASE_FILES: [{tests}]\n")
    out = tmp_path / "run"
    params = {k: v for k, v in PARAMS.items() if k != "VSWITCH_OVS_PORT_TYPE"}  # the default AF_XDP ports
    proc = vsperf("--conf-file", str(conf), "vxlan_dec", "gre_dec", "--vswitch", "ovs", "--trafficgen", "otg",
                  "--results-dir", str(out), "--test-params", params_text(params, TRAFFICGEN_OTG_LOCATION=otg_server),
                  timeout_s=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(out)
    assert [(t["name"], t["status"]) for t in data["tests"]] == [("vxlan_dec", "passed"), ("gre_dec", "passed")]
    for test in data["tests"]:
        (trial,) = test["results"][0]["trials"]
        assert trial["tx_frames"] > 1000 and trial["rx_frames"] >= 0.99 * trial["tx_frames"], (test["name"], trial)
    assert leftovers(data["run_id"]) == []

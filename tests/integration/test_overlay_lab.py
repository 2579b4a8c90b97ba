"""Overlays on the local lab through the `vsperf` command (root): op2p with each tunnel type both
ways on Open vSwitch, the receiving port's capture read back with tshark (outer and inner headers,
the VNI/key, checksums), on OVS-DPDK too, and on the Linux bridge with each tunnel device its
kernel makes; upstream's overlay tests from its own file; and the tunnels vsperf refuses in one
line, nothing deployed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_helpers import leftovers, params_text, results, vsperf
from conftest import lab_skip_reason
from tshark_fields import GOOD, frames, tshark_reason

pytestmark = pytest.mark.root

UPSTREAM = Path("/work/shared/vsperf-upstream/conf/integration")
SHORT = params_text({"TRAFFICGEN_DURATION": "1", "TRAFFICGEN_PKT_SIZES": "(128,)"})
TUNNELS = ("vxlan", "gre", "geneve")
VNI = 99  # conf/13_integration.yaml's VXLAN_VNI
OUTER = ("198.18.240.1", "198.18.240.10")  # TUNNEL_EXTERNAL_BRIDGE_IP -> VTEP_IP2
INNER = ("198.18.0.1", "198.18.1.1")  # TRAFFIC's l3 addresses
KEY_FIELD = {"vxlan": "vxlan.vni", "gre": "gre.key", "geneve": "geneve.vni"}

TEST = """
- Name: {kind}_{op}
  Deployment: op2p
  Tunnel Type: {kind}
  Tunnel Operation: {operation}
  Description: op2p {kind} {operation}, the receiving port captured
  Parameters:
    TRAFFIC: {{traffic_type: rfc2544_continuous, frame_rate: 1, bidir: false,
              capture: {{enabled: true, rx_ports: [1], count: 5, filter: "udp or ip proto 47"}}}}
"""


@pytest.fixture(autouse=True)
def _lab() -> None:
    reason = lab_skip_reason() or tshark_reason()
    if reason:
        pytest.skip(reason)


def conf(tmp_path: Path) -> Path:
    """A conf file adding the six op2p tests (each tunnel type, each operation) to the catalog."""
    tests = tmp_path / "overlay_tests.yaml"
    tests.write_text("".join(TEST.format(kind=k, op=op[:3], operation=op)
                             for k in TUNNELS for op in ("encapsulation", "decapsulation")))
    path = tmp_path / "overlay.yaml"
    path.write_text(f"TEST_CASE_FILES: [{tests}]\n")
    return path


def kernel_makes(kind: str) -> bool:
    """Whether this kernel makes `kind`'s tunnel device (tried in a namespace made for it)."""
    netns = f"vsp-tunprobe-{os.getpid()}"
    device = {"vxlan": ["vxlan", "id", "1", "dstport", "4789"], "geneve": ["geneve", "id", "1", "remote", OUTER[1]],
              "gre": ["gretap", "local", OUTER[0], "remote", OUTER[1]]}[kind]
    subprocess.run(["ip", "netns", "add", netns], check=True)
    try:
        return subprocess.run(["ip", "-n", netns, "link", "add", "t0", "type", *device], capture_output=True,
                              check=False).returncode == 0
    finally:
        subprocess.run(["ip", "netns", "del", netns], check=True)


def each_tunnel_both_ways(tmp_path: Path, vswitch: str, kinds: tuple[str, ...]) -> None:
    """op2p with each of `kinds` both ways on `vswitch`: 5 frames captured on the receiving port,
    dissected by tshark. The capture's filter keeps UDP and GRE only: a Linux bridge's own IGMP
    report, sent when its address comes up, arrives there too."""
    out = tmp_path / "run"
    names = [f"{k}_{op}" for k in kinds for op in ("enc", "dec")]
    proc = vsperf("--conf-file", str(conf(tmp_path)), *names, "--vswitch", vswitch, "--trafficgen", "vsgen",
                  "--results-dir", str(out), "--test-params", SHORT, timeout_s=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(out)
    assert [t["name"] for t in data["tests"]] == names
    for test in data["tests"]:
        assert test["status"] == "passed", (test["name"], test["error"])
        kind, op = test["name"].split("_")
        result = test["results"][0]
        assert result["metrics"]["throughput_rx_fps"] > 0
        pcap = out / result["metrics"]["capture_rx"]
        fields = ("ip.src", "ip.dst", "ip.checksum.status", "udp.dstport", KEY_FIELD[kind])
        seen = frames(pcap, *fields)
        assert len(seen) == 5, (test["name"], seen)
        for frame in seen:
            if op == "enc":  # the switch's tunnel: outer header to the far VTEP, the key, the inner frame
                assert list(zip(frame["ip.src"], frame["ip.dst"], strict=True)) == [OUTER, INNER], frame
                assert [int(v, 0) for v in frame[KEY_FIELD[kind]]] == [VNI], frame
                assert frame["ip.checksum.status"] == [GOOD, GOOD], frame
                if kind != "gre":
                    assert frame["udp.dstport"][0] == {"vxlan": "4789", "geneve": "6081"}[kind], frame
            else:  # the switch stripped vsgen's tunnel frames: only the inner frame arrives
                assert (frame["ip.src"], frame["ip.dst"]) == ([INNER[0]], [INNER[1]]), frame
                assert frame[KEY_FIELD[kind]] == [] and frame["ip.checksum.status"] == [GOOD], frame
    assert leftovers(data["run_id"]) == []


def test_each_tunnel_both_ways_on_ovs(tmp_path: Path) -> None:
    each_tunnel_both_ways(tmp_path, "ovs", TUNNELS)


def test_each_tunnel_both_ways_on_ovs_dpdk(tmp_path: Path) -> None:
    each_tunnel_both_ways(tmp_path, "ovs-dpdk", TUNNELS)


def test_the_linux_bridge_with_the_kernels_tunnel_devices(tmp_path: Path) -> None:
    """Each tunnel device this kernel makes, both ways; one it lacks is refused in one line
    before anything is deployed, even after a test of a device it has."""
    kinds = tuple(k for k in TUNNELS if kernel_makes(k))
    if kinds:
        (tmp_path / "made").mkdir()
        each_tunnel_both_ways(tmp_path / "made", "linux-bridge", kinds)
    missing = [k for k in TUNNELS if k not in kinds]
    if not missing:
        return
    out = tmp_path / "refused"
    proc = vsperf("--conf-file", str(conf(tmp_path)), *(f"{k}_enc" for k in (*kinds, missing[0])), "--vswitch",
                  "linux-bridge", "--trafficgen", "vsgen", "--results-dir", str(out), "--test-params", SHORT)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"vsperf: error: test {missing[0]}_enc: Tunnel Type {missing[0]}: "
                                                   "the kernel of host local has no "), proc.stderr
    assert not out.exists()


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="upstream's integration files are not on this machine")
def test_upstream_overlay_tests_from_its_file(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = vsperf("--integration", "-f", str(UPSTREAM / "01_testcases.conf"), "overlay_p2p_decap_cont",
                  "overlay_p2p_mod_tput", "--vswitch", "ovs", "--trafficgen", "vsgen", "--results-dir", str(out),
                  "--test-params", params_text({"TRAFFICGEN_DURATION": "1", "TRAFFICGEN_PKT_SIZES": "(64,)",
                                                "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT": "1",
                                                "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": "0.5"}), timeout_s=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(out)
    assert [(t["name"], t["deployment"], t["status"]) for t in data["tests"]] == [
        ("overlay_p2p_decap_cont", "op2p", "passed"), ("overlay_p2p_mod_tput", "ptunp", "passed")]
    for test in data["tests"]:
        assert test["results"][0]["metrics"]["throughput_rx_fps"] > 0
    assert leftovers(data["run_id"]) == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--vswitch", "none", "--test-params", "TUNNEL_TYPE=gre"), "vswitch none cannot terminate it"),
        (("--vswitch", "ovs", "--test-params", "VTEP_IP2=192.168.240.10"),
         "VTEP_IP2 192.168.240.10 is outside 198.18.0.0/15"),
    ],
)
def test_tunnels_refused_in_one_line_nothing_deployed(tmp_path: Path, args: tuple[str, ...], needle: str) -> None:
    out = tmp_path / "run"
    proc = vsperf("--conf-file", str(conf(tmp_path)), "gre_enc", "--trafficgen", "vsgen", "--results-dir", str(out),
                  *args)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "gre_enc" in lines[0], proc.stderr
    assert not out.exists()


MIX = "64:7,570:4,1024:1"  # its largest frame and a tunnel's outer headers fit the lab's 1500-byte MTU
MIX_TEST = """
- Name: {kind}_{op}_mix
  Deployment: op2p
  Tunnel Type: {kind}
  Tunnel Operation: {operation}
  Description: a frame mix through op2p {kind} {operation}
  Parameters:
    TRAFFIC: {{traffic_type: rfc2544_continuous, frame_rate: 0.5, bidir: false}}
"""


def test_a_frame_mix_through_a_tunnel_arrives_in_its_proportions(tmp_path: Path) -> None:
    """vsgen sends a mix into the switch's tunnel (decapsulation: each frame cut inside its outer
    headers, their lengths rewritten, or the switch would drop it) and receives the switch's
    tunnel frames (encapsulation): the receiver counts the test frames' own sizes."""
    from vsperf.traffic.mix import parse_mix

    mix = parse_mix(MIX)
    cases = (("vxlan", "encapsulation"), ("vxlan", "decapsulation"), ("gre", "decapsulation"))
    tests = tmp_path / "mix_tests.yaml"
    tests.write_text("".join(MIX_TEST.format(kind=k, op=op[:3], operation=op) for k, op in cases))
    conf_file = tmp_path / "mix.yaml"
    conf_file.write_text(f"TEST_CASE_FILES: [{tests}]\n")
    out = tmp_path / "run"
    params = params_text({"TRAFFICGEN_DURATION": "1", "TRAFFICGEN_PKT_SIZES": f"('{MIX}',)", "HISTORY": "False"})
    proc = vsperf("--conf-file", str(conf_file), *(f"{k}_{op[:3]}_mix" for k, op in cases), "--vswitch", "ovs",
                  "--trafficgen", "vsgen", "--results-dir", str(out), "--test-params", params, timeout_s=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(out)
    for test in data["tests"]:
        assert test["status"] == "passed", (test["name"], test["error"])
        (result,) = test["results"]
        assert result["packet_size"] == MIX
        (trial,) = result["trials"]
        counts = {int(size): int(n) for size, n in trial["rx_frames_by_size"]}
        received = sum(counts.values())
        assert received == trial["rx_frames"] > max(1000, 0.99 * trial["tx_frames"]), (test["name"], trial)
        assert set(counts) == set(mix.sizes_bytes), (test["name"], counts)
        for size, share in mix.shares.items():
            assert abs(counts[size] / received - share) <= 0.01, (test["name"], size, counts)
    assert leftovers(data["run_id"]) == []

"""Frame modifications on the local lab through the `vsperf` command (root): each of VSPERF's
Frame Modifications on Open vSwitch, checked by vsperf on the frames that arrive (the "frame
check" component) and read back here with tshark from the pcaps it left in the results."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import leftovers, params_text, results, vsperf
from conftest import lab_skip_reason
from tshark_fields import frames, tshark_reason

pytestmark = pytest.mark.root

SHORT = params_text({"TRAFFICGEN_DURATION": "1", "TRAFFICGEN_PKT_SIZES": "(128,)"})
TEST = """
- Name: mod_{mod}
  Deployment: p2p
  Frame Modification: {mod}
  Description: p2p, the switch sets {mod}
  Parameters:
    TRAFFIC: {{traffic_type: rfc2544_continuous, frame_rate: 1}}
"""
# What tshark shows in every frame arriving at generator port 1 / port 0 (vsperf.traffic.framemod's values).
EXPECTED: dict[str, tuple[tuple[str, str, str], ...]] = {
    "vlan": (("vlan.id", "100", "100"),),  # VSWITCH_VLAN_ID
    "mpls": (("mpls.label", "0", "0"), ("mpls.bottom", "1", "1")),
    "mac": (("eth.src", "22:22:22:22:22:22", "11:11:11:11:11:11"),),
    "dscp": (("ip.dsfield.dscp", "46", "46"),),
    "ttl": (("ip.ttl", "251", "241"),),
    "ip_addr": (("ip.src", "198.18.10.10", "198.19.20.20"), ("ip.dst", "198.19.20.20", "198.18.10.10")),
    "ip_port": (("udp.srcport", "44444", "44444"), ("udp.dstport", "44444", "44444")),
}


@pytest.fixture(autouse=True)
def _lab() -> None:
    reason = lab_skip_reason() or tshark_reason()
    if reason:
        pytest.skip(reason)


def test_every_frame_modification_arrives_modified(tmp_path: Path) -> None:
    tests = tmp_path / "mod_tests.yaml"
    tests.write_text("".join(TEST.format(mod=m) for m in EXPECTED))
    conf = tmp_path / "mod.yaml"
    conf.write_text(f"TEST_CASE_FILES: [{tests}]\n")
    out = tmp_path / "run"
    proc = vsperf("--conf-file", str(conf), *(f"mod_{m}" for m in EXPECTED), "--vswitch", "ovs", "--trafficgen",
                  "vsgen", "--results-dir", str(out), "--test-params", SHORT, timeout_s=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(out)
    assert [t["name"] for t in data["tests"]] == [f"mod_{m}" for m in EXPECTED]
    for index, test in enumerate(data["tests"]):
        mod = test["frame_modification"]
        assert test["status"] == "passed", (mod, test["error"])
        check = next(c for c in test["components"] if c["name"] == "frame modification")
        assert check["version"] == mod
        for port, column in ((1, 1), (0, 2)):
            assert check["details"][f"port {port}"].startswith("8 of 8 frames captured show"), check
            seen = frames(out / f"framecheck_{index}_128_rx{port}.pcap", *(f for f, *_ in EXPECTED[mod]))
            assert len(seen) == 8, (mod, port)
            for field, *values in EXPECTED[mod]:
                assert {frame[field][-1] if frame[field] else "" for frame in seen} == {values[column - 1]}, (
                    mod, port, field, seen[0])
    assert leftovers(data["run_id"]) == []


def test_a_modification_the_switch_cannot_apply(tmp_path: Path) -> None:
    tests = tmp_path / "mod_tests.yaml"
    tests.write_text(TEST.format(mod="ttl"))
    conf = tmp_path / "mod.yaml"
    conf.write_text(f"TEST_CASE_FILES: [{tests}]\n")
    out = tmp_path / "run"
    proc = vsperf("--conf-file", str(conf), "mod_ttl", "--vswitch", "linux-bridge", "--results-dir", str(out))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "vsperf: error: test mod_ttl: Frame Modification ttl: vswitch linux-bridge cannot apply it (it applies vlan); "
        "use --vswitch ovs or ovs-dpdk"], proc.stderr
    assert not out.exists()

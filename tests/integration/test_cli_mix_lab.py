"""Frame mixes, latency distributions and latency at loads through the `vsperf` command on the
local lab (root): a simple IMIX through OVS and the Linux bridge counted per size at the
receivers (after a warm start, not counted), latency at four loads after an ndr_pdr search, and
bad input refused in one line before anything is deployed. Short trials; no results store (HISTORY
off)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import leftovers, params_text, results, vsperf
from conftest import lab_skip_reason

from vsperf.search import hdr
from vsperf.traffic.mix import parse_mix

pytestmark = pytest.mark.root

BASE = {"HISTORY": "False", "TRAFFICGEN_RESIDUAL_WAIT_S": "0.3", "TRAFFICGEN_DURATION": "1"}
IMIX = parse_mix("IMIX")
# a continuous stream at 0.5 % of the IMIX line rate: ~16.7 kfps per direction, well within the switches
IMIX_TEST = """
- Name: imix_cont
  Deployment: p2p
  Description: IMIX continuous stream
  Parameters:
    TRAFFIC: {traffic_type: rfc2544_continuous, frame_rate: 0.5}
"""


@pytest.fixture(autouse=True)
def _lab() -> None:
    reason = lab_skip_reason()
    if reason:
        pytest.skip(reason)


def _passed(out: Path) -> dict[str, Any]:
    data = results(out)
    test = data["tests"][0]
    assert test["status"] == "passed", test["error"]
    assert leftovers(data["run_id"]) == []
    return data


@pytest.mark.parametrize("vswitch", ["ovs", "linux-bridge"])
def test_a_simple_imix_through_the_switch_arrives_in_its_proportions(tmp_path: Path, vswitch: str) -> None:
    out = tmp_path / "run"
    spec = tmp_path / "imix.yaml"
    spec.write_text(IMIX_TEST)
    params = params_text(BASE, TRAFFICGEN_PKT_SIZES="('IMIX',)",
                         TRAFFICGEN_WARM_START="{'mode': 'ramp', 'duration_s': 0.1, 'rate_percent': 10}")
    proc = vsperf("imix_cont", "-f", str(spec), "--vswitch", vswitch, "--results-dir", str(out), "--test-params",
                  params)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (result,) = _passed(out)["tests"][0]["results"]
    assert result["packet_size"] == IMIX.name == "64:7,570:4,1518:1"
    metrics = result["metrics"]
    assert metrics["imix_genome"] == IMIX.name and metrics["imix_avg_framesize"] == pytest.approx(IMIX.mean_bytes)
    (trial,) = result["trials"]
    counts = {int(size): int(n) for size, n in trial["rx_frames_by_size"]}
    received = sum(counts.values())
    assert received == trial["rx_frames"] > 1000 and set(counts) == set(IMIX.sizes_bytes)
    for size, share in IMIX.shares.items():
        assert abs(counts[size] / received - share) <= 0.01, (size, counts)
    # the mix is one more "frame size" of the CSV and the report
    # the warm start (a ramp) was sent and not counted: the trial's count is its own, to the frame
    per_direction = round(0.005 * 10e9 / ((IMIX.mean_bytes + 20) * 8))
    if "generator_under_delivery" not in trial["flags"]:
        assert trial["tx_frames"] == 2 * per_direction
    assert trial["warm_frames"] == 2 * round(0.1 * per_direction * (0.1 + 1) / 2)
    with (out / "result_0_imix_cont_p2p.csv").open() as f:
        (row,) = list(csv.DictReader(f))
    assert row["packet_size"] == IMIX.name and float(row["imix_avg_framesize"]) == pytest.approx(IMIX.mean_bytes)
    report = (out / "report.rst").read_text()
    assert "Frames received per size" in report and IMIX.name in report


def test_latency_at_four_loads_after_an_ndr_pdr_search(tmp_path: Path) -> None:
    out = tmp_path / "run"
    params = params_text(
        BASE, TRAFFICGEN_PKT_SIZES="(64,)", TRAFFICGEN_SEARCH="'ndr_pdr'", TRAFFICGEN_SEARCH_INITIAL_DURATION_S="0.2",
        TRAFFICGEN_RFC2544_MAX_RATE_PERCENT="0.5", TRAFFICGEN_SEARCH_WIDTH_PERCENT="20",
        TRAFFICGEN_LATENCY_LOADS_PERCENT="[0, 10, 50, 90]", TRAFFICGEN_LATENCY_LOADS_DURATION_S="0.3",
        TRAFFICGEN_LATENCY_LOADS_LOW_FPS="1000", TRAFFIC="{'latency_histogram': {'enabled': True}}")
    proc = vsperf("phy2phy_tput", "--vswitch", "linux-bridge", "--results-dir", str(out), "--test-params", params)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (result,) = _passed(out)["tests"][0]["results"]
    loads = result["details"]["load_latency"]
    assert [e["load_percent"] for e in loads] == [0, 10, 50, 90]
    pdr = result["metrics"]["pdr_tx_rate_fps"]
    assert [e["rate_fps"] for e in loads] == pytest.approx([1000.0, pdr * 0.1, pdr * 0.5, pdr * 0.9])
    for entry in loads:
        trial = result["trials"][entry["trial"] - 1]
        assert trial["purpose"].startswith("latency at ")
        histogram = trial["latency"]["hdrh"]
        assert hdr.total_count(histogram) == trial["rx_frames"] > 0  # each load its own histogram
        name = f"pdr{entry['load_percent']:g}"
        assert result["metrics"][f"{name}_p99.999_latency_ns"] == entry["percentiles_ns"]["p99.999"]
        assert result["metrics"][f"{name}_max_latency_ns"] == entry["max_ns"]
    assert (out / "plots" / "test00_phy2phy_tput_loadlatency_64.png").stat().st_size > 0
    assert "Latency at loads" in (out / "report.rst").read_text()


@pytest.mark.parametrize(("test", "vswitch", "params", "message"), [
    ("phy2phy_cont", "ovs", {"TRAFFICGEN_PKT_SIZES": "('aaxg',)"}, "letter 'x' does not exist"),
    ("phy2phy_cont", "ovs", {"TRAFFICGEN_PKT_SIZES": "('32:1,64:2',)"}, "size 32 B is outside 64..9000"),
    ("phy2phy_cont", "ovs", {"TRAFFICGEN_PKT_SIZES": "('64:7,9001:1',)"}, "size 9001 B is outside 64..9000"),
    ("phy2phy_cont", "ovs", {"TRAFFICGEN_PKT_SIZES": "('64:0,512:1',)"}, "weight 0 of size 64"),
    ("phy2phy_cont", "ovs", {"TRAFFICGEN_PKT_SIZES": "('64:-3,512:1',)"}, "weight -3 of size 64"),
    ("phy2phy_tput", "ovs", {"TRAFFICGEN_LATENCY_LOADS_PERCENT": "[10, 120]"}, "expected a number in 0..100"),
    ("phy2phy_cont", "ovs-dpdk", {"TRAFFICGEN_PKT_SIZES": "('aaah',)"}, "above the path's MTU"),
])
def test_bad_input_is_one_line_and_nothing_is_deployed(tmp_path: Path, test: str, vswitch: str,
                                                       params: dict[str, str], message: str) -> None:
    out = tmp_path / "run"
    proc = vsperf(test, "--vswitch", vswitch, "--results-dir", str(out), "--test-params", params_text(BASE, **params))
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in proc.stderr, proc.stderr
    assert not (out / "results.json").exists() or results(out)["tests"] == []

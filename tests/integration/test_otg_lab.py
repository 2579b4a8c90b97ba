"""--trafficgen otg on the local lab, against `vsperf otg-server` (vsgen speaking the Open Traffic
Generator API): real HTTP, real snappi, real frames through real switches, next to a direct vsgen
run of the same test. Ixia hardware was not available: this is the otg backend's only real test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import lab_skip_reason
from otg_server_proc import otg_server_process

from vsperf.config.loader import load_settings
from vsperf.host import netlink as netdev
from vsperf.host.cpus import sender_cpus

pytest.importorskip("snappi", reason="pip install 'vsperf[otg]'")

ROOT = Path(__file__).resolve().parents[2]
PARAMS = {
    "TRAFFICGEN_DURATION": "1",
    "TRAFFICGEN_PKT_SIZES": "(64,)",
    "TRAFFICGEN_RESIDUAL_WAIT_S": "0.3",
    # A ceiling (30 kfps aggregate) the lab's switches and the netns VNF forward without loss even
    # while other work shares the two CPUs (at 0.3 % a direct vsgen pvp run here lost frames).
    "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT": "0.1",
    "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": "0.05",
    "TRAFFICGEN_B2B_GRANULARITY_FRAMES": "200",  # vsgen bursts at Mfps: OVS absorbs a few thousand
}
# Both generators reach the ceiling without loss: their throughput must agree within 5 %. A
# back-to-back burst depends on the switch's buffer and on when the two CPUs shared with other
# work let it drain: successive direct vsgen runs here differ by up to ~25 %, so the two agree
# within a factor of 1.6.
THROUGHPUT_REL = 0.05
B2B_FACTOR = 1.6

pytestmark = pytest.mark.root


@pytest.fixture(autouse=True)
def _lab() -> None:
    reason = lab_skip_reason()
    if reason:
        pytest.skip(reason)


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAFFIC", "VSWITCH", "VNF", "GUEST"))}
    env["PYTHONPATH"] = str(ROOT)
    return env


def transmit_cpus() -> str:
    """The CPUs a direct vsgen run transmits from (the server gets the same: a fair comparison)."""
    return ",".join(str(c) for c in sender_cpus(load_settings(), "VSGEN_CPUS", sorted(os.sched_getaffinity(0))))


@pytest.fixture(scope="module")
def otg_server() -> Iterator[str]:
    """`vsperf otg-server` on a free loopback port, serving the lab's namespaces; stopped by PID."""
    argv = [sys.executable, "-m", "vsperf", "otg-server", "--listen", "127.0.0.1:0", "--netns-prefix", "vsp",
            "--residual-wait", "0.3", "--cpus", transmit_cpus()]
    with otg_server_process(argv, "http://127.0.0.1:", environment()) as url:
        yield url


def vsperf_run(out: Path, test: str, trafficgen: str, *extra: str, location: str = "") -> dict[str, Any]:
    settings = {**PARAMS, "TRAFFICGEN_OTG_LOCATION": location} if location else PARAMS
    params = ";".join(f"{k}={v}" for k, v in settings.items())
    args = [sys.executable, "-m", "vsperf", test, "--vswitch", "ovs", "--trafficgen", trafficgen, "--results-dir",
            str(out), "--test-params", params, *extra]
    proc = subprocess.run(args, capture_output=True, text=True, env=environment(), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data: dict[str, Any] = json.loads((out / "results.json").read_text())
    assert data["tests"][0]["status"] == "passed", data["tests"][0]["error"]
    tag = f"vsp{data['run_id']}"
    assert [n for n in netdev.list_netns() if n.startswith(tag)] == []
    return data


def metrics(data: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = data["tests"][0]["results"][0]["metrics"]
    return result


@pytest.mark.parametrize(("test", "extra"), [("phy2phy_tput", ()), ("pvp_tput", ("--vnf", "netns"))])
def test_throughput_through_otg_matches_vsgen(tmp_path: Path, otg_server: str, test: str,
                                              extra: tuple[str, ...]) -> None:
    direct = vsperf_run(tmp_path / "vsgen", test, "vsgen", *extra)
    otg = vsperf_run(tmp_path / "otg", test, "otg", *extra, location=otg_server)
    want, got = metrics(direct), metrics(otg)
    assert got["throughput_rx_fps"] == pytest.approx(want["throughput_rx_fps"], rel=THROUGHPUT_REL)
    assert got["frame_loss_percent"] == 0.0
    assert 0 < got["min_latency_ns"] <= got["avg_latency_ns"] <= got["max_latency_ns"]
    trials = otg["tests"][0]["results"][0]["trials"]
    assert all(t["tx_frames"] > 0 and t["rx_frames"] == t["tx_frames"] for t in trials)
    component = {c["role"]: c for c in otg["tests"][0]["components"]}["trafficgen"]
    assert component["name"] == "otg" and component["version"].startswith("vsgen ")
    assert "snappi 1." in component["version"]
    rows = (tmp_path / "otg" / f"result_0_{test}_{otg['tests'][0]['deployment']}.csv").read_text().splitlines()
    header = rows[0].split(",")
    assert "trafficgen" in header and "trafficgen_version" in header
    assert all(",otg," in row and "snappi 1." in row for row in rows[1:])
    report = " ".join((tmp_path / "otg" / "report.rst").read_text().split())  # long lines wrap
    assert f"Traffic Generator: otg, Version: {component['version']}" in report


def test_back2back_through_otg_matches_vsgen(tmp_path: Path, otg_server: str) -> None:
    direct = metrics(vsperf_run(tmp_path / "vsgen", "back2back", "vsgen"))
    otg = metrics(vsperf_run(tmp_path / "otg", "back2back", "otg", location=otg_server))
    assert otg["b2b_frames"] > 0
    assert direct["b2b_frames"] / B2B_FACTOR <= otg["b2b_frames"] <= direct["b2b_frames"] * B2B_FACTOR


def test_an_unreachable_controller_stops_the_run_before_anything_is_deployed(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "vsperf", "phy2phy_tput", "--trafficgen", "Ixia", "--results-dir",
         str(tmp_path / "run"), "--test-params", "TRAFFICGEN_OTG_LOCATION=http://127.0.0.1:9"],
        capture_output=True, text=True, env=environment(), timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "cannot connect" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "run" / "results.json").exists()


def test_a_frame_mix_through_otg_and_what_otg_cannot_measure(tmp_path: Path, otg_server: str) -> None:
    """The mix as OTG weight pairs (the server sends it through vsgen); its results say what OTG's
    metrics lack: a latency distribution, frame sizes at the receiver, a warm start without a pause."""
    out = tmp_path / "otg"
    settings = {**PARAMS, "TRAFFICGEN_OTG_LOCATION": otg_server, "HISTORY": "False",
                "TRAFFICGEN_PKT_SIZES": "('IMIX',)", "TRAFFIC": "{'latency_histogram': {'enabled': True}}",
                "TRAFFICGEN_WARM_START": "{'mode': 'lead-in', 'duration_s': 0.1}"}
    args = [sys.executable, "-m", "vsperf", "phy2phy_tput", "--vswitch", "ovs", "--trafficgen", "otg",
            "--results-dir", str(out), "--test-params", ";".join(f"{k}={v}" for k, v in settings.items())]
    proc = subprocess.run(args, capture_output=True, text=True, env=environment(), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    test = json.loads((out / "results.json").read_text())["tests"][0]
    assert test["status"] == "passed", test["error"]
    (result,) = test["results"]
    assert result["packet_size"] == "64:7,570:4,1518:1" and result["metrics"]["throughput_rx_fps"] > 0
    assert all(t["rx_frames"] == t["tx_frames"] > 0 and t["warm_frames"] > 0 for t in result["trials"])
    notes = " ".join(result["anomalies"])
    for said in ("no latency distribution", "frames received per size not measured", "as a separate lead-in"):
        assert said in notes

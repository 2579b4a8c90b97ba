"""`vsperf phy2phy_tput --trafficgen otg --testbed`: the generator ports are hardware port
locations (the testbed file's `trafficgen: {location: ...}`), served by `vsperf otg-server` (vsgen
speaking the Open Traffic Generator API) in host B's namespace on B's controller-link address,
as a chassis would be; the DUT's switch on sshd host A over SSH. Ixia hardware was not
available: this is the location cables' real test.

What it proves: vsperf never touches the generator's ports (locations are the controller's),
sends the testbed's locations to the controller, and the frames it asks for cross host A's
switch over the real cables.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from otg_server_proc import otg_server_process
from testbed_bed import Bed, assert_nothing_left, finish, open_bed, running, skip_missing_switch

pytest.importorskip("snappi", reason="pip install 'vsperf[otg]'")

pytestmark = pytest.mark.root

ROOT = Path(__file__).resolve().parents[2]
PARAMS = ("TRAFFICGEN_DURATION=1;TRAFFICGEN_PKT_SIZES=(64,);TRAFFICGEN_RESIDUAL_WAIT_S=0.3;"
          "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT=0.1;TRAFFICGEN_RFC2544_RESOLUTION_PERCENT=0.05")


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    with open_bed(tmp_path_factory.mktemp("testbed_otg"), "v9o", 114) as opened:
        yield opened


def locations(bed: Bed) -> list[str]:
    """The two generator ports as a chassis names them ("chassis;card;port": host B's address, card 1,
    ports 1 and 2): names the otg-server serves, not interface names."""
    return [f"{bed.ctl['b'][1]};1;{i + 1}" for i in range(2)]


def location_testbed(bed: Bed) -> Path:
    """The bed's testbed file with the generator ends given as locations, not interfaces."""
    text = bed.testbed_file().read_text()
    for (_, b_if), location in zip(bed.cables, locations(bed), strict=True):
        text = text.replace(f"trafficgen: {{interface: {b_if}}}", f'trafficgen: {{location: "{location}"}}')
    path = bed.dir / "lab_otg.yaml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def otg_server(bed: Bed) -> Iterator[str]:
    """`vsperf otg-server` in host B's namespace on B's controller-link address, serving B's cable
    ends under the chassis locations; stopped by its PID (`ip netns exec` execs it: same PID)."""
    ports = [f"--port={loc}={b_if}" for loc, (_, b_if) in zip(locations(bed), bed.cables, strict=True)]
    argv = ["ip", "netns", "exec", bed.ns["b"], sys.executable, "-m", "vsperf", "otg-server", "--listen",
            f"{bed.ctl['b'][1]}:0", "--allow-remote", *ports, "--residual-wait", "0.3"]
    with otg_server_process(argv, f"http://{bed.ctl['b'][1]}:", {**os.environ, "PYTHONPATH": str(ROOT)}) as url:
        yield url


def otg_args(bed: Bed, results: Path, vswitch: str, url: str, params: str = "") -> list[str]:
    return ["phy2phy_tput", "--vswitch", vswitch, "--trafficgen", "otg", "--testbed", str(location_testbed(bed)),
            "--test-params", f"{PARAMS};TRAFFICGEN_OTG_LOCATION={url}{params}", "--results-dir", str(results)]


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs"])
def test_phy2phy_tput_through_otg_on_hardware_port_locations(bed: Bed, otg_server: str, tmp_path: Path,
                                                             vswitch: str) -> None:
    skip_missing_switch(vswitch)
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "run"
    with running(bed.vsperf(*otg_args(bed, results, vswitch, otg_server), cwd=tmp_path)) as proc:
        _out, err = finish(proc, 600)
    assert proc.returncode == 0, err[-3000:]
    data = json.loads((results / "results.json").read_text())
    test = data["tests"][0]
    assert test["status"] == "passed" and data["simulated"] is False, test["error"]
    trials = test["results"][0]["trials"]
    assert trials and all(t["tx_frames"] > 0 and t["rx_frames"] > 0 for t in trials)
    assert test["results"][0]["metrics"]["throughput_rx_fps"] > 0
    component = {c["role"]: c for c in test["components"]}["trafficgen"]
    assert component["name"] == "otg" and component["version"].startswith("vsgen ")
    log = (results / "commands.log").read_text()
    # the DUT's switch on host A over SSH; host B's cable ends untouched by vsperf (the controller's ports)
    assert f"[{bed.dut}] ssh " in log
    assert not [line for line in log.splitlines() for _, b_if in bed.cables if re.search(rf"\b{b_if}\b", line)]
    assert_nothing_left(bed, data["run_id"], before, links_before)


def test_location_cables_are_refused_for_a_generator_that_needs_interfaces(bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "run"
    args = otg_args(bed, results, "linux-bridge", "http://127.0.0.1:9")
    args[args.index("otg")] = "vsgen"
    proc = subprocess.run([sys.executable, "-m", "vsperf", *args], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "traffic generator vsgen needs two DUT ports cabled to interfaces" in proc.stderr
    assert "--trafficgen otg" in proc.stderr
    assert bed.states() == before and bed.links() == links_before


def test_otg_ports_that_differ_from_the_cabled_locations_are_refused(bed: Bed, otg_server: str,
                                                                      tmp_path: Path) -> None:
    results = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "vsperf", *otg_args(bed, results, "linux-bridge", otg_server,
                                                   ";TRAFFICGEN_OTG_PORTS=['10.0.0.1;1;1','10.0.0.1;1;2']")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "differ from the testbed's cabled generator ports" in proc.stderr

"""VSPERF's `NICS` in step-driven tests on the local lab (root): upstream's af_packet vdev tests
from its own file, where `$NICS[0]["device"]` is the DUT's first port as the deployment made it
and `settings setValue TEST_PARAMS ''` gives the NICs back after the test's `NICS: []`; a test
that binds a NIC's PCI address to a DPDK driver is refused in one line, nothing deployed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_helpers import leftovers, params_text, results, vsperf
from conftest import lab_skip_reason

pytestmark = [pytest.mark.root, pytest.mark.skipif(
    not Path("/work/shared/vsperf-upstream/conf/integration").is_dir(),
    reason="upstream's integration files are not on this machine")]

UPSTREAM = Path("/work/shared/vsperf-upstream/conf/integration")
FILES = ("-f", str(UPSTREAM / "01_testcases.conf"), "-f", str(UPSTREAM / "01b_dpdk_regression_tests.conf"))
SHORT = params_text({"TRAFFICGEN_DURATION": "1", "TRAFFICGEN_PKT_SIZES": "(64,)"})


@pytest.fixture(autouse=True)
def _lab() -> None:
    reason = lab_skip_reason()
    if reason:
        pytest.skip(reason)


def test_upstream_af_packet_vdev_on_the_duts_first_nic(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = vsperf("--integration", *FILES, "ovsdpdk_vdev_add_af_packet_pmd", "ovsdpdk_vdev_del_af_packet_pmd",
                  "--trafficgen", "vsgen", "--results-dir", str(out), "--test-params", SHORT, timeout_s=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(out)
    assert [(t["name"], t["status"]) for t in data["tests"]] == [
        ("ovsdpdk_vdev_add_af_packet_pmd", "passed"), ("ovsdpdk_vdev_del_af_packet_pmd", "passed")]
    log = (out / "commands.log").read_text()
    for test in data["tests"]:
        steps = test["steps"]
        assert "options:dpdk-devargs=eth_af_packet0,iface=" in steps[4]["step"]
        assert json.loads(steps[5]["result"]) == ['dpdk-devargs="eth_af_packet0']  # the vdev port exists
        assert json.loads(steps[7]["result"]) == []  # without "Error attaching device"
    # $NICS[0]["device"]: the DUT end of the lab's first cable, in the switch's namespace
    [iface] = set(re.findall(r"eth_af_packet0,iface=([\w-]+)", log))
    assert iface.endswith("p0") and iface.startswith("vsp"), iface
    assert json.loads(data["tests"][1]["steps"][10]["result"]) == []  # deleted: gone from ovs-vsctl show
    assert leftovers(data["run_id"]) == []


def test_binding_a_nics_pci_address_needs_a_testbed(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = vsperf("--integration", *FILES, "ovsdpdk_hotplug_attach", "--trafficgen", "vsgen", "--results-dir",
                  str(out), "--test-params", SHORT)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.strip().splitlines() if "WARNING" not in line]
    assert lines == ['vsperf: error: test ovsdpdk_hotplug_attach: step 3 uses a NIC\'s PCI address ($NICS[n]["pci"]), '
                     "and the local lab's ports are veths: run it on a testbed whose DUT ports are PCI NICs"], \
        proc.stderr
    assert not out.exists()

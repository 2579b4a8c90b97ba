"""`--mode trafficgen-pause` on a testbed, end to end through the CLI (sshd host A = DUT, host B =
vsgen; see testbed_bed.py): the test's topology is deployed on host A, vsperf holds until SIGTERM
(naming the generator ports on host B), then sends the test's traffic from host B through host
A's switch, writes its results, and puts everything back."""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testbed_bed import Bed, assert_nothing_left, finish, open_bed, running

pytestmark = pytest.mark.root

SHORT = (";TRAFFICGEN_RESIDUAL_WAIT_S=0.3;TRAFFICGEN_RFC2544_MAX_RATE_PERCENT=0.3;"
         "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT=0.1")


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    with open_bed(tmp_path_factory.mktemp("testbed_pause"), "v9n", 120) as opened:
        yield opened


def test_trafficgen_pause_deploys_holds_then_sends(bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "pause"
    proc = bed.vsperf(*bed.args(results, "(64,)", params=SHORT), "--mode", "trafficgen-pause", cwd=tmp_path)
    with running(proc):
        seen = bed.held(proc)
        assert not (results / "results.json").exists() or not json.loads(
            (results / "results.json").read_text())["tests"][0]["results"]  # nothing sent yet
        proc.send_signal(signal.SIGTERM)
        _out, err = finish(proc, 300)
    assert proc.returncode == 0, seen + err
    data: dict[str, Any] = json.loads((results / "results.json").read_text())
    test = data["tests"][0]
    assert test["status"] == "passed", test.get("error")
    assert [r["packet_size"] for r in test["results"]] == [64]
    assert test["results"][0]["metrics"]["throughput_rx_fps"] > 0  # frames crossed host A's switch
    # the traffic went from host B, after the hold
    commands = (results / "commands.log").read_text()
    assert re.search(rf"\[{bed.gen}\] \[background\] ssh ", commands), commands
    assert_nothing_left(bed, str(data["run_id"]), before, links_before)

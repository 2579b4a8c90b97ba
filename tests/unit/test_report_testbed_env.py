"""The Test Environment's entry for the testbed a run took of its pool."""

from __future__ import annotations

from vsperf.report.testbed_env import chosen_testbed


def test_the_testbed_taken_of_a_pool() -> None:
    name, facts = chosen_testbed({
        "file": "/labs/rack2.yaml", "name": "rack2", "pool": ["/labs/rack1.yaml", "/labs/rack2.yaml"],
        "skipped": [{"file": "/labs/rack1.yaml", "reason": "busy", "why": "host dut is held by run ab"}],
        "waited_s": 12.25, "took_over": [{"host": "dut", "run_id": "cd34", "user": "bob", "controller": "ctl2"}]})
    assert name == "rack2"
    assert facts == ["File: /labs/rack2.yaml", "Pool: /labs/rack1.yaml, /labs/rack2.yaml",
                     "Skipped: /labs/rack1.yaml: busy (host dut is held by run ab)", "Waited: 12.2 s",
                     "Took over from run cd34 (bob@ctl2) on host dut: its lease had expired"]


def test_a_testbed_given_alone() -> None:
    assert chosen_testbed({"file": "lab.yaml", "name": "lab", "pool": ["lab.yaml"], "skipped": [],
                           "waited_s": 0.0, "took_over": []}) == ("lab", ["File: lab.yaml"])

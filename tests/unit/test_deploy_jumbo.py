"""VSPERF's jumbo frames (VSWITCH_JUMBO_FRAMES_ENABLED/_SIZE): read once into the plan, bounded,
one line and exit 2 for a bad value."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vsperf.backends import build_registries
from vsperf.catalog import load_entries
from vsperf.config import load_settings
from vsperf.deploy.deployment import mtu_for
from vsperf.deploy.jumbo import jumbo_mtu_bytes
from vsperf.errors import ConfigError
from vsperf.run.plan import plan_tests
from vsperf.traffic import Traffic

ROOT = Path(__file__).resolve().parents[2]


def test_disabled_or_unset_leaves_the_frames_mtu() -> None:
    assert jumbo_mtu_bytes({}) is None
    assert jumbo_mtu_bytes({"VSWITCH_JUMBO_FRAMES_ENABLED": False, "VSWITCH_JUMBO_FRAMES_SIZE": 9000}) is None
    assert jumbo_mtu_bytes({"VSWITCH_JUMBO_FRAMES_ENABLED": "False", "VSWITCH_JUMBO_FRAMES_SIZE": 9000}) is None


def test_enabled_as_upstream_writes_it_gives_the_size() -> None:
    # upstream's integration tests write 'True' (a string)
    assert jumbo_mtu_bytes({"VSWITCH_JUMBO_FRAMES_ENABLED": "True", "VSWITCH_JUMBO_FRAMES_SIZE": 9000}) == 9000
    assert jumbo_mtu_bytes({"VSWITCH_JUMBO_FRAMES_ENABLED": True, "VSWITCH_JUMBO_FRAMES_SIZE": 68}) == 68


@pytest.mark.parametrize(("enabled", "size", "named"), [
    (True, 9711, "VSWITCH_JUMBO_FRAMES_SIZE"), (True, 67, "VSWITCH_JUMBO_FRAMES_SIZE"),
    (True, "9000", "VSWITCH_JUMBO_FRAMES_SIZE"), (True, True, "VSWITCH_JUMBO_FRAMES_SIZE"),
    ("maybe", 9000, "VSWITCH_JUMBO_FRAMES_ENABLED"), (1, 9000, "VSWITCH_JUMBO_FRAMES_ENABLED")])
def test_bad_values_name_the_setting(enabled: object, size: object, named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        jumbo_mtu_bytes({"VSWITCH_JUMBO_FRAMES_ENABLED": enabled, "VSWITCH_JUMBO_FRAMES_SIZE": size})


def test_the_ports_mtu_is_the_jumbo_size_or_the_frames_if_larger() -> None:
    assert mtu_for(Traffic(frame_size_bytes=64), 9000) == 9000
    assert mtu_for(Traffic(frame_size_bytes=64), 2000) == 2000
    assert mtu_for(Traffic(frame_size_bytes=9018), 2000) == 9000  # the frames need more
    assert mtu_for(Traffic(frame_size_bytes=64), None) == 1500


def test_a_tests_parameters_reach_its_plan_and_deployment() -> None:
    steps = [["tools", "assert", "1 == 1"]]
    tests = load_entries([
        {"Name": "jumbo", "Deployment": "clean", "Description": "x", "vSwitch": "OvsDpdkVhost", "TestSteps": steps,
         "Parameters": {"VSWITCH_JUMBO_FRAMES_ENABLED": "True", "VSWITCH_JUMBO_FRAMES_SIZE": 9000}},
        {"Name": "plain", "Deployment": "clean", "Description": "x", "vSwitch": "OvsDpdkVhost", "TestSteps": steps},
    ], "test", integration=True)
    settings = load_settings(env={}, test_params="TRAFFICGEN=dummy")
    jumbo, plain = plan_tests(tests, settings, build_registries())
    assert (jumbo.jumbo_mtu_bytes, jumbo.deployment.jumbo_mtu_bytes) == (9000, 9000)
    assert (plain.jumbo_mtu_bytes, plain.deployment.jumbo_mtu_bytes) == (None, None)


@pytest.mark.parametrize(("params", "named"), [
    ("VSWITCH_JUMBO_FRAMES_SIZE=20000", "VSWITCH_JUMBO_FRAMES_SIZE"),
    ("VSWITCH_JUMBO_FRAMES_ENABLED='sometimes'", "VSWITCH_JUMBO_FRAMES_ENABLED")])
def test_a_bad_value_is_one_line_and_exit_2(params: str, named: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAFFIC", "VSWITCH", "VNF"))}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-m", "vsperf", "--trafficgen", "dummy", "--test-params", params,
                           "--list-settings"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and named in lines[0] and "Traceback" not in proc.stderr, proc.stderr

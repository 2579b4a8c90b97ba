"""Nothing is left behind: after an exception mid-trial, after the switch dies mid-trial, and
after vsperf itself is killed with SIGKILL (then the next run's sweep removes what it left).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import LabRun, lab_leftovers

from vsperf.errors import DeploymentError
from vsperf.executor import LocalExecutor
from vsperf.host.hosts import sweep_leftovers
from vsperf.host.journal import DEFAULT_STATE_ROOT
from vsperf.host.workdir import new_run_id
from vsperf.search.measurer import TrialResult
from vsperf.traffic import Traffic
from vsperf.trafficgen.trafgen import sender as sender_module

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(shutil.which("ovs-vswitchd") is None,
                       reason="Open vSwitch missing: apt-get install openvswitch-switch"),
]
REPO = Path(__file__).resolve().parents[2]


def test_exception_mid_trial_leaves_nothing(lab_run: LabRun, monkeypatch: pytest.MonkeyPatch) -> None:
    real = sender_module.run_senders

    def explode(senders: list[Any], planned_s: float, timeout_s: float, **_: Any) -> Any:
        time.sleep(0.3)  # trafgen is sending now
        assert all(s.pid for s in senders)
        raise RuntimeError("boom mid-trial")

    monkeypatch.setattr("vsperf.trafficgen.trafgen.backend.run_senders", explode)
    with pytest.raises(RuntimeError, match="boom"), lab_run.deployment("pvp", VSWITCH="ovs") as dep:
        gen = lab_run.generator()
        gen.start(dep.gen_ports)
        gen.trial(Traffic(), 2000, 5.0)
    assert real is sender_module.run_senders


def test_vswitchd_killed_mid_trial(lab_run: LabRun) -> None:
    traffic = Traffic()
    with pytest.raises(DeploymentError, match=r"ovs-vswitchd \(pid \d+\) died"), \
            lab_run.deployment("p2p", traffic, VSWITCH="ovs") as dep:
        pid = dep.dut_pids()["ovs-vswitchd"]
        gen = lab_run.generator()
        gen.start(dep.gen_ports)
        results: list[TrialResult] = []
        trial = threading.Thread(target=lambda: results.append(gen.trial(traffic, 4000, 1.5)))
        trial.start()
        time.sleep(0.5)
        os.kill(pid, signal.SIGKILL)
        trial.join(30)
        assert results and results[0].rx_frames < results[0].tx_frames  # frames were lost
        dep.check_alive()


def test_sigkilled_run_is_cleaned_up(lab_root: None, tmp_path: Path) -> None:
    run_id = new_run_id()
    work = Path(f"/tmp/vsperf-{run_id}")
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from vsperf.config.loader import load_settings
        from vsperf.executor import CommandLog
        from vsperf.deploy.build import DeploymentSpec, build_deployment
        from vsperf.backends import build_registries
        from vsperf.host.hosts import local_lab
        from vsperf.host.workdir import create_work_dir
        from vsperf.traffic import Traffic
        from vsperf.trafficgen.trafgen.backend import TrafgenTrafficGenerator

        work = create_work_dir("{run_id}")
        hosts = local_lab("{run_id}", CommandLog(None))
        settings = dict(load_settings(env={{}}))
        settings["VSWITCH"] = "ovs"
        spec = DeploymentSpec(name="pvp", vswitch="ovs", vnf="auto", settings=settings)
        dep = build_deployment(spec, build_registries(), hosts, Traffic())
        dep.deploy()
        gen = TrafgenTrafficGenerator(settings, hosts.trafficgen)
        gen.start(dep.gen_ports)
        print("READY", flush=True)
        gen.trial(Traffic(), 2000, 60)
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "READY"
        time.sleep(0.5)  # mid-trial: trafgen sending, OVS forwarding
        assert lab_leftovers(run_id, work), "the run should be alive and deployed"
        proc.kill()
        proc.wait(10)
        left_before = lab_leftovers(run_id, work)
        assert any(item.startswith("netns") for item in left_before)
        assert any("ovs-vswitchd" in item for item in left_before)
        removed = sweep_leftovers(DEFAULT_STATE_ROOT, {"local": LocalExecutor()})
        mine = [r for r in removed if r.startswith(f"run {run_id}:")]
        assert any("ovs-vswitchd" in r for r in mine) and any("netns" in r for r in mine), removed
        assert lab_leftovers(run_id, work) == []
        assert not (DEFAULT_STATE_ROOT / run_id).exists()
    finally:
        if proc.poll() is None:
            proc.kill()
        shutil.rmtree(work, ignore_errors=True)

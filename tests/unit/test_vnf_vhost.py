"""vsperf.vnf.vhost: a VNF's vhost-user ports, their sockets in a directory of the run on its host."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest
from dpdk_fixtures import RUN_ID, make_host
from fake_machine import FakeMachine

from vsperf.errors import DeploymentError
from vsperf.vnf.vhost import vhost_socket_path, vhost_user_ports


def test_sockets_are_short_paths_in_the_runs_vhost_directory(tmp_path: Path) -> None:
    machine = FakeMachine("dut")
    host = make_host(tmp_path, machine, name="dut")
    ports = vhost_user_ports(host, 2)
    assert [p.socket_path for p in ports] == [f"/tmp/vsperf-{RUN_ID}-vhost/v2p0.sock",
                                              f"/tmp/vsperf-{RUN_ID}-vhost/v2p1.sock"]
    assert [(p.name, p.kind, p.role) for p in ports] == [("vnf2.0", "vhostuser", "vnf"), ("vnf2.1", "vhostuser", "vnf")]
    assert host.journal is not None
    assert [(e.kind, e.name) for e in host.journal] == [("dir", f"/tmp/vsperf-{RUN_ID}-vhost")]
    assert vhost_socket_path(PurePosixPath("/d"), 0, 1) == PurePosixPath("/d/v0p1.sock")


def test_too_long_socket_paths_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host = make_host(tmp_path, FakeMachine("local"))
    monkeypatch.setattr(host, "work_dir", lambda name: PurePosixPath("/" + "d" * 100))
    with pytest.raises(DeploymentError, match=r"vhost-user socket path too long \(111 chars\)"):
        vhost_user_ports(host, 0)

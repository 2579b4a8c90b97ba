"""vsperf.vnf.testpmd_vhost: the testpmd guest of a PVP loop (ports, command line, lifecycle on its
host: the local lab or a testbed's DUT host)."""

from __future__ import annotations

from pathlib import Path

import pytest
from dpdk_fixtures import RUN_ID, dpdk_settings, make_host
from fake_machine import FakeMachine
from test_dpdk_testpmd import FORWARD_STATS, TELEMETRY

from vsperf.errors import DeploymentError, PrerequisiteError
from vsperf.vnf.testpmd_vhost import TestpmdVhostVnf

VHOST_DIR = f"/tmp/vsperf-{RUN_ID}-vhost"


def _vnf(tmp_path: Path, name: str = "local", **settings: object) -> tuple[TestpmdVhostVnf, FakeMachine]:
    machine = FakeMachine(name)
    host = make_host(tmp_path, machine, name=name)
    assert host.journal is not None
    machine.watch(host.journal)
    return TestpmdVhostVnf(dpdk_settings(**settings), host), machine


def test_registry_facts() -> None:
    assert TestpmdVhostVnf.NAME == "testpmd-vhost"
    assert TestpmdVhostVnf.PORT_KIND == "vhostuser"
    assert "QemuDpdkVhostUser" not in TestpmdVhostVnf.ALIASES  # a real VM now: vsperf.vnf.qemu


def test_create_returns_two_vhost_user_ports_in_a_directory_of_the_run(tmp_path: Path) -> None:
    vnf, machine = _vnf(tmp_path)
    ports = vnf.create(1, 1500, f"vsp{RUN_ID}s")
    assert [(p.name, p.kind, p.role) for p in ports] == [
        ("vnf1.0", "vhostuser", "vnf"), ("vnf1.1", "vhostuser", "vnf"),
    ]
    assert [p.socket_path for p in ports] == [f"{VHOST_DIR}/v1p{k}.sock" for k in (0, 1)]
    assert VHOST_DIR in machine.dirs and machine.recorded_before(f"mkdir -p -m 700 -- {VHOST_DIR}", "dir", VHOST_DIR)
    assert vnf.ports == ports


def test_no_ports_before_create(tmp_path: Path) -> None:
    assert TestpmdVhostVnf(dpdk_settings(), make_host(tmp_path)).ports == ()


def test_testpmd_is_the_vhost_user_server_by_default(tmp_path: Path) -> None:
    vnf, _machine = _vnf(tmp_path, GUEST_TESTPMD_CPU=1, GUEST_TESTPMD_FWD_MODE="macswap",
                         GUEST_TESTPMD_ARGS=["--burst=32"], TESTPMD_DESCRIPTORS=512)
    ports = vnf.create(0, 1500, None)
    cfg = vnf.testpmd_config()
    assert cfg.eal.file_prefix == "vspab12t0"
    assert cfg.eal.lcores == "0@1,1@1"
    assert cfg.eal.vdevs == tuple(
        f"net_virtio_user{k},path={ports[k].socket_path},server=1,queues=1,queue_size=512" for k in (0, 1)
    )
    assert (cfg.fwd_mode, cfg.extra_args, cfg.descriptors) == ("macswap", ("--burst=32",), 512)


def test_server_mode_makes_testpmd_a_client(tmp_path: Path) -> None:
    vnf, _machine = _vnf(tmp_path, VSWITCH_VHOSTUSER_SERVER_MODE=True)
    vnf.create(0, 1500, None)
    cfg = vnf.testpmd_config()
    assert all(",server=0," in vdev for vdev in cfg.eal.vdevs)


def test_lifecycle_guards(tmp_path: Path) -> None:
    vnf, machine = _vnf(tmp_path)
    with pytest.raises(DeploymentError, match="before create"):
        vnf.start()
    vnf.stop()  # nothing created: nothing to do
    assert machine.calls == []
    ports = vnf.create(0, 1500, None)
    machine.files[ports[0].socket_path] = ""  # as a testpmd server leaves it
    vnf.stop()
    assert ports[0].socket_path not in machine.files
    assert vnf.pids() == {}
    vnf.check_alive()


@pytest.mark.parametrize("name", ["local", "dut"])
def test_testpmd_runs_on_the_vnfs_host_until_stopped(tmp_path: Path, name: str) -> None:
    vnf, machine = _vnf(tmp_path, name)
    machine.outputs["dpdk-testpmd"] = "io packet forwarding - ports=2 - cores=1 - streams=2\n"
    machine.final_outputs["dpdk-testpmd"] = FORWARD_STATS
    machine.handlers["dpdk-telemetry.py"] = lambda argv: (0, TELEMETRY)
    ports = vnf.create(0, 1500, None)
    vnf.start()
    [(argv, netns)] = machine.spawned
    assert netns is None and argv[0] == "dpdk-testpmd"
    assert f"net_virtio_user1,path={ports[1].socket_path},server=1,queues=1,queue_size=1024" in argv
    assert machine.recorded_before("[spawn] dpdk-testpmd", "dir", "/var/run/dpdk/vspab12t0")
    journal = vnf.host.journal
    assert journal is not None
    assert [(e.host, e.name) for e in journal if e.kind == "process"] == [(name, "testpmd vnf0")]
    assert vnf.counters(0).rx_packets == 39439  # live, through telemetry on its host
    vnf.stop()
    assert vnf.final_counters[0].rx_packets == 150000 and vnf.pids() == {}
    assert [e for e in journal if e.kind == "process"] == []
    with pytest.raises(DeploymentError, match="not forwarding"):
        vnf.counters(0)


def test_prerequisites_are_the_hosts(tmp_path: Path) -> None:
    vnf, machine = _vnf(tmp_path, "dut")
    vnf.check_prerequisites()
    machine.absent.add("dpdk-testpmd")
    with pytest.raises(PrerequisiteError, match=r"^host dut: dpdk-testpmd is missing: apt-get install dpdk-dev there$"):
        vnf.check_prerequisites()


def test_details_for_the_report(tmp_path: Path) -> None:
    details = TestpmdVhostVnf(dpdk_settings(), make_host(tmp_path)).details()
    assert details["forwarding_mode"] == "io"
    assert details["vhost_user_sockets"] == "testpmd (dpdkvhostuserclient)"

"""vsperf.vnf.testpmd_vhost: the testpmd guest of a PVP loop (ports, command line, lifecycle)."""

from __future__ import annotations

from pathlib import Path

import pytest
from dpdk_fixtures import dpdk_settings, make_ctx, make_lab

from vsperf.errors import DeploymentError
from vsperf.vnf.testpmd_vhost import TestpmdVhostVnf


def test_registry_facts() -> None:
    assert TestpmdVhostVnf.NAME == "testpmd-vhost"
    assert TestpmdVhostVnf.PORT_KIND == "vhostuser"
    assert "QemuDpdkVhostUser" not in TestpmdVhostVnf.ALIASES  # a real VM now: vsperf.vnf.qemu


def test_create_returns_two_vhost_user_ports_with_short_sockets(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    vnf = TestpmdVhostVnf(dpdk_settings(), ctx)
    ports = vnf.create(make_lab(ctx, tmp_path), 1, 1500)
    assert [(p.name, p.kind, p.role) for p in ports] == [
        ("vnf1.0", "vhostuser", "vnf"), ("vnf1.1", "vhostuser", "vnf"),
    ]
    assert [p.socket_path for p in ports] == [str(tmp_path / "vhost-ab12" / f"v1p{k}.sock") for k in (0, 1)]
    assert (tmp_path / "vhost-ab12").is_dir()
    assert vnf.ports == ports


def test_no_ports_before_create(tmp_path: Path) -> None:
    assert TestpmdVhostVnf(dpdk_settings(), make_ctx(tmp_path)).ports == ()


def test_testpmd_is_the_vhost_user_server_by_default(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    vnf = TestpmdVhostVnf(dpdk_settings(GUEST_TESTPMD_CPU=1, GUEST_TESTPMD_FWD_MODE="macswap",
                                        GUEST_TESTPMD_ARGS=["--burst=32"], TESTPMD_DESCRIPTORS=512), ctx)
    ports = vnf.create(make_lab(ctx, tmp_path), 0, 1500)
    cfg = vnf.testpmd_config()
    assert cfg.eal.file_prefix == "vspab12t0"
    assert cfg.eal.lcores == "0@1,1@1"
    assert cfg.eal.vdevs == tuple(
        f"net_virtio_user{k},path={ports[k].socket_path},server=1,queues=1,queue_size=512" for k in (0, 1)
    )
    assert (cfg.fwd_mode, cfg.extra_args, cfg.descriptors) == ("macswap", ("--burst=32",), 512)


def test_server_mode_makes_testpmd_a_client(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    vnf = TestpmdVhostVnf(dpdk_settings(VSWITCH_VHOSTUSER_SERVER_MODE=True), ctx)
    vnf.create(make_lab(ctx, tmp_path), 0, 1500)
    cfg = vnf.testpmd_config()
    assert all(",server=0," in vdev for vdev in cfg.eal.vdevs)


def test_lifecycle_guards(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    vnf = TestpmdVhostVnf(dpdk_settings(), ctx)
    with pytest.raises(DeploymentError, match="before create"):
        vnf.start()
    vnf.stop()  # nothing created: nothing to do
    ports = vnf.create(make_lab(ctx, tmp_path), 0, 1500)
    Path(ports[0].socket_path).touch()  # as a testpmd server leaves it
    vnf.stop()
    assert not Path(ports[0].socket_path).exists()
    assert vnf.pids() == {}
    vnf.check_alive()


def test_too_long_socket_paths_are_refused(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    ctx = make_ctx(deep)
    with pytest.raises(DeploymentError, match="socket path too long"):
        TestpmdVhostVnf(dpdk_settings(), ctx).create(make_lab(ctx, tmp_path), 0, 1500)


def test_details_for_the_report(tmp_path: Path) -> None:
    details = TestpmdVhostVnf(dpdk_settings(), make_ctx(tmp_path)).details()
    assert details["forwarding_mode"] == "io"
    assert details["vhost_user_sockets"] == "testpmd (dpdkvhostuserclient)"

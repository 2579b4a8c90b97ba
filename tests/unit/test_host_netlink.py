"""Reading this machine's interfaces and namespaces through netlink, on the loopback (no root
needed; the same in a namespace: tests/integration/test_host_network_lab.py)."""

from __future__ import annotations

import os
import socket

import pytest

from vsperf.errors import DeploymentError
from vsperf.executor import NETNS_DIR
from vsperf.host.netlink import (
    LinkStatsReader,
    ipr,
    kernel_release,
    link_counters,
    link_mac,
    list_netns,
    netns_exists,
    netns_pids,
    open_ipr,
)

MISSING_NS = "vspnone0s"


def _send_to_loopback(frames: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
        rx.bind(("127.0.0.1", 0))
        for _ in range(frames):
            tx.sendto(b"x", rx.getsockname())


def test_counters_of_an_interface_count_its_frames() -> None:
    before = link_counters("lo", None)
    _send_to_loopback(50)
    after = link_counters("lo", None)
    assert after.rx_packets - before.rx_packets >= 50 and after.tx_packets - before.tx_packets >= 50


def test_a_reader_keeps_its_socket_and_reads_the_same_counters() -> None:
    reader = LinkStatsReader("lo", None)
    try:
        first = reader.read()
        _send_to_loopback(20)
        second = reader.read()
        assert reader.ifname == "lo" and second.rx_packets - first.rx_packets >= 20
    finally:
        reader.close()


def test_unknown_interfaces_and_namespaces_are_deployment_errors() -> None:
    with pytest.raises(DeploymentError, match=r"^interface vspnone0g0 not found$"):
        link_counters("vspnone0g0", None)
    with pytest.raises(DeploymentError, match=r"^interface vspnone0g0 not found$"):
        LinkStatsReader("vspnone0g0", None)
    with pytest.raises(DeploymentError, match=rf"^network namespace {MISSING_NS} is not available: "):
        open_ipr(MISSING_NS)
    with pytest.raises(DeploymentError, match=rf"^network namespace {MISSING_NS} is not available: "):
        link_mac("lo", MISSING_NS)


def test_the_loopbacks_mac_and_a_socket_that_is_closed_after_use() -> None:
    assert link_mac("lo", None) == "00:00:00:00:00:00"
    with ipr(None) as sock:
        assert sock.link_lookup(ifname="lo")
    with pytest.raises(OSError):  # closed on the way out
        sock.link_lookup(ifname="lo")


def test_named_namespaces_are_the_files_of_the_netns_directory() -> None:
    names = list_netns()
    on_disk = sorted(os.listdir(NETNS_DIR)) if os.path.isdir(NETNS_DIR) else []
    assert names == on_disk
    assert all(netns_exists(n) for n in names) and not netns_exists(MISSING_NS)
    assert netns_pids(MISSING_NS) == []


def test_kernel_release_is_the_running_kernels() -> None:
    with open("/proc/sys/kernel/osrelease", encoding="ascii") as fh:
        assert kernel_release() == fh.read().strip()

"""A testbed's existing interfaces: read with `ip -j` through the host's executor, refused when
vsperf must not use them, brought up for a test and put back exactly as they were."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from fake_host import RemoteMachine
from recorded_host import RecordedHost

from vsperf.errors import DeploymentError
from vsperf.host.ports import (
    PortError,
    PortState,
    check_cable,
    check_port,
    interface_mac,
    prepare_port,
    read_port,
    restore_port,
)

SHOW = ("ip", "-j", "-d", "addr", "show", "dev", "ens1f0")


def _link(**fields: Any) -> dict[str, Any]:
    link: dict[str, Any] = {"ifname": "ens1f0", "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "mtu": 1500,
                            "addr_info": []}
    link.update(fields)
    return link


def _host(**fields: Any) -> RemoteMachine:
    dut = RemoteMachine("dut", answers={SHOW: json.dumps([_link(**fields)])})
    dut.links["ens1f0"] = None
    return dut


def test_the_state_vsperf_may_change_is_read() -> None:
    dut = _host(mtu=9000, flags=["BROADCAST", "UP"], master="br0", xdp={"mode": 2}, addr_info=[
        {"family": "inet", "local": "198.18.0.1", "prefixlen": 30},
        {"family": "inet6", "local": "2001:db8::1", "prefixlen": 64, "scope": "global"},
        {"family": "inet6", "local": "fe80::1", "prefixlen": 64, "scope": "link"}])  # the kernel's own: not kept
    state = read_port(dut, "ens1f0")
    assert state == PortState("ens1f0", admin_up=True, carrier=False, mtu_bytes=9000,
                              addresses=("198.18.0.1/30", "2001:db8::1/64"), xdp_attached=True, master="br0")
    assert PortState.from_dict(json.loads(json.dumps(state.as_dict()))) == state  # through the journal
    assert dut.commands == [(SHOW, None)]


@pytest.mark.parametrize("listed, shown", [([{"ifname": "lo"}, {"ifname": "eno1"}, {"ifname": "ens9"}], "eno1, ens9"),
                                           ([{"ifname": "lo"}], "none")])
def test_a_missing_port_names_the_interfaces_the_host_has(listed: list[dict[str, str]], shown: str) -> None:
    dut = RemoteMachine("dut", answers={("ip", "-j", "link", "show"): json.dumps(listed)})
    with pytest.raises(PortError) as info:
        read_port(dut, "ens1f0")
    assert str(info.value) == (f"host dut: no interface 'ens1f0' (interfaces there: {shown}); "
                               "fix the testbed file's ports")
    empty = RemoteMachine("dut", answers={SHOW: "[]", ("ip", "-j", "link", "show"): json.dumps(listed)})
    with pytest.raises(PortError, match="no interface 'ens1f0'"):
        read_port(empty, "ens1f0")


def test_ports_in_use_are_refused_with_the_fix() -> None:
    with pytest.raises(PortError) as info:
        check_port(_host(master="ovs-system"), "ens1f0")
    assert str(info.value) == "host dut: interface ens1f0 is attached to ovs-system; release it or pick another port"
    with pytest.raises(PortError) as info:
        check_port(_host(xdp={"mode": 1}), "ens1f0")
    assert str(info.value) == ("host dut: interface ens1f0 has an XDP program attached by someone else; detach it "
                               "first (ip link set dev ens1f0 xdp off)")
    assert check_port(_host(), "ens1f0").carrier


def test_a_cable_whose_ends_are_up_without_link_is_refused() -> None:
    up = PortState("ens1f0", True, True, 1500, (), False, None)
    dark = PortState("ens2f0", True, False, 1500, (), False, None)
    check_cable("dut", up, "gen", up)
    check_cable("dut", up, "gen", PortState("ens2f0", False, False, 1500, (), False, None))  # down: not known yet
    with pytest.raises(PortError) as info:
        check_cable("dut", up, "gen", dark)
    assert str(info.value) == ("host dut: interface ens1f0 and host gen: interface ens2f0 are up but have no link; "
                               "check the cable and the testbed file")


def test_a_port_is_brought_up_with_the_tests_mtu() -> None:
    dut = _host()
    state = read_port(dut, "ens1f0")
    prepare_port(dut, state, mtu_bytes=9000)
    prepare_port(dut, state, mtu_bytes=1500)  # its own: not set again
    prepare_port(dut, state)
    assert dut.ran("ip", "link") == [("ip", "link", "set", "dev", "ens1f0", "mtu", "9000", "up")] + [
        ("ip", "link", "set", "dev", "ens1f0", "up")] * 2


def test_restore_puts_back_exactly_what_was_there(caplog: pytest.LogCaptureFixture) -> None:
    original = PortState("ens1f0", admin_up=False, carrier=False, mtu_bytes=1500, addresses=("10.0.0.1/24",),
                         xdp_attached=False, master=None)
    dut = _host(mtu=9000, xdp={"mode": 1}, addr_info=[{"family": "inet", "local": "198.18.0.1", "prefixlen": 30}])
    with caplog.at_level(logging.INFO):
        done = restore_port(dut, original)
    assert done == ["XDP program detached", "address 198.18.0.1/30 removed", "address 10.0.0.1/24 put back",
                    "MTU 9000 -> 1500", "set down"]
    assert dut.ran("ip", "link", "set") + dut.ran("ip", "addr") == [
        ("ip", "link", "set", "dev", "ens1f0", "xdp", "off"),
        ("ip", "link", "set", "dev", "ens1f0", "mtu", "1500"),
        ("ip", "link", "set", "dev", "ens1f0", "down"),
        ("ip", "addr", "del", "198.18.0.1/30", "dev", "ens1f0"),
        ("ip", "addr", "add", "10.0.0.1/24", "dev", "ens1f0")]
    assert [r.getMessage() for r in caplog.records] == [f"host dut: ens1f0: {what}" for what in done]
    same = _host()
    assert restore_port(same, read_port(same, "ens1f0")) == [] and same.ran("ip", "link", "set") == []


def test_the_mac_of_an_interface() -> None:
    show = ("ip", "-j", "link", "show", "dev", "ens1f0")
    dut = RecordedHost("dut", {show: [json.dumps([{"ifname": "ens1f0", "address": "3c:fd:fe:00:00:01"}])]})
    assert interface_mac(dut, "ens1f0") == "3c:fd:fe:00:00:01" and dut.commands == [(show, None)]
    bare = RecordedHost("dut", {show: [json.dumps([{"ifname": "ens1f0"}])]})
    with pytest.raises(DeploymentError, match=r"^host dut: no MAC address for interface ens1f0$"):
        interface_mac(bare, "ens1f0")

"""The overlay deployments' plan: which tunnel a test builds, and why one cannot be built (one line
each, before anything is deployed)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from vsperf.config import load_settings
from vsperf.deploy.overlay import overlay_overhead, tunnel_of, tunnel_problem
from vsperf.traffic import Traffic
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch
from vsperf.vswitch.none import NoVSwitch
from vsperf.vswitch.ovs import OvsVSwitch


def test_which_tunnel() -> None:
    settings = load_settings(env={})
    assert tunnel_of("p2p", None, None, settings) is None
    tunnel = tunnel_of("op2p", "gre", "decapsulation", settings)
    assert tunnel is not None
    assert (tunnel.kind, tunnel.operation, tunnel.key, tunnel.remote, tunnel.local_ip) == (
        "gre", "decapsulation", 99, "198.18.240.10", "198.18.240.1")
    assert tunnel_of("op2p", None, None, settings).kind == "vxlan"  # type: ignore[union-attr]  # TUNNEL_TYPE
    # --test-params TUNNEL_TYPE overrides the test's Tunnel Type (VSPERF's rule); a conf file does not
    cli = load_settings(env={}, test_params="TUNNEL_TYPE=geneve")
    assert tunnel_of("op2p", "gre", "encapsulation", cli).kind == "geneve"  # type: ignore[union-attr]
    assert tunnel_of("ptunp", None, None, settings).operation == "both"  # type: ignore[union-attr]
    assert overlay_overhead(tunnel) == 42 and overlay_overhead(None) == 0


def test_why_a_tunnel_cannot_be_built() -> None:
    settings = load_settings(env={})
    tunnel = tunnel_of("op2p", "vxlan", "decapsulation", settings)
    assert tunnel is not None
    one_way = Traffic(bidir=False)
    assert tunnel_problem(tunnel, one_way, lab=True, switch=OvsVSwitch, tunnel_frames=True) == ""
    assert tunnel_problem(replace(tunnel, remote="192.168.240.10"), one_way, lab=True, switch=OvsVSwitch,
                          tunnel_frames=True) == (
        "VTEP_IP2 192.168.240.10 is outside 198.18.0.0/15: the local lab sends only there; set the tunnel endpoints "
        "inside it (defaults: conf/13_integration.yaml) or use a testbed")
    assert tunnel_problem(replace(tunnel, remote="192.168.240.10"), one_way, lab=False, switch=OvsVSwitch,
                          tunnel_frames=True) == ""
    assert tunnel_problem(tunnel, one_way, lab=True, switch=NoVSwitch, tunnel_frames=True) == (
        "Tunnel Type vxlan: vswitch none cannot terminate it (it has no tunnels); use --vswitch ovs or ovs-dpdk")
    assert tunnel_problem(tunnel, one_way, lab=True, switch=LinuxBridgeVSwitch, tunnel_frames=False) == (
        "Tunnel Type vxlan, Tunnel Operation decapsulation: needs a generator that builds tunnel frames: "
        "--trafficgen vsgen or otg")
    assert "set TRAFFIC bidir to False" in tunnel_problem(tunnel, Traffic(bidir=True), lab=True, switch=OvsVSwitch,
                                                          tunnel_frames=True)
    ptunp = tunnel_of("ptunp", "gre", None, settings)
    assert ptunp is not None and "ptunp joins VXLAN tunnels only" in tunnel_problem(
        ptunp, one_way, lab=True, switch=OvsVSwitch, tunnel_frames=True)
    bad = replace(ptunp, kind="vxlan", mod_ips=("10.0.0.1/24", "198.18.220.1/24"))
    assert tunnel_problem(bad, one_way, lab=True, switch=OvsVSwitch, tunnel_frames=True).startswith(
        "TUNNEL_MODIFY_BRIDGE_IP1 10.0.0.1 is outside 198.18.0.0/15")


@pytest.mark.parametrize("vni", ["x", "16777216"])
def test_a_vni_that_is_no_tunnel_key(vni: str) -> None:
    with pytest.raises(Exception, match=r"a tunnel key is a number 0\.\.16777215"):
        tunnel_of("op2p", None, "encapsulation", load_settings(env={}, test_params=f"VXLAN_VNI='{vni}'"))

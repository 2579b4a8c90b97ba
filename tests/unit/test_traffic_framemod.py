"""VSPERF's frame modifications as OpenFlow actions, per egress generator port."""

from __future__ import annotations

import pytest

from vsperf.traffic.framemod import FRAME_MODIFICATIONS, modification


def test_vsperfs_actions_with_lab_addresses() -> None:
    assert modification("ttl", "phy1").actions == ("mod_nw_ttl:251",)
    assert modification("ttl", "phy0").actions == ("mod_nw_ttl:241",)
    assert modification("dscp", "phy0").actions == ("mod_nw_tos:184",)
    assert modification("mpls", "phy0").actions == ("push_mpls:0x8847",)
    assert modification("mac", "phy1").actions == ("mod_dl_src:22:22:22:22:22:22",)
    assert modification("ip_addr", "phy1").actions == ("mod_nw_src:198.18.10.10", "mod_nw_dst:198.19.20.20")
    assert modification("ip_port", "phy1").match == (("dl_type", "0x0800"), ("nw_proto", "17"))
    assert modification("ttl", "phy1").match == (("dl_type", "0x0800"),) and modification("mac", "phy1").match == ()
    assert FRAME_MODIFICATIONS == ("vlan", "mpls", "mac", "dscp", "ttl", "ip_addr", "ip_port")
    with pytest.raises(ValueError, match="no frame modification 'vlan'"):
        modification("vlan", "phy1")

"""The netns VNF's loopback choice (VSPERF's GUEST_LOOPBACK)."""

import pytest
from settings_util import make_settings

from vsperf.errors import ConfigError
from vsperf.vnf.netns import loopback_for


def test_list_repeats_over_vnfs() -> None:
    settings = make_settings(GUEST_LOOPBACK=["linux_bridge", "testpmd"])
    assert [loopback_for(settings, i) for i in range(4)] == ["linux_bridge", "testpmd"] * 2


def test_default_and_plain_string() -> None:
    assert loopback_for(make_settings(), 3) == "linux_bridge"
    assert loopback_for(make_settings(GUEST_LOOPBACK=["testpmd"]), 1) == "testpmd"


@pytest.mark.parametrize("value", ["l2fwd", "buildin", "clean"])
def test_vm_loopbacks_are_not_available(value: str) -> None:
    with pytest.raises(ConfigError, match="not available with the netns VNF"):
        loopback_for(make_settings(GUEST_LOOPBACK=[value]), 0)


def test_unknown_loopback() -> None:
    with pytest.raises(ConfigError, match=r"GUEST_LOOPBACK.*expected one of"):
        make_settings(GUEST_LOOPBACK=["vpp"])

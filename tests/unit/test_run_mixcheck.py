"""Frame mixes refused in one line when a traffic type or the generator cannot send them."""

from __future__ import annotations

import pytest

from vsperf.backends import build_registries
from vsperf.catalog import Catalog
from vsperf.config import load_settings
from vsperf.errors import ConfigError
from vsperf.run.plan import plan_tests


def plan(test: str, params: str) -> object:
    settings = load_settings(env={}, test_params=params)
    return plan_tests([Catalog.load().get(test)], settings, build_registries())[0]


def test_mixes_plan_as_frame_sizes() -> None:
    pt = plan("phy2phy_tput", "TRAFFICGEN=dummy;TRAFFICGEN_PKT_SIZES=(64,'aaaaaaaddddg','IMIX')")
    assert pt.sizes == (64, "aaaaaaaddddg", "64:7,570:4,1518:1")  # type: ignore[attr-defined]
    assert pt.largest.largest_frame_bytes == 1518  # type: ignore[attr-defined]
    vsperf_imix = plan("phy2phy_tput", "TRAFFICGEN=dummy;TRAFFIC={'imix': {'enabled': True}}")
    assert vsperf_imix.sizes == ("aaaaaaaddddg",)  # type: ignore[attr-defined]
    by_sizes = plan("phy2phy_tput", "TRAFFICGEN=dummy;TRAFFIC={'imix': {'enabled': True, 'type': 'sizes'}}")
    assert by_sizes.sizes == ("64:7,570:4,1518:1",)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("test", "message"), [
    ("phy2phy_caching", "rfc2889_caching cannot send the frame mix aaaaaaaddddg (its address frames are one frame "
                        "per MAC address)"),
    ("host_stack_udp_bw", "iperf3_udp cannot send the frame mix aaaaaaaddddg (it sends the messages of iperf3"),
])
def test_traffic_types_that_cannot_send_a_mix(test: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        plan(test, "TRAFFICGEN=dummy;TRAFFIC={'imix': {'enabled': True}}")


def test_a_generator_that_cannot_send_a_mix(monkeypatch: pytest.MonkeyPatch) -> None:
    from vsperf.trafficgen.dummy.backend import DummyTrafficGenerator

    monkeypatch.setattr(DummyTrafficGenerator, "FRAME_MIX", False)
    with pytest.raises(ConfigError, match="traffic generator dummy cannot send the frame mix 64:7,570:4,1518:1; use"):
        plan("phy2phy_tput", "TRAFFICGEN=dummy;TRAFFICGEN_PKT_SIZES=(64,'IMIX')")


def test_trex_sends_a_mix() -> None:
    """TRex sends a mix as one stream per size (vsperf.trafficgen.trex.streams): planned as a frame size."""
    assert plan("phy2phy_tput", "TRAFFICGEN=trex;TRAFFICGEN_PKT_SIZES=(64,'IMIX')").sizes == (  # type: ignore[attr-defined]
        64, "64:7,570:4,1518:1")

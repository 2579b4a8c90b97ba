"""VSPERF's Ixia settings in a user's conf file: TRAFFICGEN_IXIA_HOST, _CARD, _PORT1 and _PORT2 are
the otg generator's two port locations when TRAFFICGEN_OTG_PORTS is empty; TRAFFICGEN_IXNET_MACHINE
(IxNetwork's Tcl server) is ignored with a hint; VSPERF's other Ixia settings are ignored."""

from __future__ import annotations

import logging
import textwrap
from pathlib import Path

import pytest

from vsperf.config import Settings, load_settings
from vsperf.errors import ConfigError
from vsperf.host.host import Host
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.otg.backend import OtgTrafficGenerator, configured_ports, port_locations
from vsperf.trafficgen.otg.server import check_listen_address

UPSTREAM_CUSTOM = Path(__file__).resolve().parents[3] / "shared" / "vsperf-upstream" / "conf" / "10_custom.conf"
LAB_PORTS = (GenPort("n0", "g0", "02:00:00:00:00:01", "198.18.0.1"),
             GenPort("n1", "g1", "02:00:00:00:00:02", "198.18.1.1"))
IXIA_CONF = textwrap.dedent("""\
    # VSPERF's 10_custom.conf, Ixia/IxNet section
    TRAFFICGEN = 'IxNet'
    TRAFFICGEN_IXIA_CARD = '1'
    TRAFFICGEN_IXIA_PORT1 = '3'
    TRAFFICGEN_IXIA_PORT2 = '4'
    TRAFFICGEN_IXIA_ROOT_DIR = '/opt/ixos'
    TRAFFICGEN_IXNET_LIB_PATH = '/opt/ixnet/IxTclNetwork'
    TRAFFICGEN_IXIA_HOST = '10.10.0.5'      # quad dotted ip address
    TRAFFICGEN_IXNET_MACHINE = '10.10.0.6'  # quad dotted ip address
    TRAFFICGEN_IXNET_PORT = '8009'
    TRAFFICGEN_IXNET_USER = 'vsperf'
    TRAFFICGEN_IXNET_TESTER_RESULT_DIR = ''
    TRAFFICGEN_IXNET_DUT_RESULT_DIR = ''
    """)


def conf(tmp_path: Path, text: str, test_params: str | None = None) -> Settings:
    path = tmp_path / "10_custom.conf"
    path.write_text(text)
    return load_settings(conf_file=path, env={}, test_params=test_params)


def test_vsperfs_ixia_ports_are_the_otg_port_locations(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        settings = conf(tmp_path, IXIA_CONF)
    assert settings["TRAFFICGEN"] == "otg"
    assert configured_ports(settings) == ["10.10.0.5;1;3", "10.10.0.5;1;4"]
    # the chassis ports, not the lab's veths
    assert port_locations(settings, LAB_PORTS) == ["10.10.0.5;1;3", "10.10.0.5;1;4"]
    warnings = [r.getMessage() for r in caplog.records]
    ignored = next(w for w in warnings if "ignored" in w)
    assert "TRAFFICGEN_IXIA_* (1)" in ignored and "TRAFFICGEN_IXNET_* (6)" in ignored
    hint = next(w for w in warnings if "Tcl server" in w)
    assert "TRAFFICGEN_OTG_LOCATION=https://10.10.0.6:REST_PORT" in hint and "TRAFFICGEN_OTG_EXT=ixnetwork" in hint
    assert settings["TRAFFICGEN_OTG_LOCATION"] == ""  # not guessed from IxNetwork's Tcl server


def test_the_users_otg_ports_win_over_the_ixia_aliases(tmp_path: Path) -> None:
    settings = conf(tmp_path, IXIA_CONF + "TRAFFICGEN_OTG_PORTS = ['ixc:5555', 'ixc:5556']\n")
    assert configured_ports(settings) == ["ixc:5555", "ixc:5556"]


def test_numbers_from_test_params_and_a_partial_ixia_setting(tmp_path: Path) -> None:
    settings = conf(tmp_path, "TRAFFICGEN_IXIA_HOST = 'chassis1'\n",
                    test_params="TRAFFICGEN_IXIA_CARD=2;TRAFFICGEN_IXIA_PORT1=1;TRAFFICGEN_IXIA_PORT2=2")
    assert configured_ports(settings) == ["chassis1;2;1", "chassis1;2;2"]
    partial = conf(tmp_path, "TRAFFICGEN_IXIA_HOST = 'chassis1'\nTRAFFICGEN_IXIA_PORT1 = '1'\n")
    with pytest.raises(ConfigError, match=r"TRAFFICGEN_IXIA_CARD, TRAFFICGEN_IXIA_PORT2 empty"):
        port_locations(partial, LAB_PORTS)


@pytest.mark.skipif(not UPSTREAM_CUSTOM.is_file(), reason=f"upstream VSPERF conf not found: {UPSTREAM_CUSTOM}")
def test_upstreams_empty_ixia_settings_leave_the_lab_ports() -> None:
    settings = load_settings(conf_file=UPSTREAM_CUSTOM, env={})
    assert configured_ports(settings) == []
    assert port_locations(settings, LAB_PORTS) == ["g0@n0", "g1@n1"]


def test_the_testbeds_cabled_locations_and_the_settings_must_agree(tmp_path: Path) -> None:
    hw = tuple(GenPort(None, "", f"02:76:73:00:00:0{i}", "198.18.0.1", location=f"10.10.0.5;1;{i + 3}")
               for i in range(2))
    assert port_locations(load_settings(env={}), hw) == ["10.10.0.5;1;3", "10.10.0.5;1;4"]
    assert port_locations(conf(tmp_path, IXIA_CONF), hw) == ["10.10.0.5;1;3", "10.10.0.5;1;4"]
    other = conf(tmp_path, IXIA_CONF.replace("'3'", "'7'"))
    with pytest.raises(ConfigError, match=r"differ from the testbed's cabled generator ports"):
        port_locations(other, hw)


def test_the_generator_says_where_its_ports_came_from(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("snappi", reason="pip install 'vsperf[otg]'")
    settings = conf(tmp_path, IXIA_CONF, test_params="TRAFFICGEN_OTG_LOCATION=http://127.0.0.1:9")
    generator = OtgTrafficGenerator(settings, Host.probe())
    with caplog.at_level(logging.INFO):
        generator.start(LAB_PORTS)  # snappi connects lazily: nothing is sent here
    generator._api = None  # nothing to stop
    assert any("port locations 10.10.0.5;1;3, 10.10.0.5;1;4 from VSPERF's TRAFFICGEN_IXIA_HOST" in r.getMessage()
               for r in caplog.records)


def test_otg_server_listens_beyond_loopback_only_when_asked() -> None:
    with pytest.raises(ConfigError, match="--allow-remote"):
        check_listen_address("198.18.0.1")
    assert check_listen_address("198.18.0.1", remote=True) == "198.18.0.1"
    with pytest.raises(ConfigError):
        check_listen_address("0.0.0.0", remote=True)  # every address: never

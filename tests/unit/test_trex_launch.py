"""vsperf.trafficgen.trex.launch: what the trex generator checks on the generator host before
anything is deployed (a testbed's host through its executor, here a recording one), and the
server's config from the deployment's ports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from recorded_host import RecordedHost

from vsperf.config.loader import load_settings
from vsperf.errors import PrerequisiteError
from vsperf.host.host import Host
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.trex import launch

FAKE_CLIENT = str(Path(__file__).parent / "fixtures_trex" / "client")
WHICH_SS = ("sh", "-c", 'command -v "$1"', "sh", "ss")
FIND_LAUNCHER = ("sh", "-c", 'p=$(command -v "$1") && readlink -f "$p"', "sh", "t-rex-64")


def _settings(**values: Any) -> dict[str, Any]:
    settings = dict(load_settings(env={}))
    settings.update({"TRAFFICGEN_TREX_CLIENT_PATH": FAKE_CLIENT, **values})
    return settings


def test_trex_on_the_generator_host_is_checked_there_with_how_to_build_it() -> None:
    gen = RecordedHost("gen", {("test", "-x", "/opt/trex/scripts/_t-rex-64"): [""], WHICH_SS: ["/usr/bin/ss"]})
    launch.check_prerequisites(_settings(TRAFFICGEN_TREX_BASE_DIR="/opt/trex/scripts/"), Host.probe(gen, name="gen"))
    assert ("test", "-x", "/opt/trex/scripts/_t-rex-64") in [argv for argv, _ in gen.commands]
    missing = RecordedHost("gen", {WHICH_SS: ["/usr/bin/ss"]})
    with pytest.raises(PrerequisiteError) as err:
        launch.check_prerequisites(_settings(TRAFFICGEN_TREX_BASE_DIR="/opt/trex/scripts"),
                                   Host.probe(missing, name="gen"))
    assert str(err.value) == (
        "host gen: TRex is not installed (/opt/trex/scripts/_t-rex-64 missing): build TRex v3.0.7 from its source "
        "(docs/trafficgens.rst) and set TRAFFICGEN_TREX_BASE_DIR to its scripts directory, or put its t-rex-64 on "
        "PATH")


def test_trex_on_the_hosts_path_is_found_there() -> None:
    gen = RecordedHost("gen", {FIND_LAUNCHER: ["/opt/t/scripts/t-rex-64\n"], WHICH_SS: ["/usr/bin/ss"],
                               ("test", "-x", "/opt/t/scripts/_t-rex-64"): [""]})
    host = Host.probe(gen, name="gen")
    assert launch.base_dir(_settings(), host) == "/opt/t/scripts"
    launch.check_prerequisites(_settings(), host)
    nothing = Host.probe(RecordedHost("gen", {}), name="gen")
    with pytest.raises(PrerequisiteError, match=r"^host gen: TRex is not installed: build TRex"):
        launch.check_prerequisites(_settings(), nothing)


def test_ss_is_needed_there_to_check_the_servers_ports() -> None:
    gen = RecordedHost("gen", {("test", "-x", "/opt/trex/_t-rex-64"): [""]})
    with pytest.raises(PrerequisiteError, match=r"^host gen: ss is missing: apt-get install iproute2 there$"):
        launch.check_prerequisites(_settings(TRAFFICGEN_TREX_BASE_DIR="/opt/trex"), Host.probe(gen, name="gen"))


def test_a_server_already_running_on_the_generator_host_must_answer_there() -> None:
    gen = RecordedHost("gen", {})  # its open_tcp refuses (an AssertionError would mean it was not asked)
    gen.open_tcp = lambda port, **_: (_ for _ in ()).throw(ConnectionRefusedError("refused"))  # type: ignore[method-assign]
    with pytest.raises(PrerequisiteError, match=r"^no TRex server answers on port 4501 of gen \(refused\): start it "
                                                r"there \(\./t-rex-64 -i\), or set TRAFFICGEN_TREX_START_SERVER true"):
        launch.check_prerequisites(_settings(TRAFFICGEN_TREX_START_SERVER=False), Host.probe(gen, name="gen"))
    assert gen.commands == []  # nothing to find: the server is the user's


def test_the_servers_config_takes_the_ports_as_they_are() -> None:
    ports = (GenPort(None, "eth1", "02:00:00:00:00:01", "198.18.0.1", peer_mac="02:00:00:00:00:02"),
             GenPort(None, "", "02:76:73:00:00:01", "198.18.1.1", peer_mac="02:00:00:00:00:01",
                     location="0000:3b:00.1"))
    cfg = launch.server_config(_settings(TRAFFICGEN_TREX_VDEV_ARGS=""), ports, "vspab12cdt")
    assert cfg.interfaces == ("--vdev=net_af_packet0,iface=eth1", "0000:3b:00.1")  # a location: a PCI address
    assert cfg.dest_macs == ("02:00:00:00:00:02", "02:00:00:00:00:01") and cfg.prefix == "vspab12cdt"

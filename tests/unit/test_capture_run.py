"""TRAFFIC capture: what vsperf captures and where it goes; a generator that cannot hand frames over
is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from vsperf.capture.pcap import CaptureError
from vsperf.capture.run import CaptureConfig, capture_paths, capturing, with_captures
from vsperf.errors import ConfigError
from vsperf.host.host import Host
from vsperf.search.outcome import SearchOutcome


def test_vsperfs_capture_setting() -> None:
    assert CaptureConfig.from_traffic({"capture": {"enabled": False}}, "w") is None
    assert CaptureConfig.from_traffic({}, "w") is None
    config = CaptureConfig.from_traffic({"capture": {"enabled": True, "tx_ports": [], "rx_ports": [1], "count": 5,
                                                     "filter": "vlan 3"}}, "w")
    assert config == CaptureConfig((1,), 5, "vlan 3")
    with pytest.raises(ConfigError, match=r"TRAFFIC capture tx_ports \[0\] \(w\): vsperf captures what a port receives "
                                          r"only .* set tx_ports to \[\]"):
        CaptureConfig.from_traffic({"capture": {"enabled": True, "tx_ports": [0], "rx_ports": [1]}}, "w")
    with pytest.raises(ConfigError, match="enabled without rx_ports"):
        CaptureConfig.from_traffic({"capture": {"enabled": True, "tx_ports": [], "rx_ports": []}}, "w")


def test_files_in_the_results_directory_and_the_result_key(tmp_path: Path) -> None:
    paths = capture_paths(CaptureConfig((0, 1), 3), tmp_path, 2, 128)
    assert paths == {0: tmp_path / "capture_2_128_rx0.pcap", 1: tmp_path / "capture_2_128_rx1.pcap"}
    assert capture_paths(None, tmp_path, 2, 128) == {}
    outcome = with_captures(SearchOutcome({"throughput_rx_fps": 1.0}, ()), paths)
    assert outcome.metrics["capture_rx"] == "capture_2_128_rx0.pcap,capture_2_128_rx1.pcap"


def test_a_generator_that_cannot_hand_frames_over() -> None:
    class Plain:
        NAME = "trafgen"

    with pytest.raises(CaptureError, match="traffic generator trafgen cannot hand frames to a capture"), \
            capturing(Plain(), cast(Host, None), [], {1: Path("/x")}, 1):
        pass
    generator: Any = type("Gen", (), {"pass_count": 0, "NAME": "vsgen"})()
    with capturing(generator, cast(Host, None), [], {}, 4):
        assert generator.pass_count == 4
    assert generator.pass_count == 0

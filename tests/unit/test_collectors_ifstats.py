"""The ifstats collector: port counters over the traffic phase, read with ip in the port's namespace."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest
from recorded_host import RecordedHost

from vsperf.collectors.base import CollectorTarget
from vsperf.collectors.ifstats import GROUP, IfStatsCollector, counter_deltas, parse_ip_link_stats, port_label
from vsperf.errors import CommandError
from vsperf.executor import CommandLog, LocalExecutor
from vsperf.host.workdir import RunContext
from vsperf.traffic.ports import GenPort

IP_JSON = json.dumps([{
    "ifname": "g0",
    "stats64": {
        "rx": {"bytes": 6400, "packets": 100, "errors": 1, "dropped": 2, "over_errors": 0, "multicast": 0},
        "tx": {"bytes": 12800, "packets": 200, "errors": 0, "dropped": 3, "carrier_errors": 0, "collisions": 0},
    },
}])


def test_parse_and_deltas() -> None:
    first = parse_ip_link_stats(IP_JSON)
    assert first == {"rx_packets": 100, "rx_bytes": 6400, "rx_dropped": 2, "rx_errors": 1,
                     "tx_packets": 200, "tx_bytes": 12800, "tx_dropped": 3, "tx_errors": 0}
    last = {k: v + 50 for k, v in first.items()}
    row = counter_deltas(first, last, 2.0)
    assert row["rx_packets"] == 50 and row["tx_dropped"] == 50
    assert row["rx_fps"] == 25.0 and row["tx_fps"] == 25.0
    with pytest.raises(ValueError):
        parse_ip_link_stats("[]")
    assert port_label(1, GenPort("vspns1", "vspg1", "02:00:00:00:00:01", "198.18.0.2")) == "port 1 (vspg1 in vspns1)"


@pytest.mark.skipif(shutil.which("ip") is None, reason="needs iproute2's ip")
def test_counts_frames_on_a_real_interface(tmp_path: Path) -> None:
    # lo in the root namespace needs no root; 200 datagrams to ourselves cross it twice (tx and rx)
    log = tmp_path / "commands.log"
    ctx = RunContext("t", tmp_path, tmp_path, LocalExecutor(CommandLog(log)))
    lo = GenPort(None, "lo", "00:00:00:00:00:00", "127.0.0.1")
    collector = IfStatsCollector({}, ctx, CollectorTarget(ports=(lo,)))
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        receiver.bind(("127.0.0.1", 0))
        with collector:
            for _ in range(200):
                sender.sendto(b"x" * 64, receiver.getsockname())
    finally:
        sender.close()
        receiver.close()
    row = collector.statistics()[GROUP]["port 0 (lo)"]
    assert row["tx_packets"] >= 200 and row["rx_packets"] >= 200  # others may use lo too
    assert row["rx_bytes"] >= 200 * 64
    assert "ip -s -j link show dev lo" in log.read_text()  # logged like every command


def test_a_missing_port_is_an_error(tmp_path: Path) -> None:
    ctx = RunContext("t", tmp_path, tmp_path, LocalExecutor())
    port = GenPort(None, "vsp-no-such-if", "00:00:00:00:00:00", "198.18.0.1")
    collector = IfStatsCollector({}, ctx, CollectorTarget(ports=(port,)))
    with pytest.raises(CommandError):
        collector.start()
    assert collector.statistics() == {}


def test_on_a_testbed_the_generator_hosts_ports_are_read_there(tmp_path: Path) -> None:
    later = IP_JSON.replace('"packets": 100', '"packets": 1100')
    gen = RecordedHost("gen", {("ip", "-s", "-j", "link", "show", "dev", "eth1"): [IP_JSON, later]})
    dut = RecordedHost("dut", {})
    ctx = RunContext("t", tmp_path, tmp_path, LocalExecutor())
    port = GenPort(None, "eth1", "02:00:00:00:00:01", "198.18.0.1")
    collector = IfStatsCollector({}, ctx, CollectorTarget(ports=(port,), dut_host=dut, gen_host=gen))
    with collector:
        pass
    assert collector.statistics()[GROUP]["port 0 (eth1)"]["rx_packets"] == 1000
    assert len(gen.commands) == 2 and dut.commands == []
    assert collector.component().details == {"host": "gen"}
    assert collector.component().version == "ip -s link (iproute2) on host gen"

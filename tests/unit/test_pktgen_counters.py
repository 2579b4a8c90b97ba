"""The generator host's transmit counters, read there on request by one shell loop per namespace of
the interfaces, started through the host (journaled) and ended by the end of its input."""

from __future__ import annotations

import subprocess
from pathlib import Path

import psutil
import pytest
from gen_host import NamedLocalExecutor, generator_host, recorded

from vsperf.errors import TrafficGenError
from vsperf.executor import Command, LocalProcess, Streams
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
from vsperf.trafficgen.pktgen.counters import COUNTERS_SCRIPT, HostCounters

LO = "/sys/class/net/lo/statistics/tx_packets"


@pytest.mark.parametrize("name", ["local", "gen"])
def test_the_hosts_counters_are_read_on_request_and_the_loop_ends_with_its_input(tmp_path: Path,
                                                                                 name: str) -> None:
    with generator_host(tmp_path, name) as host:
        counters = HostCounters(host, [(None, "lo"), (None, "lo")])
        try:
            (entry,) = recorded(host, "process")
            assert entry.name == "pktgen transmit counters"
            assert psutil.Process(entry.pid).cmdline() == ["sh", "-c", COUNTERS_SCRIPT, "sh", LO]  # once
            first = counters.tx_packets()[(None, "lo")]
            assert counters.tx_packets()[(None, "lo")] >= first  # the same loop, read again
        finally:
            counters.close()
        assert not psutil.pid_exists(entry.pid) or psutil.Process(entry.pid).status() == psutil.STATUS_ZOMBIE
        assert recorded(host, "process") == []


@pytest.mark.parametrize("name", ["local", "gen"])
def test_the_counters_of_a_missing_interface_are_an_error_naming_the_host(tmp_path: Path, name: str) -> None:
    where = "" if name == "local" else "host gen: "
    with generator_host(tmp_path, name) as host:
        counters = HostCounters(host, [(None, "vsperf-none0")])
        try:
            with pytest.raises(TrafficGenError, match=rf"^{where}cannot read the transmit counters of vsperf-none0: "):
                counters.tx_packets()
        finally:
            counters.close()
        assert recorded(host, "process") == []


class NamespacesHere(NamedLocalExecutor):
    """This machine as a host whose namespaces are all its own one (the loops run here), keeping
    the namespace each was asked to run in."""

    def __init__(self) -> None:
        super().__init__("gen")
        self.started: list[tuple[str | None, tuple[str, ...]]] = []

    def _start(self, cmd: Command, streams: Streams) -> LocalProcess:
        self.started.append((cmd.netns, cmd.argv))
        return super()._start(Command(cmd.argv, None, cmd.env), streams)

    def _complete(self, cmd: Command, timeout_s: float | None,
                  input_text: str | None) -> subprocess.CompletedProcess[str]:
        return super()._complete(Command(cmd.argv, None, cmd.env), timeout_s, input_text)


def test_one_loop_per_namespace_reads_its_interfaces_together(tmp_path: Path) -> None:
    ex = NamespacesHere()
    host = Host("gen", ex, RunNames("ab12"), Journal("ab12", root=tmp_path))
    counters = HostCounters(host, [("ns0", "lo"), ("ns1", "lo"), ("ns0", "lo")])
    try:
        assert [(netns, argv[4:]) for netns, argv in ex.started] == [("ns0", (LO,)), ("ns1", (LO,))]
        assert [e.name for e in recorded(host, "process")] == ["pktgen transmit counters ns0",
                                                               "pktgen transmit counters ns1"]
        assert set(counters.tx_packets()) == {("ns0", "lo"), ("ns1", "lo")}
    finally:
        counters.close()
    assert recorded(host, "process") == []

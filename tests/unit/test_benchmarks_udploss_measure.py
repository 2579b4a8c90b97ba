"""The UDP message-loss programs, built from their C sources and run on loopback (no root)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from vsperf.benchmarks.build import built_programs
from vsperf.benchmarks.env import BenchEnv
from vsperf.benchmarks.udploss.measure import RECEIVER, SENDER, SOURCES, measure_row
from vsperf.benchmarks.udploss.rows import UdpLossRow
from vsperf.executor import LocalExecutor

pytestmark = pytest.mark.skipif(shutil.which("cc") is None or shutil.which("make") is None,
                                reason="needs a C compiler and make: apt-get install gcc make")


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return built_programs(LocalExecutor(), SOURCES, "udploss", (SENDER, RECEIVER),
                          cache=tmp_path_factory.mktemp("cache"))


def test_build_is_cached_by_source_hash(programs: dict[str, Path], tmp_path: Path) -> None:
    assert programs[SENDER].parent.name.startswith("udploss-")
    before = programs[SENDER].stat().st_mtime_ns
    cache = programs[SENDER].parent.parent
    again = built_programs(LocalExecutor(), SOURCES, "udploss", (SENDER, RECEIVER), cache=cache)
    assert again == programs and again[SENDER].stat().st_mtime_ns == before


# A receive buffer beyond net.core.rmem_max (SO_RCVBUFFORCE) needs root; without it loopback may drop.
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (SO_RCVBUFFORCE) for a lossless buffer")


@needs_root
@pytest.mark.parametrize(("method", "connected"), [("select", False), ("epoll", True), ("thread", False)])
def test_every_message_is_counted_on_loopback(programs: dict[str, Path], tmp_path: Path, method: str,
                                              connected: bool) -> None:
    # 2000 messages into an 8 MiB buffer: loopback does not drop them.
    row = UdpLossRow(rcvbuf_bytes=8 << 20, payload_bytes=200, messages=2000, connected=connected, method=method)
    result = measure_row(BenchEnv(LocalExecutor(), tmp_path), row, 47011, 300, programs)
    assert result.sent_messages == 2000
    assert result.received_messages == 2000 and result.loss_percent == 0.0
    assert result.reordered_messages == 0
    assert result.rcvbuf_effective_bytes >= 8 << 20
    assert result.data_mbps > 0 and result.wire_mbps > result.data_mbps


@needs_root
def test_payloads_below_a_sequence_number_and_above_a_packet(programs: dict[str, Path], tmp_path: Path) -> None:
    for payload in (0, 1500):
        row = UdpLossRow(rcvbuf_bytes=8 << 20, payload_bytes=payload, messages=500)
        result = measure_row(BenchEnv(LocalExecutor(), tmp_path), row, 47012, 300, programs)
        assert result.received_messages == 500, payload

"""The Lua socket client against a stand-in server that answers with replies captured from a
real Pktgen 23.06.1 (fixtures_pktgen/replies_23.06.1.json), byte for byte."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vsperf.errors import TrafficGenError
from vsperf.trafficgen.pktgen import lua, replies
from vsperf.trafficgen.pktgen.client import LuaClient

FIXTURE = Path(__file__).parent / "fixtures_pktgen" / "replies_23.06.1.json"


def captured() -> dict[bytes, bytes]:
    """Request line -> the reply line pktgen sent (first capture of each request)."""
    data: dict[str, Any] = json.loads(FIXTURE.read_text())
    answers: dict[bytes, bytes] = {}
    for x in data["exchanges"]:
        answers.setdefault(lua.request(x["request"]), x["reply"].encode() + b"\n")
    return answers


class Replayer:
    """Accepts one connection; expects the helper line first, then answers captured requests
    (an unknown request gets no answer, as pktgen gives none to a chunk that fails to run)."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.lines: list[bytes] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        answers = captured()
        conn, _ = self.server.accept()
        with conn, conn.makefile("rb") as reader:
            for line in reader:
                self.lines.append(line)
                if line in answers:
                    conn.sendall(answers[line])

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def replayer() -> Iterator[Replayer]:
    server = Replayer()
    yield server
    server.close()


def test_helper_first_then_values(replayer: Replayer) -> None:
    client = LuaClient("127.0.0.1", replayer.port)
    client.connect(5.0)
    assert replies.version(client.call(lua.info())) == "23.06.1 (DPDK 22.11.11)"
    assert client.call(lua.clear_stats()) is None
    assert replayer.lines[0] == lua.HELPER.encode() + b"\n"
    assert replayer.lines[1] == lua.request(lua.info())
    client.close()


def test_error_reply_and_silence(replayer: Replayer) -> None:
    client = LuaClient("127.0.0.1", replayer.port, label="pktgen 0")
    client.connect(5.0)
    with pytest.raises(replies.ReplyError, match="nosuch"):
        client.call("return nosuch()")
    with pytest.raises(TrafficGenError, match=r"pktgen 0 at 127.0.0.1:\d+ did not answer within 0.3 s"):
        client.call("return 'never captured'", timeout_s=0.3)
    with pytest.raises(TrafficGenError, match="not connected"):
        client.call(lua.info())  # a timed-out connection is closed: its stream is out of step


def test_nobody_listening() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(TrafficGenError, match=f"cannot connect to pktgen at 127.0.0.1:{port}"):
        LuaClient("127.0.0.1", port).connect(1.0)


def test_an_opener_replaces_the_tcp_connection(replayer: Replayer) -> None:
    # On a testbed the channel is an SSH forward; here, any socket-like connection will do.
    opened: list[float] = []

    def opener(timeout_s: float) -> socket.socket:
        opened.append(timeout_s)
        return socket.create_connection(("127.0.0.1", replayer.port), timeout=timeout_s)

    client = LuaClient("127.0.0.1", 1, label="pktgen 0 on host gen", opener=opener)  # port 1: never dialled
    client.connect(3.0)
    assert opened == [3.0]
    assert replies.version(client.call(lua.info())) == "23.06.1 (DPDK 22.11.11)"
    assert replayer.lines[0] == lua.HELPER.encode() + b"\n"
    client.close()


def test_a_refusing_opener_is_retried_then_reported() -> None:
    calls: list[float] = []

    def opener(timeout_s: float) -> socket.socket:
        calls.append(timeout_s)
        raise ConnectionRefusedError("host gen: SSH forward to 127.0.0.1:22022 refused")

    expected = r"cannot connect to pktgen 0 at 127\.0\.0\.1:22022: host gen: SSH forward"
    with pytest.raises(TrafficGenError, match=expected):
        LuaClient("127.0.0.1", 22022, label="pktgen 0", opener=opener).connect(1.0, retry_until_s=0.3)
    assert len(calls) >= 2

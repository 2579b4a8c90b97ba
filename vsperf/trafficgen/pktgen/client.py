"""A connection to Pktgen-DPDK's Lua socket (`-G`/`-g host:port`), one request at a time.

A pktgen vsperf started listens on its host's loopback, in the namespace of its ports, reached
through the host's executor (`opener`: `Executor.open_tcp`, a socket opened in that namespace on
this machine, a channel of the SSH connection on a testbed host; see
vsperf.trafficgen.pktgen.process). A pktgen the user started is reached at its address directly.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import time
from collections.abc import Callable
from typing import Any, Protocol

from vsperf.errors import TrafficGenError
from vsperf.executor import in_netns
from vsperf.trafficgen.pktgen import lua
from vsperf.trafficgen.pktgen.replies import parse_reply

log = logging.getLogger(__name__)

_MAX_REPLY_BYTES = 4 * 1024 * 1024


class LuaSocket(Protocol):
    """What the client needs of its connection: a socket, or an SSH channel (paramiko.Channel)."""

    def sendall(self, data: bytes) -> None: ...

    def recv(self, size: int) -> bytes: ...

    def settimeout(self, timeout: float | None) -> None: ...

    def close(self) -> None: ...


def _connect(host: str, port: int, timeout_s: float) -> socket.socket:
    return socket.create_connection((host, port), timeout=timeout_s)


def connect_in_netns(netns: str | None, host: str, port: int, timeout_s: float) -> socket.socket:
    """A TCP connection to host:port opened inside namespace `netns` (None: this one)."""
    if netns is None:
        return _connect(host, port, timeout_s)
    return in_netns(netns, lambda: _connect(host, port, timeout_s))


class LuaClient:
    """Sends Lua chunks to one pktgen and returns what they `return` (see vsperf.trafficgen.pktgen.lua)."""

    def __init__(self, host: str, port: int, *, netns: str | None = None, label: str = "pktgen",
                 opener: Callable[[float], LuaSocket] | None = None) -> None:
        self.host = host
        self.port = port
        self.netns = netns
        self.label = label
        self.opener = opener  # None: a TCP connection to host:port (in `netns`); OSError when refused
        self._sock: LuaSocket | None = None
        self._buffer = b""
        self.transcript: list[tuple[str, bytes]] = []  # (request, raw reply) when recording
        self.record = False

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}" + (f" in namespace {self.netns}" if self.netns else "")

    def connect(self, timeout_s: float, *, retry_until_s: float = 0.0) -> None:
        """Connect and install the reply helper; retry refused connections for `retry_until_s`."""
        deadline = time.monotonic() + retry_until_s
        while True:
            try:
                self._sock = (self.opener(timeout_s) if self.opener is not None
                              else connect_in_netns(self.netns, self.host, self.port, timeout_s))
                break
            except OSError as exc:
                if time.monotonic() >= deadline:
                    raise TrafficGenError(f"cannot connect to {self.label} at {self.where}: {exc}") from exc
                time.sleep(0.2)
        self._sock.sendall(lua.HELPER.encode() + b"\n")

    def call(self, code: str, timeout_s: float = 10.0) -> Any:
        """Run `code` in pktgen; its returned value, or TrafficGenError/ReplyError."""
        if self._sock is None:
            raise TrafficGenError(f"{self.label}: not connected")
        line = lua.request(code)
        try:
            self._sock.settimeout(timeout_s)
            self._sock.sendall(line)
            raw = self._read_line()
        except OSError as exc:  # socket.timeout included
            self.close()
            raise TrafficGenError(
                f"{self.label} at {self.where} did not answer within {timeout_s:g} s ({exc}): {code[:120]}"
            ) from exc
        if self.record:
            self.transcript.append((code, raw))
        return parse_reply(raw)

    def _read_line(self) -> bytes:
        assert self._sock is not None
        while b"\n" not in self._buffer:
            chunk = self._sock.recv(65536)
            if not chunk:
                raise ConnectionError("pktgen closed the connection")
            self._buffer += chunk
            if len(self._buffer) > _MAX_REPLY_BYTES:
                raise ConnectionError("reply larger than 4 MiB")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def close(self) -> None:
        """Close the connection (pktgen keeps running and accepts the next one)."""
        sock, self._sock = self._sock, None
        self._buffer = b""
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()

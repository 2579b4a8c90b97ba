"""A loopback port forwarding each connection to what an opener reaches (Forwarder)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from vsperf.trafficgen.trex.forward import Forwarder, Stream


@pytest.fixture
def echo() -> Iterator[int]:
    """A TCP echo server on 127.0.0.1 (its port)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=lambda c=conn: [c.sendall(d) for d in iter(lambda: c.recv(4096), b"")],
                             daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    yield int(server.getsockname()[1])
    server.close()


def opener_to(port: int) -> Callable[[float], Stream]:
    def open_(timeout_s: float) -> Stream:
        return socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
    return open_


def test_bytes_go_both_ways_on_several_connections(echo: int) -> None:
    forwarder = Forwarder(opener_to(echo), "test")
    try:
        assert forwarder.port != echo
        clients = [socket.create_connection(("127.0.0.1", forwarder.port), timeout=5) for _ in range(3)]
        for i, client in enumerate(clients):
            payload = bytes([i]) * 100_000
            client.sendall(payload)
            got = b""
            while len(got) < len(payload):
                got += client.recv(65536)
            assert got == payload
        for client in clients:
            client.close()
    finally:
        forwarder.close()


def test_a_refused_far_end_closes_the_connection_at_once() -> None:
    def refuse(timeout_s: float) -> Stream:
        raise ConnectionRefusedError("nothing there")

    forwarder = Forwarder(refuse, "test")
    try:
        with socket.create_connection(("127.0.0.1", forwarder.port), timeout=5) as client:
            client.settimeout(5)
            assert client.recv(1) == b""
    finally:
        forwarder.close()


def test_it_listens_on_the_loopback_only_and_close_ends_it(echo: int) -> None:
    forwarder = Forwarder(opener_to(echo), "test")
    assert forwarder._listener.getsockname()[0] == "127.0.0.1"
    client = socket.create_connection(("127.0.0.1", forwarder.port), timeout=5)
    client.sendall(b"x")
    assert client.recv(1) == b"x"
    forwarder.close()
    client.settimeout(5)
    assert client.recv(1) == b""  # the forwarded connection is closed too
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", forwarder.port), timeout=1)
    forwarder.close()  # twice is fine

"""A TCP port of this machine's loopback that carries each connection to a port only a host (or
a network namespace) reaches: what `ssh -L 127.0.0.1:LOCAL:127.0.0.1:PORT` does.

TRex's client opens plain TCP connections (ZeroMQ) to the server's RPC and event ports; they
listen on the server's host. vsperf listens on 127.0.0.1 only (nothing is opened to the
network) and, for each connection its worker makes, opens the other end with `opener`: a TCP
connection inside the lab's namespace, or a `direct-tcpip` channel of the SSH connection vsperf
already has to the host. Bytes are copied both ways by one thread per connection.
"""

from __future__ import annotations

import contextlib
import logging
import selectors
import socket
import threading
from collections.abc import Callable
from typing import Protocol

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
_CHUNK = 65536


class Stream(Protocol):
    """The far end of a forwarded connection: a socket or a paramiko Channel."""

    def fileno(self) -> int: ...

    def sendall(self, data: bytes) -> None: ...

    def recv(self, size: int) -> bytes: ...

    def close(self) -> None: ...


Opener = Callable[[float], Stream]  # opens the far end (timeout in s); OSError when refused


class Forwarder:
    """127.0.0.1:`port` on this machine -> whatever `opener` reaches; `close` ends it all."""

    def __init__(self, opener: Opener, label: str, *, timeout_s: float = 10.0) -> None:
        self.opener = opener
        self.label = label
        self.timeout_s = timeout_s
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((LOOPBACK, 0))
        self._listener.listen(8)
        self._listener.settimeout(0.2)  # accept() wakes up to see `close`
        self.port: int = self._listener.getsockname()[1]
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._open: list[tuple[socket.socket, Stream]] = []
        self._thread = threading.Thread(target=self._accept, name=f"forward {label}", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed
            conn.settimeout(None)
            try:
                far = self.opener(self.timeout_s)
            except OSError:  # refused: the local connection closes at once (what a client sees)
                conn.close()
                continue
            with self._lock:
                if self._closed.is_set():
                    conn.close()
                    far.close()
                    return
                self._open.append((conn, far))
            threading.Thread(target=self._pump, args=(conn, far), name=f"pump {self.label}", daemon=True).start()

    def _pump(self, conn: socket.socket, far: Stream) -> None:
        with selectors.DefaultSelector() as sel:
            sel.register(conn, selectors.EVENT_READ, far)
            sel.register(far.fileno(), selectors.EVENT_READ, conn)
            try:
                while not self._closed.is_set():
                    for key, _ in sel.select(timeout=0.5):
                        source: Stream = conn if key.data is far else far
                        data = source.recv(_CHUNK)
                        if not data:
                            return
                        key.data.sendall(data)
            except OSError:
                return
            finally:
                self._drop(conn, far)

    def _drop(self, conn: socket.socket, far: Stream) -> None:
        with self._lock:
            if (conn, far) in self._open:
                self._open.remove((conn, far))
        for end in (conn, far):
            with contextlib.suppress(OSError, EOFError):
                end.close()

    def probe(self, timeout_s: float) -> None:
        """Open the far end once and close it: OSError when it cannot be reached."""
        self.opener(timeout_s).close()

    def close(self) -> None:
        """Stop listening and close every forwarded connection. Safe to call twice."""
        self._closed.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # stops listening now, whatever accept() does
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            pairs, self._open = list(self._open), []
        for conn, far in pairs:
            for end in (conn, far):
                with contextlib.suppress(OSError, EOFError):
                    end.close()

"""A guest's serial console: QEMU appends its output to a log file, and serves a unix socket.

vsperf reads the log (it holds everything since boot, whether or not anyone is connected) and
waits there for patterns (the image's marker line, a login prompt, a shell prompt); it writes
to the socket only to drive a user's image (login, commands), as VSPERF did over its console.
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from vsperf.errors import DeploymentError

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\r")
_POLL_S = 0.1


def clean(text: str) -> str:
    """Console output without terminal escape sequences and carriage returns."""
    return _ANSI_RE.sub("", text)


def last_lines(text: str, count: int) -> list[str]:
    """The last `count` non-empty lines of console output, cleaned."""
    lines = [line.rstrip() for line in clean(text).splitlines() if line.strip()]
    return lines[-count:]


@dataclass(frozen=True)
class ConsoleMatch:
    """Which of the awaited patterns matched, and where the console output is now."""

    index: int
    match: re.Match[str]
    offset: int  # characters of log read so far: the next wait starts here


class GuestDied(DeploymentError):
    """The guest's QEMU exited while vsperf waited on its console."""


class ConsoleTimeout(DeploymentError):
    """The awaited console output did not come in time."""


class SerialConsole:
    """The serial console of one guest (QEMU's socket + log file)."""

    def __init__(self, socket_path: Path, log_path: Path, label: str) -> None:
        self.socket_path = socket_path
        self.log_path = log_path
        self.label = label
        self._sock: socket.socket | None = None

    def text(self) -> str:
        """Everything the guest printed so far."""
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def tail(self, count: int = 12) -> str:
        """The last lines of the console, one string (for error messages)."""
        lines = last_lines(self.text(), count)
        return "\n    ".join(lines) if lines else "(nothing on the console)"

    def wait_for(
        self,
        patterns: Sequence[str | re.Pattern[str]],
        *,
        timeout_s: float,
        alive: Callable[[], bool],
        offset: int = 0,
        what: str = "",
    ) -> ConsoleMatch:
        """Wait until one of `patterns` appears after `offset` in the console output.

        Raises GuestDied when `alive()` turns false first, ConsoleTimeout after `timeout_s`,
        both with the console's last lines.
        """
        compiled = [re.compile(p) if isinstance(p, str) else p for p in patterns]
        deadline = time.monotonic() + timeout_s
        while True:
            text = clean(self.text())
            for index, pattern in enumerate(compiled):
                match = pattern.search(text, offset)
                if match is not None:
                    return ConsoleMatch(index, match, match.end())
            if not alive():
                raise GuestDied(f"{self.label} exited while waiting for {what or 'its console'}; "
                                f"console:\n    {self.tail()}")
            self._drain()
            if time.monotonic() > deadline:
                raise ConsoleTimeout(f"{self.label}: no {what or 'expected output'} within {timeout_s:g} s "
                                     f"(GUEST_TIMEOUT); last console lines:\n    {self.tail()}")
            time.sleep(_POLL_S)

    def send_line(self, line: str) -> None:
        """Type `line` and Enter on the console."""
        if self._sock is None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(str(self.socket_path))
            except OSError as exc:
                sock.close()
                raise DeploymentError(f"{self.label}: cannot connect to the serial console "
                                      f"{self.socket_path}: {exc}") from exc
            self._sock = sock
        self._sock.sendall(line.encode() + b"\r")
        self._drain()

    def _drain(self) -> None:
        """Read and drop what QEMU sent to the socket since the last call (vsperf reads the log).

        QEMU writes the guest's output to the connected socket one byte per write; unread, the
        socket's buffer is full after a few hundred bytes and QEMU then holds the guest's serial
        output, the log file's included: the guest's shell seems to hang mid-line.
        """
        while self._sock is not None:
            try:
                if not self._sock.recv(65536, socket.MSG_DONTWAIT):
                    return  # QEMU closed the socket: the guest is gone, wait_for says so
            except OSError:  # nothing more to read now (BlockingIOError), or the socket is gone
                return

    def close(self) -> None:
        """Disconnect from the socket (the guest keeps running)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

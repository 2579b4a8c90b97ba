"""A guest's serial console: QEMU's stdio, carried by the pipes of its process.

QEMU runs with its serial port on its stdin/stdout (`-chardev stdio`); the executor that started
it hands back those pipes, on this machine or over the process's SSH channel on a testbed host
(nothing but QEMU is needed on that host). A reader thread copies everything the guest prints
into the console log on this machine (the results directory) as it comes, so QEMU never blocks
on an unread pipe and the log survives even a killed run; vsperf waits in that log for
patterns (the image's marker line, a login prompt, a shell prompt) and types into stdin only to
drive a user's image (login, commands), as VSPERF did over its console.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

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
    """The serial console of one guest: its log file on this machine, fed from QEMU's stdout."""

    def __init__(self, log_path: Path, label: str) -> None:
        self.log_path = log_path
        self.label = label
        self._stdin: IO[bytes] | None = None
        self._reader: threading.Thread | None = None

    def attach(self, stdin: IO[bytes] | None, stdout: IO[bytes] | None) -> None:
        """Start copying `stdout` (QEMU's) into the log; `stdin` is where `send_line` types."""
        self._stdin = stdin
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path.touch()
        if stdout is not None:
            self._reader = threading.Thread(target=self._copy, args=(stdout,), daemon=True,
                                            name=f"console-{self.label}")
            self._reader.start()

    def _copy(self, stdout: IO[bytes]) -> None:
        # read1 returns what has arrived (a local pipe); an SSH channel's file returns buffered
        # bytes one by one without waiting for more: a prompt without a newline is seen at once.
        read = getattr(stdout, "read1", None) or (lambda _size: stdout.read(1))
        with self.log_path.open("ab", buffering=0) as log:
            while True:
                try:
                    chunk = read(65536)
                except (OSError, EOFError, ValueError):  # the pipe or channel is gone
                    return
                if not chunk:
                    return  # QEMU exited (or closed its stdout)
                log.write(chunk)

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
                if self._reader is not None:
                    self._reader.join(timeout=1.0)  # QEMU's last output, for the message
                raise GuestDied(f"{self.label} exited while waiting for {what or 'its console'}; "
                                f"console:\n    {self.tail()}")
            if time.monotonic() > deadline:
                raise ConsoleTimeout(f"{self.label}: no {what or 'expected output'} within {timeout_s:g} s "
                                     f"(GUEST_TIMEOUT); last console lines:\n    {self.tail()}")
            time.sleep(_POLL_S)

    def send_line(self, line: str) -> None:
        """Type `line` and Enter on the console."""
        if self._stdin is None:
            raise DeploymentError(f"{self.label}: the serial console is not connected")
        try:
            self._stdin.write(line.encode() + b"\r")
            self._stdin.flush()
        except (OSError, EOFError, ValueError) as exc:
            raise DeploymentError(f"{self.label}: cannot type on the serial console: {exc}") from exc

    def close(self) -> None:
        """Stop typing (QEMU's stdin is closed) and let the reader finish once QEMU has gone."""
        if self._stdin is not None:
            with contextlib.suppress(OSError, EOFError, ValueError):
                self._stdin.close()
            self._stdin = None
        if self._reader is not None:
            self._reader.join(timeout=2.0)
            self._reader = None

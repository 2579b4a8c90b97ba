"""One QEMU guest's life: start, wait until it forwards, check it lives, stop it by PID.

Two kinds of guest:
- vsperf's image (vsperf.vnf.qemu.image): the loopback is on the kernel command line; the
  guest's /init prints a marker line when it forwards (or one when it failed);
- a user's GUEST_IMAGE: booted with -snapshot; vsperf logs in on the serial console
  (GUEST_USERNAME, GUEST_PASSWORD, GUEST_PROMPT_LOGIN/PASSWORD, GUEST_PROMPT) and types the
  loopback's commands (`GuestScript`), as VSPERF did.

QEMU runs on the VNF's host (`vsperf.host.Host`: this machine, or a testbed's DUT
host over SSH) with its serial console on its stdio; vsperf copies the console into the results
directory on this machine as it comes (`guest<N>-console.log`, numbered on when a run boots the
same guest again), so it survives even a killed run; QEMU's own messages (stderr) go to a log
file on its host.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path

from vsperf.errors import DeploymentError
from vsperf.host.host import Host
from vsperf.host.process import HostProcess
from vsperf.vnf.qemu.console import SerialConsole
from vsperf.vnf.qemu.init_script import FAILED_MARKER, READY_MARKER
from vsperf.vnf.qemu.qemu import QemuConfig, qemu_argv

log = logging.getLogger(__name__)
_STOP_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class LoginPrompts:
    """How a user's image asks for login, password, and shows its shell prompt (regexes)."""

    username: str
    password: str
    login_prompt: str
    password_prompt: str
    shell_prompt: str


@dataclass(frozen=True)
class GuestScript:
    """Shell commands typed into a user's image after login, each awaited by the shell prompt."""

    commands: tuple[str, ...]
    ready_pattern: str = ""  # after the last command; empty: the shell prompt


def console_log_path(results_dir: Path, index: int) -> Path:
    """The first free `guest<index>-console[-N].log` in the results directory."""
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"guest{index}-console.log"
    number = 1
    while path.exists():
        number += 1
        path = results_dir / f"guest{index}-console-{number}.log"
    return path


class QemuGuest:
    """A running QEMU process and its serial console."""

    def __init__(self, host: Host, label: str, cfg: QemuConfig, *, netns: str | None,
                 console_log: Path) -> None:
        self.host = host
        self.label = label
        self.cfg = cfg
        self.netns = netns
        self.console = SerialConsole(console_log, label)
        self.proc: HostProcess | None = None
        self.boot_time_s = 0.0
        self._started = 0.0

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self) -> None:
        """Start QEMU on its host (recorded there by PID and start time, so a killed run's guest
        is stopped by the next run), its console attached."""
        self._started = time.monotonic()
        self.proc = self.host.spawn(
            self.label, qemu_argv(self.cfg), netns=self.netns,
            log_path=self.host.log_path(f"{self.label.replace(' ', '-')}.qemu.log"), pipes=True,
        )
        self.console.attach(self.proc.stdin, self.proc.stdout)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.alive()

    def wait_forwarding(self, timeout_s: float) -> None:
        """Wait for the image's marker line: raise DeploymentError (with the console) otherwise."""
        try:
            found = self.console.wait_for(
                [re.escape(READY_MARKER) + r".*", re.escape(FAILED_MARKER) + r".*"],
                timeout_s=timeout_s, alive=self._alive_or_report, what="forwarding marker",
            )
        except DeploymentError as exc:
            # QEMU's own output says why a guest never printed anything (e.g. no vhost-user peer).
            qemu = self.proc.log_tail(3) if self.proc is not None else ""
            raise type(exc)(f"{exc}\n    QEMU: {qemu}" if qemu else str(exc)) from exc
        if found.index == 1:
            raise DeploymentError(f"{self.label}: the guest's loopback failed: {found.match.group(0)}; "
                                  f"console:\n    {self.console.tail()}")
        self.boot_time_s = time.monotonic() - self._started
        log.info("%s forwards (%s) %.1f s after start", self.label, found.match.group(0), self.boot_time_s)

    def login_and_run(self, prompts: LoginPrompts, script: GuestScript, timeout_s: float) -> None:
        """Log in on a user's image and type `script`, each command awaited by the prompt."""
        deadline = time.monotonic() + timeout_s

        def left() -> float:
            return max(1.0, deadline - time.monotonic())

        seen = self.console.wait_for([prompts.login_prompt], timeout_s=left(), alive=self._alive_or_report,
                                     what="login prompt (GUEST_PROMPT_LOGIN)")
        self.console.send_line(prompts.username)
        seen = self.console.wait_for([prompts.password_prompt, prompts.shell_prompt], timeout_s=left(),
                                     alive=self._alive_or_report, offset=seen.offset, what="password prompt")
        if seen.index == 0:
            self.console.send_line(prompts.password)
            seen = self.console.wait_for([prompts.shell_prompt], timeout_s=left(), alive=self._alive_or_report,
                                         offset=seen.offset, what="shell prompt (GUEST_PROMPT)")
        for command in script.commands:
            self.console.send_line(command)
            seen = self.console.wait_for([prompts.shell_prompt], timeout_s=left(), alive=self._alive_or_report,
                                         offset=seen.offset, what=f"prompt after {command!r}")
        if script.ready_pattern:
            self.console.wait_for([script.ready_pattern], timeout_s=left(), alive=self._alive_or_report,
                                  offset=0, what="loopback start")
        self.boot_time_s = time.monotonic() - self._started

    def _alive_or_report(self) -> bool:
        return self.alive()

    def check_alive(self) -> None:
        """DeploymentError naming the guest, its exit and its last console lines, once QEMU exited."""
        if self.proc is None or self.proc.alive():
            return
        code = self.proc.returncode()
        how = f"exit code {code}" if code is not None and code >= 0 else f"signal {-(code or 0)}"
        raise DeploymentError(
            f"{self.label} (pid {self.proc.pid}) died ({how}); QEMU: {self.proc.log_tail(3) or '-'}; "
            f"console:\n    {self.console.tail(6)}"
        )

    def stop(self) -> None:
        """Stop QEMU by PID (idempotent); the console log stays where it is (the results)."""
        if self.proc is not None:
            self.host.stop_process(self.proc, timeout_s=_STOP_TIMEOUT_S)
            self.proc = None
        self.console.close()

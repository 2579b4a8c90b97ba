"""The pty launcher pktgen runs under: a terminal of its own on stdin, run by the host's python3
as a plain file (standard library only: on a testbed host it is a copy in the run's directory)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from vsperf.trafficgen.pktgen import ptyexec

PTYEXEC = Path(ptyexec.__file__)


def test_ptyexec_gives_the_program_a_terminal_on_stdin(tmp_path: Path) -> None:
    """pktgen exits at once without a terminal on stdin; `test -t 0` checks for one."""
    alone = shutil.copy(PTYEXEC, tmp_path / "ptyexec.py")  # as staged on a host: no vsperf beside it
    run = subprocess.run(["python3", str(alone), "test", "-t", "0"], stdin=subprocess.DEVNULL, timeout=30,
                         check=False)
    assert run.returncode == 0
    plain = subprocess.run(["test", "-t", "0"], stdin=subprocess.DEVNULL, check=False)
    assert plain.returncode == 1


def test_ptyexec_reports_a_missing_program() -> None:
    run = subprocess.run(["python3", str(PTYEXEC), "/nonexistent/pktgen"], capture_output=True, text=True,
                         timeout=30, check=False)
    assert run.returncode == 127
    assert "cannot run /nonexistent/pktgen" in run.stderr


def test_ptyexec_without_a_program_says_how_to_use_it() -> None:
    run = subprocess.run(["python3", str(PTYEXEC)], capture_output=True, text=True, timeout=30, check=False)
    assert run.returncode == 2 and run.stderr == "usage: python3 ptyexec.py PROGRAM [ARGS...]\n"

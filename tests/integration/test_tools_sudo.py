"""tools/lab.sh and tools/test.sh (the README's two commands) as a non-root user: they start again
under sudo when it is installed, and say in one line that root is needed when it is not. (As root
they run as they are: that path is the scripts' whole job, exercised by running them.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.root

ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534


@pytest.fixture(autouse=True)
def _needs_root_and_setpriv() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (to run the scripts as user nobody)")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv missing: apt-get install util-linux")
    if not os.access(ROOT / "tools" / "lab.sh", os.R_OK):
        pytest.skip("the checkout is not readable")


def as_nobody(script: str, path: str, *args: str) -> subprocess.CompletedProcess[str]:
    argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
            "env", f"PATH={path}", "bash", str(ROOT / "tools" / script), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd="/")


@pytest.mark.parametrize("script", ["lab.sh", "test.sh"])
def test_non_root_without_sudo_says_root_is_needed(script: str) -> None:
    proc = as_nobody(script, "/usr/bin:/bin", "--list")
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"{script}: needs root: run it as root (sudo is not installed)"


@pytest.fixture
def fake_sudo() -> Iterator[Path]:
    """A folder user nobody can read holding a `sudo` that prints how it was called (pytest's
    tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="vsperf-sudo-"))
    try:
        folder.chmod(0o755)
        (folder / "sudo").write_text('#!/bin/sh\necho "sudo $*"\n')
        (folder / "sudo").chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("script", ["lab.sh", "test.sh"])
def test_non_root_with_sudo_runs_again_under_sudo(script: str, fake_sudo: Path) -> None:
    proc = as_nobody(script, f"{fake_sudo}:/usr/bin:/bin", "-t", "a b")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"sudo -- {ROOT / 'tools' / script} -t a b"

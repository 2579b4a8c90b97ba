"""`vsperf otg-server` as a test's process: started, its URL read from its first line, stopped by
its PID with SIGTERM (test_otg_lab.py on this machine, test_testbed_otg.py in a host's namespace)."""

from __future__ import annotations

import contextlib
import selectors
import signal
import subprocess
from collections.abc import Iterator, Mapping, Sequence

import psutil
import pytest


@contextlib.contextmanager
def otg_server_process(argv: Sequence[str], url_prefix: str, env: Mapping[str, str]) -> Iterator[str]:
    """Run `argv` (a `vsperf otg-server` command, possibly behind `ip netns exec NS`, which execs
    it: the PID is the server's), yield the URL it serves on (it must start with `url_prefix`),
    then stop it by PID and check that it left no process behind."""
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(env),
                            start_new_session=True)
    try:
        assert proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            ready = sel.select(timeout=60)
        line = proc.stdout.readline() if ready else ""
        assert f"serving OTG on {url_prefix}" in line, \
            f"{line!r} {proc.stderr.read() if proc.stderr and proc.poll() is not None else ''}"
        yield line.split(" on ", 1)[1].split()[0]
    finally:
        children = [p.pid for p in psutil.Process(proc.pid).children(recursive=True)] if proc.poll() is None else []
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail("vsperf otg-server did not stop on SIGTERM")
        alive = [pid for pid in children if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]
        assert alive == [], f"otg-server left processes {alive}"

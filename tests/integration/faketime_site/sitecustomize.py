"""Loaded first (PYTHONPATH, see pool_beds.clock_env) by a vsperf whose clock libfaketime shifts.

libfaketime 0.9.10 fails Python's `time.sleep` (EINVAL: an absolute clock_nanosleep on
CLOCK_MONOTONIC) while a thread's wait with a timeout works. paramiko sleeps while it
authenticates, and vsperf while it stops processes: under the faked clock those failed at
random (a connection made while the host had not answered yet). Here `time.sleep` waits as
long on an event: the run sleeps as it would on a real clock, only its wall clock is off."""

import threading
import time


def _sleep(seconds: float) -> None:
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    threading.Event().wait(seconds)


time.sleep = _sleep

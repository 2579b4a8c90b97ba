"""`python3 ptyexec.py PROGRAM ARGS...`: exec PROGRAM with a fresh pseudo-terminal as its
standard input (standard library only: the generator host's python3 runs this file, staged there
by `vsperf.trafficgen.pktgen.process`).

Pktgen-DPDK refuses to start without a terminal on stdin (its screen constructor calls
tcgetattr and exits: "scrn_constructor: tcgetattr failed"), and a terminal it does get, it
puts in raw mode. vsperf must neither hand it the user's terminal nor depend on one, so this
gives it a terminal of its own. The master end stays open in the exec'ed program itself
(inherited descriptor), so the terminal never hangs up while pktgen runs, and nothing is
ever typed into it. exec keeps the PID: vsperf stops the program by the PID it spawned.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> int:
    """Exec argv[0] (searched on PATH) with a new pty on fd 0; returns only on failure."""
    if not argv:
        print("usage: python3 ptyexec.py PROGRAM [ARGS...]", file=sys.stderr)
        return 2
    master, slave = os.openpty()
    os.set_inheritable(master, True)
    os.dup2(slave, 0)
    os.close(slave)
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        print(f"cannot run {argv[0]}: {exc}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
